package testmodel

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode"

	"h3studio/engine/tokenizer"
)

// The demo tokenizer is a genuine Qwen2-style byte-level BPE in Hugging
// Face's file format, only small: the 256 byte tokens, a few merges learned
// from a fixed corpus (deterministic), then the Qwen special tokens under
// their usual names (as tokenizer.json added tokens, consecutive ids after
// the vocabulary, as Hugging Face numbers them) and H3's extra tokens
// declared in tokenizer_config.json only, as the release does. Its ids fit
// the demo text encoder's vocabulary.

// qwen2Pattern is the Qwen2 pre-tokenizer's split regex.
const qwen2Pattern = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`

// qwenSpecial are Qwen's added tokens in id order; the first 14 are
// special.
var qwenSpecial = []string{
	"<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|object_ref_start|>", "<|object_ref_end|>",
	"<|box_start|>", "<|box_end|>", "<|quad_start|>", "<|quad_end|>", "<|vision_start|>", "<|vision_end|>",
	"<|vision_pad|>", "<|image_pad|>", "<|video_pad|>",
	"<tool_call>", "</tool_call>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>", "<|fim_pad|>",
	"<|repo_name|>", "<|file_sep|>", "<tool_response>", "</tool_response>", "<think>", "</think>",
}

const qwenSpecialCount = 14

// h3Extra are H3's additional special tokens (tokenizer_config.json only).
var h3Extra = []string{"<d>", "</d>", "<|cutoff|>", "<|lyrics_start|>", "<|lyrics_end|>", "<|caption_start|>", "<|caption_end|>"}

// demoMerges is how many BPE merges the demo tokenizer learns.
const demoMerges = 160

// corpus is the fixed text the merges are learned from: prompt-like English.
const corpus = `A red fox walks through fresh snow at dawn. The camera follows the fox as it stops and looks
around. Soft wind, the crunch of snow under its paws, a distant bird. A lighthouse in a storm, waves crash against
the rocks, wind howls, rain on the glass. A woman plays the piano in a quiet room; warm light falls through the
window and the music fills the room. Close-up of a cup of coffee on a wooden table, steam rising, the sound of a
spoon. A city street at night with neon signs, cars passing, people talking, rain on the road. The shot slowly
moves in; the scene is calm and the sound is clear. Two children laugh and run through a field of tall grass in the
summer sun while a dog barks and follows them.`

// pieces splits text roughly as the Qwen2 pre-tokenizer does for plain
// English (a word with its leading space, digits, punctuation runs); it is
// only used to learn merges, so approximations cost nothing but merge
// quality.
func pieces(text string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, string(cur))
			cur = cur[:0]
		}
	}
	prevLetter := false
	for _, r := range text {
		letter := unicode.IsLetter(r)
		switch {
		case letter && prevLetter:
			cur = append(cur, r)
		case letter:
			if len(cur) == 1 && cur[0] == ' ' {
				cur = append(cur, r)
			} else {
				flush()
				cur = append(cur, r)
			}
		case r == ' ':
			flush()
			cur = append(cur, r)
		default:
			flush()
			cur = append(cur, r)
			flush()
		}
		prevLetter = letter
	}
	flush()
	return out
}

// learnMerges runs byte-level BPE training on the corpus: repeatedly merge
// the most frequent adjacent pair (ties broken by the pair's text, so the
// result is deterministic).
func learnMerges(n int) [][2]string {
	counts := map[string]int{}
	for _, p := range pieces(strings.ReplaceAll(corpus, "\n", " ")) {
		counts[p]++
	}
	type word struct {
		syms  []string
		count int
	}
	var words []*word
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		w := &word{count: counts[k]}
		for i := 0; i < len(k); i++ {
			w.syms = append(w.syms, string(tokenizer.ByteRune(k[i])))
		}
		words = append(words, w)
	}
	var merges [][2]string
	for len(merges) < n {
		pairs := map[[2]string]int{}
		for _, w := range words {
			for i := 0; i+1 < len(w.syms); i++ {
				pairs[[2]string{w.syms[i], w.syms[i+1]}] += w.count
			}
		}
		var best [2]string
		bestN := 1 // a pair must occur at least twice
		for p, c := range pairs {
			if c > bestN || (c == bestN && bestN > 1 && p[0]+" "+p[1] < best[0]+" "+best[1]) {
				best, bestN = p, c
			}
		}
		if bestN < 2 {
			break
		}
		merges = append(merges, best)
		for _, w := range words {
			for i := 0; i+1 < len(w.syms); i++ {
				if w.syms[i] == best[0] && w.syms[i+1] == best[1] {
					w.syms = append(w.syms[:i], append([]string{best[0] + best[1]}, w.syms[i+2:]...)...)
				}
			}
		}
	}
	return merges
}

// Tokenizer is the demo tokenizer's content.
type Tokenizer struct {
	Vocab  map[string]int
	Merges [][2]string
	// Added maps every added token (Qwen's and H3's) to its id.
	Added map[string]int
	// Size is the number of ids (largest id + 1).
	Size int
}

// NewTokenizer builds the demo tokenizer.
func NewTokenizer() *Tokenizer {
	t := &Tokenizer{Vocab: map[string]int{}, Added: map[string]int{}}
	for b := 0; b < 256; b++ {
		t.Vocab[string(tokenizer.ByteRune(byte(b)))] = b
	}
	for _, m := range learnMerges(demoMerges) {
		tok := m[0] + m[1]
		if _, dup := t.Vocab[tok]; dup {
			continue
		}
		t.Vocab[tok] = len(t.Vocab)
		t.Merges = append(t.Merges, m)
	}
	id := len(t.Vocab)
	for _, s := range append(append([]string(nil), qwenSpecial...), h3Extra...) {
		t.Added[s] = id
		id++
	}
	t.Size = id
	return t
}

// ID returns an added token's id.
func (t *Tokenizer) ID(content string) int { return t.Added[content] }

type addedToken struct {
	ID         int    `json:"id,omitempty"`
	Content    string `json:"content"`
	SingleWord bool   `json:"single_word"`
	LStrip     bool   `json:"lstrip"`
	RStrip     bool   `json:"rstrip"`
	Normalized bool   `json:"normalized"`
	Special    bool   `json:"special"`
}

// Files returns tokenizer.json, tokenizer_config.json, vocab.json and
// merges.txt.
func (t *Tokenizer) Files() (map[string][]byte, error) {
	var added []addedToken
	for i, s := range qwenSpecial {
		added = append(added, addedToken{ID: t.Added[s], Content: s, Special: i < qwenSpecialCount})
	}
	merges := make([]string, len(t.Merges))
	for i, m := range t.Merges {
		merges[i] = m[0] + " " + m[1]
	}
	tj := map[string]any{
		"version":      "1.0",
		"truncation":   nil,
		"padding":      nil,
		"added_tokens": added,
		"normalizer":   map[string]any{"type": "NFC"},
		"pre_tokenizer": map[string]any{"type": "Sequence", "pretokenizers": []any{
			map[string]any{"type": "Split", "pattern": map[string]string{"Regex": qwen2Pattern}, "behavior": "Isolated", "invert": false},
			map[string]any{"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": false, "use_regex": false},
		}},
		"post_processor": map[string]any{"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": false, "use_regex": false},
		"decoder":        map[string]any{"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": false, "use_regex": false},
		"model": map[string]any{
			"type": "BPE", "dropout": nil, "unk_token": nil, "continuing_subword_prefix": "", "end_of_word_suffix": "",
			"fuse_unk": false, "byte_fallback": false, "ignore_merges": false, "vocab": t.Vocab, "merges": merges,
		},
	}
	decoder := map[string]addedToken{}
	for i, s := range qwenSpecial {
		decoder[fmt.Sprint(t.Added[s])] = addedToken{Content: s, Special: i < qwenSpecialCount}
	}
	special := append(append([]string(nil), qwenSpecial[1:qwenSpecialCount]...), h3Extra...)
	tc := map[string]any{
		"add_bos_token": false, "add_prefix_space": false, "added_tokens_decoder": decoder,
		"additional_special_tokens": special, "bos_token": nil, "clean_up_tokenization_spaces": false,
		"eos_token": "<|im_end|>", "errors": "replace", "model_max_length": 262144, "pad_token": "<|endoftext|>",
		"split_special_tokens": false, "tokenizer_class": "Qwen2Tokenizer", "unk_token": nil,
	}
	out := map[string][]byte{}
	for name, v := range map[string]any{"tokenizer.json": tj, "tokenizer_config.json": tc, "vocab.json": t.Vocab} {
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return nil, fmt.Errorf("demo: %s: %w", name, err)
		}
		out[name] = append(b, '\n')
	}
	out["merges.txt"] = []byte(strings.Join(merges, "\n") + "\n")
	return out, nil
}
