package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/widget"

	"h3studio/engine/compute"
	"h3studio/engine/safetensors"
	"h3studio/ui/studio"
	"h3studio/ui/studio/fakeengine"
)

// TestLoRAPanel: a LoRA dropped on the window gets a row (name, strength,
// summary) in Compose's LoRA list; the Turbo select follows the draft.
func TestLoRAPanel(t *testing.T) {
	h := newHarness(t, fakeengine.Options{}, false)
	p := filepath.Join(t.TempDir(), "turbo.safetensors")
	es := []safetensors.Entry{
		safetensors.F32("blocks.0.attn.qkv_proj.lora_A.weight", compute.BF16, compute.Shape{2, 4}, make([]float32, 8)),
		safetensors.F32("blocks.0.attn.qkv_proj.lora_B.weight", compute.BF16, compute.Shape{12, 2}, make([]float32, 24)),
	}
	if err := safetensors.Write(p, es, nil); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(p)
	h.w.HandleDrop(fyne.NewPos(700, 300), []fyne.URI{storage.NewFileURI(p)})
	h.settle(func(sn studio.Snapshot) bool { return len(sn.Draft.Settings.LoRAs) == 1 })
	h.w.s.SetTurbo(8)
	sn := h.settle(func(sn studio.Snapshot) bool { return sn.Draft.Settings.Turbo == 8 })
	h.w.compose.apply(sn)
	lp := h.w.compose.loras
	if got := lp.turbo.Selected; got != "Turbo · 8 passes" {
		t.Errorf("turbo select %q", got)
	}
	if len(lp.list.Objects) != 1 {
		t.Fatalf("%d LoRA rows", len(lp.list.Objects))
	}
	var texts []string
	var walk func(o fyne.CanvasObject)
	walk = func(o fyne.CanvasObject) {
		switch x := o.(type) {
		case *widget.Check:
			texts = append(texts, x.Text)
		case *widget.Label:
			texts = append(texts, x.Text)
		case *fyne.Container:
			for _, c := range x.Objects {
				walk(c)
			}
		}
	}
	walk(lp.list)
	all := strings.Join(texts, " | ")
	for _, want := range []string{"turbo.safetensors", "1.00", "release names, 1 modules, rank 2"} {
		if !strings.Contains(all, want) {
			t.Errorf("the LoRA row lacks %q: %s", want, all)
		}
	}
}
