package tokenizer

import (
	"sync"
	"unicode"
	"unicode/utf8"
)

// qwen2Pattern is the Split pre-tokenizer pattern of the Qwen2 tokenizer
// (H3-ENCODERS-VAES.md §4.2 step 3). splitQwen2 implements exactly this
// pattern; a tokenizer.json with any other pattern is rejected.
const qwen2Pattern = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`

// Character classes of the pattern, as bits.
const (
	clsL  = 1 << iota // \p{L}
	clsN              // \p{N}
	clsWS             // \s = \p{White_Space}
	clsNL             // [\r\n]
)

var (
	bmpClassOnce sync.Once
	bmpClass     []uint8 // class bits of every BMP code point
)

func initClasses() {
	bmpClassOnce.Do(func() {
		t := make([]uint8, 0x10000)
		for r := rune(0); r < 0x10000; r++ {
			t[r] = slowClass(r)
		}
		bmpClass = t
	})
}

func slowClass(r rune) uint8 {
	var c uint8
	if unicode.Is(letterTable, r) {
		c |= clsL
	}
	if unicode.Is(numberTable, r) {
		c |= clsN
	}
	if unicode.Is(whiteSpaceTable, r) {
		c |= clsWS
	}
	if r == '\r' || r == '\n' {
		c |= clsNL
	}
	return c
}

func class(r rune) uint8 {
	if r < 0x10000 {
		return bmpClass[r]
	}
	return slowClass(r)
}

// runeAt decodes the rune at byte offset i of s (s is valid UTF-8).
func runeAt(s string, i int) (rune, int, uint8) {
	if b := s[i]; b < utf8.RuneSelf {
		return rune(b), 1, bmpClass[b]
	}
	r, n := utf8.DecodeRuneInString(s[i:])
	return r, n, class(r)
}

func asciiLower(b byte) byte {
	if b >= 'A' && b <= 'Z' {
		return b + ('a' - 'A')
	}
	return b
}

// splitQwen2 appends to ends the end offset of every piece of s, as the
// pattern's global match iteration produces them. Every alternative consumes
// at least one character and together they accept every character, so the
// pieces tile s. Each branch below is one alternative, tried in order, with
// the backtracking the pattern implies made explicit.
func splitQwen2(s string, ends []int) []int {
	for i := 0; i < len(s); {
		i = matchQwen2(s, i)
		ends = append(ends, i)
	}
	return ends
}

func matchQwen2(s string, i int) int {
	r0, n0, c0 := runeAt(s, i)

	// (?i:'s|'t|'re|'ve|'m|'ll|'d) — tokenizers.js folds ASCII letters only.
	if r0 == '\'' && i+1 < len(s) {
		switch asciiLower(s[i+1]) {
		case 's', 't', 'm', 'd':
			return i + 2
		case 'r':
			if i+2 < len(s) && asciiLower(s[i+2]) == 'e' {
				return i + 3
			}
		case 'v':
			if i+2 < len(s) && asciiLower(s[i+2]) == 'e' {
				return i + 3
			}
		case 'l':
			if i+2 < len(s) && asciiLower(s[i+2]) == 'l' {
				return i + 3
			}
		}
	}

	// [^\r\n\p{L}\p{N}]?\p{L}+ : a letter run, optionally preceded by one
	// character that is neither a line break, a letter nor a number.
	if c0&clsL != 0 {
		return letterRun(s, i+n0)
	}
	if c0&(clsNL|clsN) == 0 && i+n0 < len(s) {
		if _, n1, c1 := runeAt(s, i+n0); c1&clsL != 0 {
			return letterRun(s, i+n0+n1)
		}
	}

	// \p{N} : one number character.
	if c0&clsN != 0 {
		return i + n0
	}

	// ` ?[^\s\p{L}\p{N}]+[\r\n]*` : a symbol run, optionally after one
	// space, then any line breaks. Without the space the first character
	// (a space, hence \s) cannot start the run, so there is no second try.
	k := i
	if r0 == ' ' {
		k = i + n0
	}
	if j := symbolRun(s, k); j > k {
		for j < len(s) && (s[j] == '\r' || s[j] == '\n') {
			j++
		}
		return j
	}

	if c0&clsWS != 0 {
		// The maximal white-space run [i, end), its last line break, and
		// the start of its last character.
		end, lastNL, lastStart := i, -1, i
		for end < len(s) {
			r, n, c := runeAt(s, end)
			if c&clsWS == 0 {
				break
			}
			if r == '\r' || r == '\n' {
				lastNL = end
			}
			lastStart = end
			end += n
		}
		// \s*[\r\n]+ : \s* gives back characters until a line break
		// follows; the match ends after the run's last line break.
		if lastNL >= 0 {
			return lastNL + 1
		}
		// \s+(?!\S) : the whole run when the text ends there; otherwise
		// the run minus its last character, which must leave at least one.
		if end == len(s) {
			return end
		}
		if lastStart > i {
			return lastStart
		}
		// \s+
		return end
	}
	// Unreachable: every character is a letter, a number, white space or
	// a symbol. Consume it so the caller always progresses.
	return i + n0
}

func letterRun(s string, j int) int {
	for j < len(s) {
		_, n, c := runeAt(s, j)
		if c&clsL == 0 {
			break
		}
		j += n
	}
	return j
}

// symbolRun returns the end of the run of [^\s\p{L}\p{N}] characters at j.
func symbolRun(s string, j int) int {
	for j < len(s) {
		_, n, c := runeAt(s, j)
		if c&(clsL|clsN|clsWS) != 0 {
			break
		}
		j += n
	}
	return j
}
