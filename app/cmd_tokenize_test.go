package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeTinyTokenizer writes a byte-level tokenizer folder: the 256 byte
// characters, one merge ("Ġ" "x"), one special token, and a configuration.
func writeTinyTokenizer(t *testing.T) string {
	dir := t.TempDir()
	vocab := map[string]int{}
	n := 0
	for b := 0; b < 256; b++ {
		var r rune
		switch {
		case (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF):
			r = rune(b)
		default:
			r = rune(256 + n)
			n++
		}
		vocab[string(r)] = b
	}
	vocab["Ġx"] = 256
	tj := map[string]any{
		"added_tokens": []any{map[string]any{"id": 257, "content": "<|end|>", "special": true, "normalized": false}},
		"normalizer":   map[string]any{"type": "NFC"},
		"pre_tokenizer": map[string]any{"type": "Sequence", "pretokenizers": []any{
			map[string]any{"type": "Split", "pattern": map[string]any{"Regex": `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`}, "behavior": "Isolated", "invert": false},
			map[string]any{"type": "ByteLevel", "add_prefix_space": false, "use_regex": false}}},
		"decoder": map[string]any{"type": "ByteLevel"},
		"model":   map[string]any{"type": "BPE", "vocab": vocab, "merges": []string{"Ġ x"}},
	}
	b, _ := json.Marshal(tj)
	if err := os.WriteFile(filepath.Join(dir, "tokenizer.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tokenizer_config.json"), []byte(`{"additional_special_tokens": ["<d>"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func runTokenizeWith(t *testing.T, input string, args ...string) (int, string, string) {
	t.Helper()
	old := stdin
	stdin = strings.NewReader(input)
	defer func() { stdin = old }()
	var out, errb bytes.Buffer
	code := runTokenize(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestTokenizeJSON(t *testing.T) {
	dir := writeTinyTokenizer(t)
	code, out, errs := runTokenizeWith(t, `["a x", "", "<|end|><d>", "\u00e9", "a\ud800"]`, "-t", dir, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	// "a x" = a, Ġx; <d> is the configuration's token (id 258); é is two
	// bytes; a lone surrogate escape is U+FFFD, the bytes JavaScript's
	// TextEncoder gives it in tokenizers.js.
	if want := "[[97,256],[],[257,258],[195,169],[97,239,191,189]]\n"; out != want {
		t.Fatalf("stdout = %q, want %q", out, want)
	}
}

func TestTokenizeBadInput(t *testing.T) {
	dir := writeTinyTokenizer(t)
	for _, c := range []struct{ name, in, want string }{
		{"invalid utf-8", "[\"a\xff\"]", "not valid UTF-8 (first invalid byte at offset 3)"},
		{"object", `{"a": 1}`, "expected a JSON array of strings, got a JSON object"},
		{"number element", `["a", 5]`, "element 1 is not a string"},
		{"null element", `[null]`, "element 0 is not a string"},
		{"truncated", `["a"`, "expected a JSON array of strings"},
		{"trailing", `[] []`, "data after the JSON array"},
		{"empty stdin", ``, "expected a JSON array of strings"},
	} {
		code, out, errs := runTokenizeWith(t, c.in, "-t", dir, "--json")
		if code != 1 || out != "" || !strings.Contains(errs, c.want) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 1 and %q", c.name, code, out, errs, c.want)
		}
	}
	if code, _, errs := runTokenizeWith(t, `[]`, "-t", t.TempDir(), "--json"); code != 1 || !strings.Contains(errs, "tokenizer.json") {
		t.Errorf("missing folder: exit %d, stderr %q", code, errs)
	}
	if code, _, _ := runTokenizeWith(t, `[]`, "--json"); code != 2 {
		t.Errorf("missing -t: exit %d, want 2", code)
	}
}
