package tokenizer

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"h3studio/engine/testkit"
)

// TestSpecVectors: H3-ENCODERS-VAES.md §4.4, exact ids on the real vocabulary.
func TestSpecVectors(t *testing.T) {
	tok := loadQwen3(t)
	for _, c := range []struct {
		text string
		want []int
	}{
		{"A red fox walking through snow", []int{32, 2518, 38835, 11435, 1526, 11794}},
		{"A cinematic close-up of a clockwork bird taking flight.", []int{32, 64665, 3265, 5239, 315, 264, 8866, 1778, 11958, 4633, 10971, 13}},
		{"Hello, WORLD!  2026\n中文 café's", []int{9707, 11, 50891, 0, 220, 220, 17, 15, 17, 21, 198, 104811, 51950, 594}},
		{"🙂a!\n", []int{145080, 64, 4894}},
		{"<|im_start|>", []int{151644}},
		{"<Picture 1>: ", []int{21604, 3826, 220, 16, 26818, 220}},
		{"<Picture 2>: ", []int{21604, 3826, 220, 17, 26818, 220}},
		{"<Video 1>: ", []int{27, 10724, 220, 16, 26818, 220}},
		{"<Audio 1>: ", []int{65406, 220, 16, 26818, 220}},
		{"<0.2 seconds>", []int{27, 15, 13, 17, 6486, 29}},
		{"<1.2 seconds>", []int{27, 16, 13, 17, 6486, 29}},
		{"", []int{}},
	} {
		got, err := tok.Encode(c.text)
		if err != nil {
			t.Fatalf("%q: %v", c.text, err)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("Encode(%q) = %v, want %v", c.text, got, c.want)
		}
	}
}

// TestSpecialTokenIDs: §4.3, the added tokens of tokenizer.json.
func TestSpecialTokenIDs(t *testing.T) {
	tok := loadQwen3(t)
	for content, want := range map[string]int{
		"<|endoftext|>": 151643, "<|im_start|>": 151644, "<|im_end|>": 151645, "<|vision_start|>": 151652,
		"<|vision_end|>": 151653, "<|vision_pad|>": 151654, "<|image_pad|>": 151655, "<|video_pad|>": 151656,
		"<tool_call>": 151657, "<|file_sep|>": 151664, "</think>": 151668,
	} {
		if got, ok := tok.TokenID(content); !ok || got != want {
			t.Errorf("TokenID(%q) = %d, %v; want %d", content, got, ok, want)
		}
	}
	if got := len(tok.AddedTokens()); got != 26 {
		t.Errorf("%d added tokens, want 26 (151643–151668)", got)
	}
	if tok.Len() != 151669 {
		t.Errorf("Len() = %d, want 151669", tok.Len())
	}
}

type extraTokens struct {
	Tokens []struct {
		Content string `json:"content"`
		ID      int    `json:"id"`
	} `json:"tokens"`
}

func readExtraTokens(t *testing.T) extraTokens {
	var x extraTokens
	testkit.ReadJSON(t, filepath.Join("testdata", "h3_extra_tokens.json"), &x)
	return x
}

// h3Configs derives, from the real Qwen3 tokenizer_config.json and the
// spec's table, the two ways a configuration can declare H3's extra tokens:
// as additional_special_tokens (the released H3 file) and as
// added_tokens_decoder entries with ids.
func h3Configs(t *testing.T, x extraTokens) map[string][]byte {
	base := testkit.ReadFile(t, filepath.Join(qwen3Dir(t), ConfigFile))
	out := map[string][]byte{}
	for _, mode := range []string{"additional_special_tokens", "added_tokens_decoder"} {
		var cfg map[string]any
		if err := json.Unmarshal(base, &cfg); err != nil {
			t.Fatal(err)
		}
		if mode == "additional_special_tokens" {
			list := cfg["additional_special_tokens"].([]any)
			for _, tk := range x.Tokens {
				list = append(list, tk.Content)
			}
			cfg["additional_special_tokens"] = list
		} else {
			dec := cfg["added_tokens_decoder"].(map[string]any)
			for _, tk := range x.Tokens {
				dec[itoa(tk.ID)] = map[string]any{"content": tk.Content, "lstrip": false, "normalized": false,
					"rstrip": false, "single_word": false, "special": true}
			}
		}
		b, err := json.Marshal(cfg)
		if err != nil {
			t.Fatal(err)
		}
		out[mode] = b
	}
	return out
}

// TestH3ExtraTokens: the extra tokens get the spec's ids (151669–151675)
// from a tokenizer_config.json derived from the spec, and are matched as
// whole tokens in H3's dialogue markup.
func TestH3ExtraTokens(t *testing.T) {
	loadQwen3(t) // skips loudly without the vocabulary
	tj := testkit.ReadFile(t, filepath.Join(qwen3Dir(t), TokenizerFile))
	x := readExtraTokens(t)
	plain := loadQwen3(t)
	for mode, cfg := range h3Configs(t, x) {
		tok, err := New(tj, cfg)
		if err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		for _, tk := range x.Tokens {
			if got, ok := tok.TokenID(tk.Content); !ok || got != tk.ID {
				t.Errorf("%s: TokenID(%q) = %d, %v; want %d", mode, tk.Content, got, ok, tk.ID)
			}
			if !tok.IsSpecial(tk.ID) {
				t.Errorf("%s: %q is not special", mode, tk.Content)
			}
		}
		text := "(S1) whispers <d>[English] Keep still.</d><|cutoff|>"
		got, err := tok.Encode(text)
		if err != nil {
			t.Fatal(err)
		}
		english, _ := plain.Encode("[English] Keep still.")
		prefix, _ := plain.Encode("(S1) whispers ")
		want := append(append(append(prefix, 151669), english...), 151670, 151671)
		if !slices.Equal(got, want) {
			t.Errorf("%s: Encode(%q) = %v, want %v", mode, text, got, want)
		}
		if dec, _ := tok.Decode(got); dec != text {
			t.Errorf("%s: Decode = %q, want %q", mode, dec, text)
		}
	}
	// Without the configuration's tokens, <d> is plain text (h3.c's bug).
	if ids, _ := plain.Encode("<d>"); len(ids) == 1 {
		t.Errorf("<d> is one token without H3's configuration: %v", ids)
	}
}

// TestH3ConfigIDMismatch: a configuration whose declared id is not the id
// Hugging Face would assign is rejected, naming the entry.
func TestH3ConfigIDMismatch(t *testing.T) {
	tj := testkit.ReadFile(t, filepath.Join(qwen3Dir(t), TokenizerFile))
	cfg := []byte(`{"added_tokens_decoder": {"151700": {"content": "<d>", "special": true}}}`)
	_, err := New(tj, cfg)
	var fe *FormatError
	if !errors.As(err, &fe) || fe.File != ConfigFile || !strings.Contains(fe.Field, "151700") {
		t.Fatalf("err = %v, want a FormatError naming added_tokens_decoder[151700]", err)
	}
}

func TestDecodeRoundTripReal(t *testing.T) {
	tok := loadQwen3(t)
	for _, s := range buildCorpus(corpusSeed)[:3000] {
		ids, err := tok.Encode(s)
		checkRoundTrip(t, tok, s, ids, err)
	}
}

// checkRoundTrip asserts Encode(s) = ids, err succeeded and Decode(ids) is
// normalizedText(tok, s).
func checkRoundTrip(t testing.TB, tok *Tokenizer, s string, ids []int, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	got, err := tok.Decode(ids)
	if err != nil {
		t.Fatal(err)
	}
	if want := normalizedText(tok, s); got != want {
		t.Fatalf("Decode(Encode(%+q)) = %+q, want %+q", s, got, want)
	}
}

// normalizedText is s with the normalizer applied between added tokens:
// what Decode(Encode(s)) must return (s itself when s is NFC).
func normalizedText(tok *Tokenizer, s string) string {
	var b strings.Builder
	tok.raw.split(s, func(p string, k int) {
		if k >= 0 {
			b.WriteString(tok.added[k].Content)
		} else {
			b.WriteString(tok.normalize(p))
		}
	})
	return b.String()
}
