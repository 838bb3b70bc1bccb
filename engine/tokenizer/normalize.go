package tokenizer

import (
	"encoding/json"
	"fmt"
)

// loadNormalizer accepts no normalizer, one Unicode normalization form, or a
// Sequence of them (the Qwen2 file declares NFC).
func (t *Tokenizer) loadNormalizer(raw json.RawMessage) error {
	forms, err := normalizerForms(raw)
	if err != nil {
		return &FormatError{TokenizerFile, "normalizer", err.Error()}
	}
	t.normForms = forms
	return nil
}

func normalizerForms(raw json.RawMessage) ([]normForm, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var c component
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, err
	}
	switch c.Type {
	case "NFC":
		return []normForm{formNFC}, nil
	case "NFD":
		return []normForm{formNFD}, nil
	case "NFKC":
		return []normForm{formNFKC}, nil
	case "NFKD":
		return []normForm{formNFKD}, nil
	case "Sequence":
		var all []normForm
		for _, n := range c.Normalizers {
			f, err := normalizerForms(n)
			if err != nil {
				return nil, err
			}
			all = append(all, f...)
		}
		return all, nil
	}
	return nil, fmt.Errorf("%q: only NFC, NFD, NFKC, NFKD and Sequences of them are supported", c.Type)
}

// normalize applies the normalizer to a piece of text between added tokens.
func (t *Tokenizer) normalize(s string) string {
	for _, f := range t.normForms {
		s = normalizeForm(f, s)
	}
	return s
}
