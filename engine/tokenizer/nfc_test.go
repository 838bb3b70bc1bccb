package tokenizer

import (
	"math/rand/v2"
	"strings"
	"testing"

	"golang.org/x/text/unicode/norm"
)

// TestExactNormalizeMatchesXText: where x/text's stream-safe limit cannot
// apply, exactNormalize equals x/text for all four forms (random strings of
// letters, combining marks, Hangul and compatibility characters).
func TestExactNormalizeMatchesXText(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	pool := []rune{'a', 'e', 'o', 'A', 'E', 0x300, 0x301, 0x302, 0x303, 0x308, 0x30a, 0x323, 0x327, 0x328, 0x334, 0x345, 0x1100, 0x1161,
		0x11a8, 0xac00, 0xac01, 0xc5, 0xe9, 0x1e0a, 0x1f82, 0x212b, 0x2126, 0xfb01, 0x2460, 0xff76, 0xff9e, 0x3099, 0x304b, 0x0958, 0x93c, 0x915,
		0x344, 0x340, 0xf900, 0x1d15e, 0x5d9, 0x5b4, 0x1b05, 0x1b35, 0x0f73, 0xfdfa}
	for n := 0; n < 20000; n++ {
		rs := make([]rune, 1+r.IntN(9))
		for i := range rs {
			rs[i] = pool[r.IntN(len(pool))]
		}
		s := string(rs)
		for _, f := range []norm.Form{norm.NFC, norm.NFD, norm.NFKC, norm.NFKD} {
			if got, want := exactNormalize(f, s), f.String(s); got != want {
				t.Fatalf("form %v of %+q: exact %+q, x/text %+q", f, s, got, want)
			}
		}
	}
}

// TestLongNonStarterRuns: JavaScript's normalize (UAX #15) has no
// stream-safe limit; neither does the tokenizer's normalizer.
func TestLongNonStarterRuns(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"a" + strings.Repeat("\u0301", 40), "\u00e1" + strings.Repeat("\u0301", 39)},
		{"x" + strings.Repeat("\u0301\u0323", 20), "x" + strings.Repeat("\u0323", 20) + strings.Repeat("\u0301", 20)},
		{"a" + strings.Repeat("\u0301", 35) + "\u0323", "\u1ea1" + strings.Repeat("\u0301", 35)},
	} {
		if got := normalizeForm(norm.NFC, c.in); got != c.want {
			t.Errorf("NFC(%+q) = %+q, want %+q", c.in, got, c.want)
		}
	}
}
