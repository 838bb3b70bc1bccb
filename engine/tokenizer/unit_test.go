package tokenizer

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// tinyTokenizerJSON builds a small byte-level BPE tokenizer.json: the 256
// byte characters (ids 0–255 in byte order), the merges given (each result
// gets the next id), and the added tokens given.
func tinyTokenizerJSON(t testing.TB, merges [][2]string, added []map[string]any) []byte {
	vocab := map[string]int{}
	for b := 0; b < 256; b++ {
		vocab[string(byteToRune[b])] = b
	}
	var ms []string
	for _, m := range merges {
		ms = append(ms, m[0]+" "+m[1])
		if _, ok := vocab[m[0]+m[1]]; !ok {
			vocab[m[0]+m[1]] = len(vocab)
		}
	}
	for _, a := range added {
		a["id"] = len(vocab) + int(toInt(a["offset"]))
		delete(a, "offset")
	}
	doc := map[string]any{
		"version": "1.0", "truncation": nil, "padding": nil, "added_tokens": added,
		"normalizer": map[string]any{"type": "NFC"},
		"pre_tokenizer": map[string]any{"type": "Sequence", "pretokenizers": []any{
			map[string]any{"type": "Split", "pattern": map[string]any{"Regex": qwen2Pattern}, "behavior": "Isolated", "invert": false},
			map[string]any{"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": false, "use_regex": false},
		}},
		"post_processor": map[string]any{"type": "ByteLevel"},
		"decoder":        map[string]any{"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": false, "use_regex": false},
		"model": map[string]any{"type": "BPE", "dropout": nil, "unk_token": nil, "continuing_subword_prefix": "",
			"end_of_word_suffix": "", "fuse_unk": false, "byte_fallback": false, "ignore_merges": false, "vocab": vocab, "merges": ms},
	}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func toInt(v any) int {
	if f, ok := v.(int); ok {
		return f
	}
	return 0
}

var tinyMerges = [][2]string{{"Ġ", "t"}, {"h", "e"}, {"Ġt", "he"}, {"a", "a"}, {"aa", "a"}, {"aa", "aa"}, {"i", "n"}, {"Ġ", "Ġ"}, {"ĠĠ", "ĠĠ"}, {"c", "at"}, {"a", "t"}}

func tinyTokenizer(t testing.TB, added ...map[string]any) *Tokenizer {
	tok, err := New(tinyTokenizerJSON(t, tinyMerges, added), nil)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func splitPieces(s string) []string {
	initClasses()
	var out []string
	start := 0
	for _, end := range splitQwen2(s, nil) {
		out = append(out, s[start:end])
		start = end
	}
	return out
}

// TestPreTokenizer: the pieces of the Qwen2 pattern, worked out by hand from
// the pattern's alternation order and backtracking.
func TestPreTokenizer(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"Hello, WORLD!  2026\n中文 café's", []string{"Hello", ",", " WORLD", "!", " ", " ", "2", "0", "2", "6", "\n", "中文", " café", "'s"}},
		{"<Picture 1>: ", []string{"<Picture", " ", "1", ">:", " "}},
		{"it's IT'S we'RE 'll 'LL 'Ll", []string{"it", "'s", " IT", "'S", " we", "'RE", " '", "ll", " '", "LL", " '", "Ll"}},
		{"x'ſun x'sun", []string{"x", "'ſun", " x", "'s", "un"}}, // (?i:…) folds ASCII only: ſ is not s
		{"a  b", []string{"a", " ", " b"}},                   // \s+(?!\S) leaves the last space for the word
		{"a   \n\n  b", []string{"a", "   \n\n", " ", " b"}}, // \s*[\r\n]+ ends at the last line break
		{"x  ", []string{"x", "  "}},                         // a trailing run is one piece
		{"x\t\ty", []string{"x", "\t", "\ty"}},               // a tab may prefix a letter run
		{"!!?\r\n\r\nok", []string{"!!?\r\n\r\n", "ok"}},     // symbols take the line breaks that follow
		{" !x", []string{" !", "x"}},
		{" \n", []string{" \n"}},
		{"\n x", []string{"\n", " x"}},
		{"1.5e3", []string{"1", ".", "5", "e", "3"}},
		{"x\u00a0y", []string{"x", "\u00a0y"}}, // NBSP is white space and may prefix a word
		{"x\u0085y", []string{"x", "\u0085y"}}, // U+0085 is White_Space (JS \s would not say so)
		{"x\ufeffy", []string{"x", "\ufeffy"}}, // U+FEFF is not White_Space: a symbol prefixing the word
		{"x \ufeff", []string{"x", " \ufeff"}}, // ... and a symbol run after a space
		{"🙂a!\n", []string{"🙂a", "!\n"}},
		{"\r\n", []string{"\r\n"}},
		{"a\r\n\tb", []string{"a", "\r\n", "\tb"}},
		{"’s", []string{"’s"}},
		{"", nil},
	} {
		if got := splitPieces(c.in); !slices.Equal(got, c.want) {
			t.Errorf("split(%+q) = %+q, want %+q", c.in, got, c.want)
		}
	}
}

// TestAddedTokenFlags: Hugging Face's AddedVocabulary semantics on a tiny
// vocabulary (lstrip/rstrip absorb white space, single_word needs non-word
// neighbours, normalized tokens match in the NFC text, leftmost-longest).
func TestAddedTokenFlags(t *testing.T) {
	tok := tinyTokenizer(t,
		map[string]any{"offset": 0, "content": "<mask>", "lstrip": true, "special": true, "normalized": false},
		map[string]any{"offset": 1, "content": "<r>", "rstrip": true, "special": true, "normalized": false},
		map[string]any{"offset": 2, "content": "<w>", "single_word": true, "special": true, "normalized": false},
		map[string]any{"offset": 3, "content": "e\u0301", "normalized": true},
		map[string]any{"offset": 4, "content": "<x", "special": true, "normalized": false},
		map[string]any{"offset": 5, "content": "<xy>", "special": true, "normalized": false},
	)
	id := func(c string) int { i, _ := tok.TokenID(c); return i }
	enc := func(s string) []int {
		ids, err := tok.Encode(s)
		if err != nil {
			t.Fatal(err)
		}
		return ids
	}
	mask, r, w, e, x, xy := id("<mask>"), id("<r>"), id("<w>"), id("e\u0301"), id("<x"), id("<xy>")
	a := int('a')
	for _, c := range []struct {
		in   string
		want []int
	}{
		{"a  <mask>", []int{a, mask}},                  // lstrip absorbs the spaces before
		{"<r>  a", []int{r, a}},                        // rstrip absorbs the spaces after
		{"a<w>", append([]int{a}, enc("<w>")[0:0]...)}, // filled below
		{" <w> ", []int{' ', w, ' '}},
		{"\u00e9", []int{e}}, // NFC(e + U+0301) = é: the normalized token matches é
		{"e\u0301", []int{e}},
		{"<xy>", []int{xy}}, // longest match at the leftmost position
		{"<xz", []int{x, int('z')}},
	} {
		if c.in == "a<w>" {
			// single_word: "a" touches the token, so it is plain text.
			got := enc(c.in)
			if slices.Contains(got, w) {
				t.Errorf("Encode(%q) = %v: <w> matched next to a word character", c.in, got)
			}
			continue
		}
		if got := enc(c.in); !slices.Equal(got, c.want) {
			t.Errorf("Encode(%+q) = %v, want %v", c.in, got, c.want)
		}
	}
}

// TestMergeOrder: lowest rank first, leftmost first among equal pairs.
func TestMergeOrder(t *testing.T) {
	tok := tinyTokenizer(t)
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"aaa", []string{"aaa"}},         // (a,a) then (aa,a)
		{"aaaa", []string{"aaaa"}},       // (a,a)(a,a) then (aa,aa)
		{"aaaaa", []string{"aa", "aaa"}}, // (a,a)@0, (a,a)@1 [rank 3 before (aa,a)], then (aa,a)
		{" the", []string{"Ġthe"}},
		{" cat", []string{"Ġ", "cat"}},
		{"    ", []string{"ĠĠĠĠ"}},
	} {
		ids, _ := tok.Encode(c.in)
		var got []string
		for _, id := range ids {
			s, _ := tok.Token(id)
			got = append(got, s)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("Encode(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestMergeHeapEqualsScan: the heap path for long words makes the same
// merges as the rescan path.
func TestMergeHeapEqualsScan(t *testing.T) {
	tok := tinyTokenizer(t)
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte("aath ein\xc3")
	for n := 0; n < 2000; n++ {
		b := make([]byte, 1+r.IntN(200))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		syms := func() []int32 {
			s := make([]int32, len(b))
			for i := range b {
				s[i] = tok.model.byteID[b[i]]
			}
			return s
		}
		scan := tok.model.mergeScan(syms())
		hp := tok.model.mergeHeap(syms())
		if !slices.Equal(scan, hp) {
			t.Fatalf("%q: scan %v, heap %v", b, scan, hp)
		}
	}
}

func TestInvalidUTF8(t *testing.T) {
	tok := tinyTokenizer(t)
	_, err := tok.Encode("ok\xffbad")
	var ue *InvalidUTF8Error
	if !errors.As(err, &ue) || ue.Offset != 2 {
		t.Fatalf("err = %v, want InvalidUTF8Error at offset 2", err)
	}
}

func TestDecode(t *testing.T) {
	tok := tinyTokenizer(t, map[string]any{"offset": 0, "content": "<|end|>", "special": true, "normalized": false})
	ids, _ := tok.Encode("the cat<|end|>\u00e9\n")
	s, err := tok.Decode(ids)
	if err != nil || s != "the cat<|end|>\u00e9\n" {
		t.Fatalf("Decode = %q, %v", s, err)
	}
	if _, err := tok.Decode([]int{1 << 30}); err == nil {
		t.Fatal("Decode accepted an unknown id")
	}
	// Half of a two-byte character becomes U+FFFD.
	if s, _ := tok.Decode([]int{0xc3}); s != "\uFFFD" {
		t.Fatalf("Decode(lone lead byte) = %q", s)
	}
}

// TestLoadErrors: malformed files fail with a FormatError naming the field.
func TestLoadErrors(t *testing.T) {
	good := tinyTokenizerJSON(t, tinyMerges, nil)
	edit := func(f func(m map[string]any)) []byte {
		var m map[string]any
		if err := json.Unmarshal(good, &m); err != nil {
			t.Fatal(err)
		}
		f(m)
		b, _ := json.Marshal(m)
		return b
	}
	model := func(m map[string]any) map[string]any { return m["model"].(map[string]any) }
	for _, c := range []struct {
		name, field string
		file        []byte
		config      []byte
	}{
		{"not json", "", []byte("{"), nil},
		{"trailing data", "", append(append([]byte{}, good...), "{}"...), nil},
		{"wordpiece", "model.type", edit(func(m map[string]any) { model(m)["type"] = "WordPiece" }), nil},
		{"dropout", "model.dropout", edit(func(m map[string]any) { model(m)["dropout"] = 0.1 }), nil},
		{"missing byte", "model.vocab", edit(func(m map[string]any) { delete(model(m)["vocab"].(map[string]any), "Ġ") }), nil},
		{"bad merge", "model.merges", edit(func(m map[string]any) { model(m)["merges"] = []any{"x y"} }), nil},
		{"merge line", "model.merges", edit(func(m map[string]any) { model(m)["merges"] = []any{"xy"} }), nil},
		{"other regex", "pre_tokenizer", edit(func(m map[string]any) {
			m["pre_tokenizer"] = map[string]any{"type": "ByteLevel", "add_prefix_space": false}
		}), nil},
		{"no decoder", "decoder", edit(func(m map[string]any) { m["decoder"] = nil }), nil},
		{"lowercase", "normalizer", edit(func(m map[string]any) { m["normalizer"] = map[string]any{"type": "Lowercase"} }), nil},
		{"added id", "added_tokens[0]", edit(func(m map[string]any) {
			m["added_tokens"] = []any{map[string]any{"id": 5000, "content": "<z>", "special": true}}
		}), nil},
		{"config json", "", good, []byte("[")},
		{"config decoder key", "added_tokens_decoder", good, []byte(`{"added_tokens_decoder": {"x": {"content": "<z>"}}}`)},
		{"config special", "additional_special_tokens[0]", good, []byte(`{"additional_special_tokens": [5]}`)},
	} {
		_, err := New(c.file, c.config)
		var fe *FormatError
		if !errors.As(err, &fe) || fe.Field != c.field {
			t.Errorf("%s: err = %v, want a FormatError on field %q", c.name, err, c.field)
		}
	}
	// Both merge formats load.
	pairs := edit(func(m map[string]any) {
		var ps [][2]string
		for _, l := range model(m)["merges"].([]any) {
			a, b, _ := strings.Cut(l.(string), " ")
			ps = append(ps, [2]string{a, b})
		}
		model(m)["merges"] = ps
	})
	tokA, errA := New(good, nil)
	tokB, errB := New(pairs, nil)
	if errA != nil || errB != nil {
		t.Fatal(errA, errB)
	}
	a, _ := tokA.Encode(" the aaaa")
	b, _ := tokB.Encode(" the aaaa")
	if !slices.Equal(a, b) {
		t.Fatalf("merge formats disagree: %v %v", a, b)
	}
}

// TestConcurrentEncode: one Tokenizer, many goroutines (run with -race).
func TestConcurrentEncode(t *testing.T) {
	tok := tinyTokenizer(t)
	done := make(chan []int, 8)
	for g := 0; g < 8; g++ {
		go func() {
			var last []int
			for i := 0; i < 200; i++ {
				last, _ = tok.Encode(strings.Repeat("the cat ", i%7))
			}
			done <- last
		}()
	}
	first := <-done
	for g := 1; g < 8; g++ {
		if got := <-done; !slices.Equal(got, first) {
			t.Fatal("goroutines disagree")
		}
	}
}
