package qwen3vl_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"h3studio/engine/compute"
	"h3studio/engine/compute/cpu"
	"h3studio/engine/qwen3vl"
	"h3studio/engine/safetensors"
)

// TestInventoryIsWhatLoadBinds writes a text_encoder/ holding exactly
// Inventory's tensors and checks that Load accepts it in both memory modes
// and refuses one tensor fewer or one more, naming it.
func TestInventoryIsWhatLoadBinds(t *testing.T) {
	cfg, err := qwen3vl.ReadConfig("testdata/text_encoder")
	if err != nil {
		t.Fatal(err)
	}
	entries, err := qwen3vl.Inventory(cfg).Entries(3)
	if err != nil {
		t.Fatal(err)
	}
	load := func(es []safetensors.Entry, mode compute.Residency) error {
		dir := t.TempDir()
		for _, f := range []string{"config.json", "preprocessor_config.json", "video_preprocessor_config.json"} {
			b, err := os.ReadFile(filepath.Join("testdata/text_encoder", f))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := safetensors.WriteSharded(dir, "model", es, 1<<16); err != nil {
			t.Fatal(err)
		}
		m, err := qwen3vl.Load(dir, cpu.New(cpu.Options{}), qwen3vl.LoadOptions{Residency: mode})
		if err != nil {
			return err
		}
		return m.Close()
	}
	for _, mode := range []compute.Residency{compute.Resident, compute.Streaming} {
		if err := load(entries, mode); err != nil {
			t.Fatalf("%v: the inventory's own checkpoint: %v", mode, err)
		}
	}
	if err := load(entries[1:], compute.Resident); err == nil || !strings.Contains(err.Error(), entries[0].Name) {
		t.Errorf("without %s: %v", entries[0].Name, err)
	}
	extra := append(append([]safetensors.Entry(nil), entries...), safetensors.F32("model.visual.extra.weight", compute.F32, compute.Shape{2}, []float32{1, 2}))
	if err := load(extra, compute.Resident); err == nil || !strings.Contains(err.Error(), "model.visual.extra.weight") {
		t.Errorf("with an unexpected tensor: %v", err)
	}
}
