package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// File names of a Hugging Face tokenizer folder.
const (
	TokenizerFile = "tokenizer.json"
	ConfigFile    = "tokenizer_config.json"
)

// A FormatError reports a tokenizer file that does not hold what the
// tokenizer needs: File names the file, Field the JSON field, Rule what was
// expected.
type FormatError struct {
	File, Field, Rule string
}

func (e *FormatError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("tokenizer: %s: %s", e.File, e.Rule)
	}
	return fmt.Sprintf("tokenizer: %s: %s: %s", e.File, e.Field, e.Rule)
}

// Load reads a tokenizer folder: dir/tokenizer.json and
// dir/tokenizer_config.json. Both are required: the configuration declares
// tokens (H3's <d>, </d>, <|cutoff|> …) that tokenizer.json lacks, and
// tokenizing without them would silently split those tokens into pieces.
func Load(dir string) (*Tokenizer, error) {
	tj, err := os.ReadFile(filepath.Join(dir, TokenizerFile))
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	tc, err := os.ReadFile(filepath.Join(dir, ConfigFile))
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	return New(tj, tc)
}

// tokenizerJSON is the part of tokenizer.json the tokenizer reads.
type tokenizerJSON struct {
	AddedTokens  []addedTokenJSON `json:"added_tokens"`
	Normalizer   json.RawMessage  `json:"normalizer"`
	PreTokenizer json.RawMessage  `json:"pre_tokenizer"`
	Decoder      json.RawMessage  `json:"decoder"`
	Model        struct {
		Type                    string           `json:"type"`
		Vocab                   map[string]int32 `json:"vocab"`
		Merges                  json.RawMessage  `json:"merges"`
		Dropout                 *float64         `json:"dropout"`
		UnkToken                *string          `json:"unk_token"`
		ContinuingSubwordPrefix *string          `json:"continuing_subword_prefix"`
		EndOfWordSuffix         *string          `json:"end_of_word_suffix"`
		ByteFallback            bool             `json:"byte_fallback"`
		IgnoreMerges            bool             `json:"ignore_merges"`
	} `json:"model"`
}

type addedTokenJSON struct {
	ID         *int32 `json:"id"`
	Content    string `json:"content"`
	SingleWord bool   `json:"single_word"`
	LStrip     bool   `json:"lstrip"`
	RStrip     bool   `json:"rstrip"`
	Normalized *bool  `json:"normalized"`
	Special    bool   `json:"special"`
}

type component struct {
	Type          string            `json:"type"`
	Pattern       map[string]string `json:"pattern"`
	Behavior      string            `json:"behavior"`
	Invert        bool              `json:"invert"`
	AddPrefix     bool              `json:"add_prefix_space"`
	UseRegex      *bool             `json:"use_regex"`
	Normalizers   []json.RawMessage `json:"normalizers"`
	PreTokenizers []json.RawMessage `json:"pretokenizers"`
}

// New builds a tokenizer from the contents of tokenizer.json and
// tokenizer_config.json (config may be nil: then only tokenizer.json's
// added tokens are known).
func New(tokenizerFile, configFile []byte) (*Tokenizer, error) {
	var tj tokenizerJSON
	if err := strictJSON(tokenizerFile, &tj); err != nil {
		return nil, &FormatError{File: TokenizerFile, Rule: err.Error()}
	}
	t := &Tokenizer{modelMaxLength: -1}
	if err := t.loadModel(&tj); err != nil {
		return nil, err
	}
	if err := t.loadNormalizer(tj.Normalizer); err != nil {
		return nil, err
	}
	if err := checkPreTokenizer(tj.PreTokenizer); err != nil {
		return nil, err
	}
	if err := checkDecoder(tj.Decoder); err != nil {
		return nil, err
	}
	for i, a := range tj.AddedTokens {
		field := fmt.Sprintf("added_tokens[%d]", i)
		if a.ID == nil {
			return nil, &FormatError{TokenizerFile, field, "missing id"}
		}
		tok := AddedToken{ID: int(*a.ID), Content: a.Content, SingleWord: a.SingleWord, LStrip: a.LStrip,
			RStrip: a.RStrip, Special: a.Special, Normalized: !a.Special}
		if a.Normalized != nil {
			tok.Normalized = *a.Normalized
		}
		if err := t.declare(tok, TokenizerFile, field, true); err != nil {
			return nil, err
		}
	}
	if configFile != nil {
		if err := t.loadConfig(configFile); err != nil {
			return nil, err
		}
	}
	t.finish()
	return t, nil
}

// strictJSON decodes one JSON value (json.Unmarshal rejects trailing data).
func strictJSON(b []byte, v any) error {
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("invalid JSON: %w", err)
	}
	return nil
}

func (t *Tokenizer) loadModel(tj *tokenizerJSON) error {
	m := &tj.Model
	bad := func(field, rule string) error { return &FormatError{TokenizerFile, "model." + field, rule} }
	switch {
	case m.Type != "BPE":
		return bad("type", fmt.Sprintf("%q: only BPE models are supported", m.Type))
	case len(m.Vocab) == 0:
		return bad("vocab", "missing or empty")
	case m.Dropout != nil && *m.Dropout != 0:
		return bad("dropout", "BPE dropout is not supported (tokenization would be random)")
	case m.ContinuingSubwordPrefix != nil && *m.ContinuingSubwordPrefix != "":
		return bad("continuing_subword_prefix", "not supported by a byte-level tokenizer")
	case m.EndOfWordSuffix != nil && *m.EndOfWordSuffix != "":
		return bad("end_of_word_suffix", "not supported by a byte-level tokenizer")
	case m.ByteFallback:
		return bad("byte_fallback", "not supported by a byte-level tokenizer")
	}
	bm := &bpeModel{vocab: m.Vocab, ignoreMerges: m.IgnoreMerges, cache: map[string][]int32{}}
	maxID := int32(-1)
	for tok, id := range m.Vocab {
		if id < 0 {
			return bad("vocab", fmt.Sprintf("token %q has negative id %d", tok, id))
		}
		maxID = max(maxID, id)
	}
	t.idToToken = make([]string, maxID+1)
	seen := make([]bool, maxID+1)
	for tok, id := range m.Vocab {
		if seen[id] {
			return bad("vocab", fmt.Sprintf("id %d is used by %q and %q", id, t.idToToken[id], tok))
		}
		seen[id] = true
		t.idToToken[id] = tok
	}
	t.vocabSize = len(m.Vocab)
	for b := 0; b < 256; b++ {
		id, ok := m.Vocab[string(byteToRune[b])]
		if !ok {
			return bad("vocab", fmt.Sprintf("byte 0x%02X (%q) has no token: not a byte-level vocabulary", b, string(byteToRune[b])))
		}
		bm.byteID[b] = id
	}
	merges, err := parseMerges(m.Merges)
	if err != nil {
		return bad("merges", err.Error())
	}
	bm.merges = make(map[uint64]merge, len(merges))
	for rank, p := range merges {
		a, okA := m.Vocab[p[0]]
		b, okB := m.Vocab[p[1]]
		c, okC := m.Vocab[p[0]+p[1]]
		if !okA || !okB || !okC {
			return bad("merges", fmt.Sprintf("merge %d (%q %q) uses a token missing from the vocabulary", rank, p[0], p[1]))
		}
		// A pair listed twice keeps its last rank, as both Hugging Face
		// implementations build their rank maps.
		bm.merges[pairKey(a, b)] = merge{rank: uint32(rank), id: c}
	}
	t.model = bm
	t.unkID = -1
	if m.UnkToken != nil {
		id, ok := m.Vocab[*m.UnkToken]
		if !ok {
			return bad("unk_token", fmt.Sprintf("%q is not in the vocabulary", *m.UnkToken))
		}
		t.unkID = int(id)
	}
	return nil
}

// parseMerges accepts both merge formats: ["a b", …] and [["a","b"], …].
func parseMerges(raw json.RawMessage) ([][2]string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var pairs [][2]string
	if err := json.Unmarshal(raw, &pairs); err == nil {
		return pairs, nil
	}
	var lines []string
	if err := json.Unmarshal(raw, &lines); err != nil {
		return nil, errors.New(`expected an array of "a b" strings or of ["a", "b"] pairs`)
	}
	pairs = make([][2]string, len(lines))
	for i, l := range lines {
		a, b, ok := strings.Cut(l, " ")
		if !ok || a == "" || b == "" || strings.Contains(b, " ") {
			return nil, fmt.Errorf("line %d %q is not two space-separated tokens", i, l)
		}
		pairs[i] = [2]string{a, b}
	}
	return pairs, nil
}

func checkPreTokenizer(raw json.RawMessage) error {
	bad := func(rule string) error { return &FormatError{TokenizerFile, "pre_tokenizer", rule} }
	var c component
	if len(raw) == 0 || string(raw) == "null" {
		return bad("missing: expected Sequence[Split(Qwen2 pattern), ByteLevel]")
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return bad(err.Error())
	}
	if c.Type != "Sequence" || len(c.PreTokenizers) != 2 {
		return bad(fmt.Sprintf("%s: expected Sequence[Split(Qwen2 pattern), ByteLevel]", c.Type))
	}
	var split, bl component
	if json.Unmarshal(c.PreTokenizers[0], &split) != nil || json.Unmarshal(c.PreTokenizers[1], &bl) != nil {
		return bad("malformed pretokenizers")
	}
	if split.Type != "Split" || split.Pattern["Regex"] != qwen2Pattern || split.Behavior != "Isolated" || split.Invert {
		return bad(fmt.Sprintf("pretokenizers[0] must be Split(Regex=%q, behavior Isolated, invert false)", qwen2Pattern))
	}
	if bl.Type != "ByteLevel" || bl.AddPrefix || bl.UseRegex == nil || *bl.UseRegex {
		return bad("pretokenizers[1] must be ByteLevel(add_prefix_space false, use_regex false)")
	}
	return nil
}

func checkDecoder(raw json.RawMessage) error {
	var c component
	if len(raw) == 0 || string(raw) == "null" || json.Unmarshal(raw, &c) != nil || c.Type != "ByteLevel" {
		return &FormatError{TokenizerFile, "decoder", "expected a ByteLevel decoder"}
	}
	return nil
}
