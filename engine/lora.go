package engine

import (
	"fmt"

	"h3studio/engine/dit"
	"h3studio/engine/lora"
)

// LoRA is one LoRA of a request: a file, its strength and optionally the
// alpha to assume (package lora; docs/lora.md).
type LoRA = lora.Use

// AppliedLoRA records what a LoRA did to a take (path, sha256, strength,
// alpha and its source, what it could not apply).
type AppliedLoRA = lora.Applied

// ParseLoRA parses PATH[:STRENGTH[:ALPHA]].
func ParseLoRA(s string) (LoRA, error) { return lora.ParseUse(s) }

// loadLoRAs reads the request's LoRAs for transformer cfg.
func loadLoRAs(cfg dit.Config, uses []LoRA) (dit.Adapters, []AppliedLoRA, error) {
	if len(uses) == 0 {
		return nil, nil, nil
	}
	ad, applied, err := lora.Load(cfg, uses)
	if err != nil {
		return nil, nil, fmt.Errorf("engine: %w", err)
	}
	return ad, applied, nil
}

// setAdapters gives the loaded transformer the take's adapters (releasing
// its bound blocks when they change).
func (m *models) setAdapters(ad dit.Adapters, key string) error {
	m.adapters, m.adapterKey = ad, key
	if m.dit == nil || m.ditAdapterKey == key {
		return nil
	}
	if err := m.dit.SetAdapters(ad); err != nil {
		return fmt.Errorf("engine: %w", err)
	}
	m.ditAdapterKey = key
	return nil
}

// adapterKey identifies a set of applied LoRAs (content and strengths).
func adapterKey(applied []AppliedLoRA, uses []LoRA) string {
	k := ""
	for i, a := range applied {
		k += fmt.Sprintf("%s:%g:%g;", a.SHA256, a.Strength, uses[i].Alpha)
	}
	return k
}

// LoRAInfo summarises a LoRA file from its header (engine/lora).
type LoRAInfo = lora.Info

// InspectLoRA reads a LoRA file's header and checks that it is a
// MiniMax-H3 LoRA in a known format.
func InspectLoRA(path string) (LoRAInfo, error) { return lora.Inspect(path) }
