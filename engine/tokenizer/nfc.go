package tokenizer

import (
	"sort"
	"sync"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Unicode normalization that follows UAX #15 exactly, as JavaScript's
// String.prototype.normalize does. golang.org/x/text/unicode/norm
// implements the Stream-Safe Text Format: after 30 consecutive
// non-starters it inserts U+034F (CGJ) and reorders each 30-mark chunk on
// its own, so its NFC of "a" followed by 40 combining acutes differs from
// every other implementation. x/text is used wherever its result is exact
// (no long run of non-starters can occur); otherwise the text goes through
// exactNormalize, which decomposes, reorders whole runs of non-starters and
// (for NFC/NFKC) recomposes, with x/text's per-character data.

// needsExact reports whether x/text might apply its stream-safe limit to s.
func needsExact(f norm.Form, s string) bool {
	run, perChar := 0, 3
	if f == norm.NFKC || f == norm.NFKD {
		perChar = 18
	}
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			run = 0
			i++
			continue
		}
		p := f.PropertiesString(s[i:])
		n := p.Size()
		if n == 0 {
			n = 1
		}
		if p.CCC() != 0 || p.LeadCCC() != 0 || p.TrailCCC() != 0 || len(p.Decomposition()) > 0 {
			run++
			// Each such character brings at most 3 non-starters in a
			// canonical decomposition (≤ 4 characters), at most 18 in a
			// compatibility one: stay below x/text's 30.
			if run*perChar >= 30 {
				return true
			}
		} else {
			run = 0
		}
		i += n
	}
	return false
}

// normalizeForm applies one normalization form exactly.
func normalizeForm(f norm.Form, s string) string {
	if needsExact(f, s) {
		return exactNormalize(f, s)
	}
	if f.IsNormalString(s) {
		return s
	}
	return f.String(s)
}

const (
	hangulSBase, hangulLBase, hangulVBase, hangulTBase = 0xAC00, 0x1100, 0x1161, 0x11A7
	hangulLCount, hangulVCount, hangulTCount           = 19, 21, 28
	hangulNCount                                       = hangulVCount * hangulTCount
	hangulSCount                                       = hangulLCount * hangulNCount
)

func ccc(r rune) uint8 {
	var b [utf8.UTFMax]byte
	n := utf8.EncodeRune(b[:], r)
	return norm.NFD.Properties(b[:n]).CCC()
}

// exactNormalize is UAX #15 normalization: full decomposition (canonical for
// NFC/NFD, compatibility for NFKC/NFKD), canonical ordering of every run of
// non-starters, then canonical composition for NFC/NFKC.
func exactNormalize(f norm.Form, s string) string {
	dec := norm.NFD
	if f == norm.NFKC || f == norm.NFKD {
		dec = norm.NFKD
	}
	rs := make([]rune, 0, len(s))
	var buf [utf8.UTFMax]byte
	for _, r := range s {
		if r >= hangulSBase && r < hangulSBase+hangulSCount {
			si := r - hangulSBase
			rs = append(rs, hangulLBase+si/hangulNCount, hangulVBase+(si%hangulNCount)/hangulTCount)
			if t := si % hangulTCount; t != 0 {
				rs = append(rs, hangulTBase+t)
			}
			continue
		}
		n := utf8.EncodeRune(buf[:], r)
		if d := dec.Properties(buf[:n]).Decomposition(); len(d) > 0 {
			for _, x := range string(d) {
				rs = append(rs, x)
			}
		} else {
			rs = append(rs, r)
		}
	}
	// Canonical ordering: stable sort of each maximal run of non-starters.
	cc := make([]uint8, len(rs))
	for i, r := range rs {
		cc[i] = ccc(r)
	}
	for i := 0; i < len(rs); {
		if cc[i] == 0 {
			i++
			continue
		}
		j := i
		for j < len(rs) && cc[j] != 0 {
			j++
		}
		sort.Stable(byCCC{rs[i:j], cc[i:j]})
		i = j
	}
	if f == norm.NFD || f == norm.NFKD {
		return string(rs)
	}
	// Canonical composition.
	comp := compositions()
	starter := -1
	out := rs[:0]
	occ := cc[:0]
	for i, r := range rs {
		c := cc[i]
		if starter >= 0 {
			last := occ[len(occ)-1]
			blocked := len(out)-1 != starter && (last == 0 || last >= c)
			if !blocked {
				if x, ok := compose(comp, out[starter], r); ok {
					out[starter] = x
					continue
				}
			}
		}
		if c == 0 {
			starter = len(out)
		}
		out = append(out, r)
		occ = append(occ, c)
	}
	return string(out)
}

type byCCC struct {
	r []rune
	c []uint8
}

func (b byCCC) Len() int           { return len(b.r) }
func (b byCCC) Less(i, j int) bool { return b.c[i] < b.c[j] }
func (b byCCC) Swap(i, j int) {
	b.r[i], b.r[j] = b.r[j], b.r[i]
	b.c[i], b.c[j] = b.c[j], b.c[i]
}

func compose(comp map[[2]rune]rune, a, b rune) (rune, bool) {
	// Hangul LV and LVT.
	if a >= hangulLBase && a < hangulLBase+hangulLCount && b >= hangulVBase && b < hangulVBase+hangulVCount {
		return hangulSBase + ((a-hangulLBase)*hangulVCount+(b-hangulVBase))*hangulTCount, true
	}
	if a >= hangulSBase && a < hangulSBase+hangulSCount && (a-hangulSBase)%hangulTCount == 0 &&
		b > hangulTBase && b < hangulTBase+hangulTCount {
		return a + (b - hangulTBase), true
	}
	x, ok := comp[[2]rune{a, b}]
	return x, ok
}

var (
	compOnce sync.Once
	compMap  map[[2]rune]rune
)

// compositions derives the primary composites from x/text's data: every
// character that NFC leaves alone but that has a canonical decomposition,
// keyed by its one-level mapping (NFC of all but the last character of
// the full decomposition, the last character).
func compositions() map[[2]rune]rune {
	compOnce.Do(func() {
		m := map[[2]rune]rune{}
		var buf [utf8.UTFMax]byte
		for r := rune(0xC0); r < 0x30000; r++ {
			if (r >= 0xD800 && r < 0xE000) || (r >= hangulSBase && r < hangulSBase+hangulSCount) {
				continue
			}
			n := utf8.EncodeRune(buf[:], r)
			d := norm.NFD.Properties(buf[:n]).Decomposition()
			if len(d) == 0 || !norm.NFC.IsNormal(buf[:n]) {
				continue // no decomposition, or excluded from composition
			}
			full := []rune(string(d))
			if len(full) < 2 {
				continue
			}
			first := []rune(norm.NFC.String(string(full[:len(full)-1])))
			if len(first) != 1 {
				continue
			}
			m[[2]rune{first[0], full[len(full)-1]}] = r
		}
		compMap = m
	})
	return compMap
}
