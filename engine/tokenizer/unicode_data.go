package tokenizer

import (
	_ "embed"
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// The Unicode data of the Node.js build that runs tokenizers.js, written by
// gen_unicode.mjs and gen_normalization.mjs (`go generate`) and read here
// once, when the package initializes. The files are embedded and checked
// against their generators by TestUnicodeDataMatchesGenerators, so a
// malformed line is a build defect and panics.

//go:embed unicode_classes.txt
var unicodeClassesFile string

//go:embed normalization.txt
var normalizationFile string

// unicodeVersion is the Unicode version of the character classes: the
// version of the ICU data in the Node.js build that ran tokenizers.js.
var unicodeVersion string

// letterTable holds letters (general category L: Lu Ll Lt Lm Lo),
// numberTable numbers (general category N: Nd Nl No) and whiteSpaceTable the
// Unicode White_Space property (what tokenizers.js uses for \s).
var letterTable, numberTable, whiteSpaceTable *unicode.RangeTable

// normalizationVersion is the Unicode version of the normalization data.
var normalizationVersion string

// combiningRanks: characters without a decomposition whose canonical
// combining class is non-zero, with the rank of that class (1 = lowest).
var combiningRanks []combiningRank

// canonicalDecompositions: full canonical decompositions (NFD of one
// character), Hangul syllables excepted (computed).
var canonicalDecompositions []decomposition

// compatibilityDecompositions: full compatibility decompositions (NFKD of
// one character) where they differ from the canonical one.
var compatibilityDecompositions []decomposition

// compositionExclusions: characters with a canonical decomposition that NFC
// does not recompose (singletons, non-starter decompositions, exclusions).
var compositionExclusions []rune

// combiningRank is one entry of combiningRanks.
type combiningRank struct {
	r    rune
	rank uint8
}

// decomposition maps a character to its full decomposition.
type decomposition struct {
	r rune
	d []rune
}

func init() {
	classes := map[string][][2]rune{}
	unicodeVersion = readUnicodeData("unicode_classes.txt", unicodeClassesFile, func(f []string) error {
		if len(f) != 2 {
			return fmt.Errorf("want FIRST..LAST ; CLASS")
		}
		first, last, _ := strings.Cut(f[0], "..")
		if last == "" {
			last = first
		}
		lo, err := parseCodes(first)
		if err != nil {
			return err
		}
		hi, err := parseCodes(last)
		if err != nil {
			return err
		}
		classes[f[1]] = append(classes[f[1]], [2]rune{lo[0], hi[0]})
		return nil
	})
	letterTable = rangeTable(classes["L"])
	numberTable = rangeTable(classes["N"])
	whiteSpaceTable = rangeTable(classes["White_Space"])

	normalizationVersion = readUnicodeData("normalization.txt", normalizationFile, func(f []string) error {
		if len(f) < 3 {
			return fmt.Errorf("want CODE ; KIND ; VALUE")
		}
		c, err := parseCodes(f[0])
		if err != nil {
			return err
		}
		switch {
		case f[1] == "ccc" && len(f) == 3:
			rank, err := strconv.ParseUint(f[2], 10, 8)
			if err != nil {
				return err
			}
			combiningRanks = append(combiningRanks, combiningRank{c[0], uint8(rank)})
		case f[1] == "nfd" && (len(f) == 3 || len(f) == 4 && f[3] == "excluded"):
			d, err := parseCodes(f[2])
			if err != nil {
				return err
			}
			canonicalDecompositions = append(canonicalDecompositions, decomposition{c[0], d})
			if len(f) == 4 {
				compositionExclusions = append(compositionExclusions, c[0])
			}
		case f[1] == "nfkd" && len(f) == 3:
			d, err := parseCodes(f[2])
			if err != nil {
				return err
			}
			compatibilityDecompositions = append(compatibilityDecompositions, decomposition{c[0], d})
		default:
			return fmt.Errorf("unknown entry %q", strings.Join(f[1:], " ; "))
		}
		return nil
	})
}

// readUnicodeData calls line with the ";"-separated, trimmed fields of each
// data line of the file name (text), skipping "#" comments and blank lines,
// and returns the version the "@unicode" line names. It panics, naming the
// file and line, on a line that line rejects or a missing version.
func readUnicodeData(name, text string, line func(fields []string) error) string {
	version := ""
	for i, l := range strings.Split(text, "\n") {
		if l == "" || l[0] == '#' {
			continue
		}
		if v, ok := strings.CutPrefix(l, "@unicode "); ok {
			version = v
			continue
		}
		f := strings.Split(l, ";")
		for j := range f {
			f[j] = strings.TrimSpace(f[j])
		}
		if err := line(f); err != nil {
			panic(fmt.Sprintf("tokenizer: %s:%d: %v", name, i+1, err))
		}
	}
	if version == "" {
		panic(fmt.Sprintf("tokenizer: %s: no @unicode line", name))
	}
	return version
}

// parseCodes parses space-separated hexadecimal code points.
func parseCodes(s string) ([]rune, error) {
	var rs []rune
	for _, h := range strings.Fields(s) {
		v, err := strconv.ParseUint(h, 16, 32)
		if err != nil || v > unicode.MaxRune {
			return nil, fmt.Errorf("code point %q is not a hexadecimal number up to 10FFFF", h)
		}
		rs = append(rs, rune(v))
	}
	if len(rs) == 0 {
		return nil, fmt.Errorf("no code point")
	}
	return rs, nil
}

// rangeTable builds the table of the ascending, disjoint ranges rs, a range
// across U+FFFF split between the 16- and 32-bit parts.
func rangeTable(rs [][2]rune) *unicode.RangeTable {
	t := &unicode.RangeTable{}
	for _, r := range rs {
		lo, hi := r[0], r[1]
		if lo <= 0xffff {
			t.R16 = append(t.R16, unicode.Range16{Lo: uint16(lo), Hi: uint16(min(hi, 0xffff)), Stride: 1})
			if hi <= unicode.MaxLatin1 {
				t.LatinOffset++
			}
			lo = 0x10000
		}
		if hi >= lo {
			t.R32 = append(t.R32, unicode.Range32{Lo: uint32(lo), Hi: uint32(hi), Stride: 1})
		}
	}
	return t
}
