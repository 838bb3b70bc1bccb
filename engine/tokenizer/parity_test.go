package tokenizer

import (
	"fmt"
	"slices"
	"testing"
)

// corpusSeed fixes the parity corpus (buildCorpus).
const corpusSeed = 20260811

// TestTokenizersJSParity: on the real Qwen3 vocabulary, Encode equals
// Hugging Face tokenizers.js on every string of the ≥ 10,000-string corpus.
// Bound: zero mismatches.
func TestTokenizersJSParity(t *testing.T) {
	tok := loadQwen3(t)
	corpus := buildCorpus(corpusSeed)
	if len(corpus) < 10000 {
		t.Fatalf("corpus has %d strings, want ≥ 10000", len(corpus))
	}
	var want [][]int
	runTokenizersJS(t, qwen3Dir(t), corpus, 0, &want)
	if len(want) != len(corpus) {
		t.Fatalf("tokenizers.js returned %d results for %d strings", len(want), len(corpus))
	}
	bad, tokens := 0, 0
	for i, s := range corpus {
		got, err := tok.Encode(s)
		if err != nil {
			t.Fatalf("corpus[%d] %q: %v", i, s, err)
		}
		tokens += len(want[i])
		if !slices.Equal(got, want[i]) {
			bad++
			if bad <= 10 {
				t.Errorf("corpus[%d] %+q:\n  go  %v\n  js  %v\n  pieces %q", i, s, got, want[i], pieces(tok, s))
			}
		}
	}
	t.Logf("%d strings, %d tokens, %d mismatches against tokenizers.js", len(corpus), tokens, bad)
	if bad > 0 {
		t.Fatalf("%d of %d strings differ from tokenizers.js", bad, len(corpus))
	}
}

// pieces shows the pre-tokenizer pieces of s (diagnostics).
func pieces(tok *Tokenizer, s string) []string {
	var out []string
	tok.raw.split(s, func(p string, k int) {
		if k >= 0 {
			out = append(out, fmt.Sprintf("[added %d]", tok.added[k].ID))
			return
		}
		n := tok.normalize(p)
		start := 0
		for _, end := range splitQwen2(n, nil) {
			out = append(out, n[start:end])
			start = end
		}
	})
	return out
}
