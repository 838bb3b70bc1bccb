package dit_test

import (
	"strings"
	"testing"

	"h3studio/engine/compute"
	"h3studio/engine/compute/cpu"
	"h3studio/engine/dit"
	"h3studio/engine/safetensors"
)

// TestInventoryIsWhatOpenBinds writes a checkpoint holding exactly
// Inventory's tensors (random values by its Init rules) and checks that Open
// accepts it and binds every weight, and that one tensor fewer or one more
// is refused by name: the inventory is the checkpoint contract, in both
// layouts.
func TestInventoryIsWhatOpenBinds(t *testing.T) {
	cfg, err := dit.ReadConfig("testdata/FL2VA/transformer")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []dit.WeightLayout{dit.OriginalLayout, dit.DiffusersLayout} {
		inv := dit.Inventory(cfg, l)
		entries, err := inv.Entries(7)
		if err != nil {
			t.Fatal(err)
		}
		open := func(es []safetensors.Entry) error {
			dir := t.TempDir()
			if err := safetensors.WriteSharded(dir, "model", es, 1<<16); err != nil {
				t.Fatal(err)
			}
			ck, err := safetensors.OpenDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer ck.Close()
			b := cpu.New(cpu.Options{})
			m, err := dit.Load(b, safetensors.NewBinder("dit", ck, b), &cfg, &dit.Options{KeepPrep: true})
			if err != nil {
				return err
			}
			defer m.Close()
			return m.BindCore(nil)
		}
		if err := open(entries); err != nil {
			t.Fatalf("%v: the inventory's own checkpoint: %v", l, err)
		}
		if err := open(entries[1:]); err == nil || !strings.Contains(err.Error(), entries[0].Name) {
			t.Errorf("%v: without %s: %v", l, entries[0].Name, err)
		}
		extra := append(append([]safetensors.Entry(nil), entries...), safetensors.F32("blocks.99.extra.weight", compute.F32, compute.Shape{2}, []float32{1, 2}))
		if err := open(extra); err == nil || !strings.Contains(err.Error(), "blocks.99.extra.weight") {
			t.Errorf("%v: with an unexpected tensor: %v", l, err)
		}
	}
}
