package tokenizer

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
)

// configJSON is the part of tokenizer_config.json the tokenizer reads.
type configJSON struct {
	AddedTokensDecoder      map[string]addedTokenJSON `json:"added_tokens_decoder"`
	AdditionalSpecialTokens []json.RawMessage         `json:"additional_special_tokens"`
	ModelMaxLength          *float64                  `json:"model_max_length"`
	// The named special tokens, strings or AddedToken objects.
	Bos  json.RawMessage `json:"bos_token"`
	Eos  json.RawMessage `json:"eos_token"`
	Unk  json.RawMessage `json:"unk_token"`
	Sep  json.RawMessage `json:"sep_token"`
	Pad  json.RawMessage `json:"pad_token"`
	Cls  json.RawMessage `json:"cls_token"`
	Mask json.RawMessage `json:"mask_token"`
}

// loadConfig declares the tokens of tokenizer_config.json the way
// transformers' PreTrainedTokenizerFast does on load: first the
// added_tokens_decoder entries (by id) that tokenizer.json lacks, then every
// special token (bos, eos, unk, sep, pad, cls, mask, then
// additional_special_tokens in list order) not known yet, as a special,
// non-normalized token with the next free id. The released H3 configuration
// declares its extra tokens (<d> = 151669 …) this way.
func (t *Tokenizer) loadConfig(b []byte) error {
	var c configJSON
	if err := strictJSON(b, &c); err != nil {
		return &FormatError{File: ConfigFile, Rule: err.Error()}
	}
	if c.ModelMaxLength != nil && *c.ModelMaxLength >= 1 && *c.ModelMaxLength < 1<<40 {
		t.modelMaxLength = int(*c.ModelMaxLength)
	}
	type decl struct {
		id  int
		tok addedTokenJSON
	}
	var decls []decl
	for key, a := range c.AddedTokensDecoder {
		id, err := strconv.Atoi(key)
		if err != nil || id < 0 {
			return &FormatError{ConfigFile, "added_tokens_decoder", fmt.Sprintf("key %q is not a token id", key)}
		}
		decls = append(decls, decl{id, a})
	}
	sort.Slice(decls, func(i, j int) bool { return decls[i].id < decls[j].id })
	for _, d := range decls {
		field := fmt.Sprintf("added_tokens_decoder[%d]", d.id)
		tok := AddedToken{ID: d.id, Content: d.tok.Content, Special: d.tok.Special, SingleWord: d.tok.SingleWord,
			LStrip: d.tok.LStrip, RStrip: d.tok.RStrip, Normalized: !d.tok.Special}
		if d.tok.Normalized != nil {
			tok.Normalized = *d.tok.Normalized
		}
		if k, ok := t.byContent[tok.Content]; ok {
			if t.added[k].ID != d.id {
				return &FormatError{ConfigFile, field, fmt.Sprintf("token %q has id %d in %s", tok.Content, t.added[k].ID, TokenizerFile)}
			}
			continue // tokenizer.json's declaration stands
		}
		if err := t.declare(tok, ConfigFile, field, true); err != nil {
			return err
		}
	}
	named := []struct {
		field string
		raw   json.RawMessage
	}{{"bos_token", c.Bos}, {"eos_token", c.Eos}, {"unk_token", c.Unk}, {"sep_token", c.Sep},
		{"pad_token", c.Pad}, {"cls_token", c.Cls}, {"mask_token", c.Mask}}
	for i, raw := range c.AdditionalSpecialTokens {
		named = append(named, struct {
			field string
			raw   json.RawMessage
		}{fmt.Sprintf("additional_special_tokens[%d]", i), raw})
	}
	for _, n := range named {
		tok, ok, err := specialToken(n.raw)
		if err != nil {
			return &FormatError{ConfigFile, n.field, err.Error()}
		}
		if !ok {
			continue
		}
		if k, known := t.byContent[tok.Content]; known {
			t.added[k].Special = true
			continue
		}
		if err := t.declare(tok, ConfigFile, n.field, false); err != nil {
			return err
		}
	}
	return nil
}

// specialToken reads a special-token entry: null, a string, or an
// AddedToken object. Special tokens are not normalized unless they say so.
func specialToken(raw json.RawMessage) (AddedToken, bool, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return AddedToken{}, false, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return AddedToken{Content: s, Special: true}, s != "", nil
	}
	var a addedTokenJSON
	if err := json.Unmarshal(raw, &a); err != nil {
		return AddedToken{}, false, fmt.Errorf("expected a string or a token object")
	}
	tok := AddedToken{Content: a.Content, Special: true, SingleWord: a.SingleWord, LStrip: a.LStrip, RStrip: a.RStrip}
	if a.Normalized != nil {
		tok.Normalized = *a.Normalized
	}
	return tok, a.Content != "", nil
}
