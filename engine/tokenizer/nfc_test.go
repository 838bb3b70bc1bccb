package tokenizer

import (
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/text/unicode/norm"

	"h3studio/engine/testkit"
)

// TestNormalizeMatchesXText: on characters Unicode 15.0 already had and
// without long runs of marks (where x/text's stream-safe limit cannot
// apply), the generated Unicode 17.0 normalization equals x/text's for all
// four forms.
func TestNormalizeMatchesXText(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	pool := []rune{'a', 'e', 'o', 'A', 'E', 's', 0x300, 0x301, 0x302, 0x303, 0x308, 0x30a, 0x307, 0x31b, 0x323, 0x327, 0x328, 0x334, 0x345, 0x1100, 0x1161,
		0x11a8, 0xac00, 0xac01, 0xc5, 0xe9, 0x1e0a, 0x1e63, 0x1f82, 0x3b1, 0x212b, 0x2126, 0xfb01, 0x2460, 0xff76, 0xff9e, 0x3099, 0x304b, 0x0958, 0x93c,
		0x915, 0x344, 0x340, 0xf900, 0x1d15e, 0x5d9, 0x5b4, 0x1b05, 0x1b35, 0x0f73, 0xfdfa, 0x0bc6, 0x0bbe, 0x0d46, 0x0d57, 0x1100 + 5, 0x1161 + 3, 0x11a8 + 2,
		0x0627, 0x0653, 0x0654, 0x05d0, 0x05b7, 0x0e40, 0x0e48, 0x1025, 0x102e, 0x110b1, 0x110ba, 0x11131, 0x11127, 0x1e08, 0x00c7, 0x01d5, 0x1eda}
	forms := map[normForm]norm.Form{formNFC: norm.NFC, formNFD: norm.NFD, formNFKC: norm.NFKC, formNFKD: norm.NFKD}
	for n := 0; n < 30000; n++ {
		rs := make([]rune, 1+r.IntN(8))
		for i := range rs {
			rs[i] = pool[r.IntN(len(pool))]
		}
		s := string(rs)
		for f, xf := range forms {
			if got, want := normalizeForm(f, s), xf.String(s); got != want {
				t.Fatalf("form %d of %+q: got %+q, x/text %+q", f, s, got, want)
			}
		}
	}
}

// TestNormalizationTables: every canonical decomposition round-trips through
// NFC to its character unless the character is excluded from composition.
func TestNormalizationTables(t *testing.T) {
	d := normTables()
	excluded := map[rune]bool{}
	for _, r := range compositionExclusions {
		excluded[r] = true
	}
	for _, e := range canonicalDecompositions {
		s := string(e.r)
		if got := normalizeForm(formNFD, s); got != string(e.d) {
			t.Fatalf("NFD(%U) = %+q, want %+q", e.r, got, string(e.d))
		}
		got := normalizeForm(formNFC, string(e.d))
		if excluded[e.r] == (got == s) {
			t.Fatalf("NFC(NFD(%U)) = %+q (excluded %v)", e.r, got, excluded[e.r])
		}
	}
	if len(d.pairs) < 900 {
		t.Fatalf("only %d composition pairs", len(d.pairs))
	}
}

// TestLongNonStarterRuns: UAX #15 (JavaScript's normalize) has no
// stream-safe limit; x/text would insert U+034F here.
func TestLongNonStarterRuns(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"a" + strings.Repeat("\u0301", 40), "\u00e1" + strings.Repeat("\u0301", 39)},
		{"x" + strings.Repeat("\u0301\u0323", 20), "x" + strings.Repeat("\u0323", 20) + strings.Repeat("\u0301", 20)},
		{"a" + strings.Repeat("\u0301", 35) + "\u0323", "\u1ea1" + strings.Repeat("\u0301", 35)},
	} {
		if got := normalizeForm(formNFC, c.in); got != c.want {
			t.Errorf("NFC(%+q) = %+q, want %+q", c.in, got, c.want)
		}
	}
}

// TestUnicodeDataMatchesGenerators: the embedded data files are what their
// generators write with this Node.js build, when it is the build that
// wrote them (the first line names it).
func TestUnicodeDataMatchesGenerators(t *testing.T) {
	node := testkit.Tool(t, "node")
	for _, c := range []struct{ gen, name, embedded string }{
		{"gen_unicode.mjs", "unicode_classes.txt", unicodeClassesFile},
		{"gen_normalization.mjs", "normalization.txt", normalizationFile},
	} {
		out := filepath.Join(t.TempDir(), c.name)
		testkit.Output(t, node, c.gen, out)
		b := testkit.ReadFile(t, out)
		got, _, _ := strings.Cut(string(b), "\n")
		want, _, _ := strings.Cut(c.embedded, "\n")
		if got != want {
			t.Skipf("%s was written by another Node.js build: %q, this one %q", c.name, want, got)
		}
		if string(b) != c.embedded {
			t.Errorf("%s differs from what %s writes: run `go generate ./engine/tokenizer`", c.name, c.gen)
		}
	}
	if unicodeVersion != normalizationVersion {
		t.Errorf("character classes of Unicode %s, normalization data of %s", unicodeVersion, normalizationVersion)
	}
}

// TestReadUnicodeDataRejects: a malformed data line panics naming the file
// and line.
func TestReadUnicodeDataRejects(t *testing.T) {
	for _, text := range []string{
		"@unicode 17.0\n0041 ; L\nZZ..0042 ; L\n",
		"@unicode 17.0\n0041 ; L\n110000 ; L\n",
		"0041 ; L\n",
	} {
		func() {
			defer func() {
				msg, _ := recover().(string)
				if !strings.HasPrefix(msg, "tokenizer: x.txt") {
					t.Errorf("%q: panic %q, want one naming x.txt", text, msg)
				}
			}()
			readUnicodeData("x.txt", text, func(f []string) error {
				_, err := parseCodes(strings.Split(f[0], "..")[0])
				return err
			})
		}()
	}
}
