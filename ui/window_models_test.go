package ui

import (
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
	"h3studio/engine"
	"h3studio/engine/compute"
	"h3studio/engine/hfhub"
	"h3studio/engine/hfhub/fakehub"
	"h3studio/engine/media"
	"h3studio/engine/safetensors"
	"h3studio/engine/snapshot/snapshottest"
	"h3studio/engine/testkit"
	"h3studio/ui/internal/uitest"
	"h3studio/ui/studio"
	"h3studio/ui/studio/fakeengine"
)

// The Models window of a fresh user: it offers the downloads with their
// sizes; Download fetches in the background and the studio switches to
// the verified snapshot.
func TestModelsWindowDownloads(t *testing.T) {
	a := test.NewTempApp(t)
	a.Settings().SetTheme(NewTheme())
	d := t.TempDir()
	if err := snapshottest.WriteReleasedMinimal(d, "FL2VA"); err != nil {
		t.Fatal(err)
	}
	files := uitest.Files(t, d)
	files["model_index.json"] = []byte(`{}`)
	hub := fakehub.New(hfhub.Repo, "89abcdef0123456789abcdef0123456789abcdef", files)
	t.Cleanup(hub.Close)
	home := t.TempDir()
	env := hfhub.EnvFrom(func(k string) string { return map[string]string{"HF_HOME": home, "HF_ENDPOINT": hub.Endpoint()}[k] })
	lib, err := studio.OpenLibrary(filepath.Join(t.TempDir(), "Library"), nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := studio.New(studio.Options{Engine: fakeengine.New(fakeengine.Options{}), Library: lib, Opener: media.Open})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	used := make(chan string, 1)
	m := studio.NewModels(studio.ModelsOptions{Env: env, UseModel: func(dir string) { used <- dir }, KeepAwake: func() func() { return func() {} }})
	ui := &uitest.Queue{}
	win := test.NewTempWindow(t, nil)
	win.Resize(fyne.NewSize(1400, 860))
	w := New(win, s, Options{Do: ui.Go, Immediate: true, Version: "test", Models: m})
	t.Cleanup(w.Stop)
	w.ShowModels()
	mw := w.models
	settle := func(what string, cond func() bool) {
		t.Helper()
		if !testkit.Until(nil, func() bool { ui.Drain(); mw.apply(); return cond() }) {
			t.Fatalf("never: %s (status %q)", what, mw.status.Text)
		}
	}
	settle("the choices", func() bool { return len(mw.choices.Options) > 0 && !mw.start.Disabled() })
	if !strings.Contains(mw.choices.Selected, "T2VA") || !strings.Contains(mw.free.Text, "free") {
		t.Fatalf("choice %q, free %q", mw.choices.Selected, mw.free.Text)
	}
	if !strings.Contains(strings.Join(labelTexts(mw.installed, false), " "), "No MiniMax-H3 snapshot found") {
		t.Fatalf("installed list: %v", labelTexts(mw.installed, false))
	}
	test.Tap(mw.start)
	var root string
	settle("the download", func() bool {
		select {
		case root = <-used:
		default:
		}
		return root != "" && strings.HasPrefix(mw.status.Text, "Done")
	})
	settle("the listing", func() bool { return strings.Contains(strings.Join(labelTexts(mw.installed, false), " "), root) })
	if findButton(mw.installed, "Use") == nil || findButton(mw.installed, "Verify") == nil {
		t.Fatal("the snapshot row has no Use/Verify buttons")
	}
	// docs/models.md's picture: H3_DOC_SHOTS=DIR go test -run ModelsWindow ./ui
	if dir := os.Getenv("H3_DOC_SHOTS"); dir != "" {
		mw.win.Resize(fyne.NewSize(759, 619))
		mw.win.Resize(fyne.NewSize(760, 620))
		f, err := os.Create(filepath.Join(dir, "ui-models.png"))
		if err != nil {
			t.Fatal(err)
		}
		png.Encode(f, mw.win.Canvas().Capture())
		f.Close()
	}
}

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
	h.w.s.Compose().SetTurbo(8)
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

// TestMemoryFloorThroughTheWindow: Compose ▸ Memory carries the quality
// floor to the engine's plan, shows the mode the engine chose and why, and
// warns inline before a take that would swap.
func TestMemoryFloorThroughTheWindow(t *testing.T) {
	h := newHarness(t, fakeengine.Options{}, false)
	c := h.w.compose
	h.s.Compose().SetPrompt("A fox.")
	sn := h.settle(func(sn studio.Snapshot) bool { return sn.Plan != nil && sn.Plan.PeakBytes > 0 })
	h.eng.Gen.Opts.MemoryBudget = sn.Plan.PeakBytes * 7 / 10 // resident no longer fits

	c.memQualitySel.SetSelected("Best quality")
	sn = h.settle(func(sn studio.Snapshot) bool {
		return sn.Plan != nil && sn.Plan.Request.Quality == engine.BestQuality && sn.Plan.Memory == engine.MemoryStreaming
	})
	if !strings.Contains(c.memoryNote.Text, "streaming (chosen automatically, Best quality)") {
		t.Errorf("best quality: memory note %q", c.memoryNote.Text)
	}
	c.memQualitySel.SetSelected("Balanced")
	sn = h.settle(func(sn studio.Snapshot) bool { return sn.Plan != nil && sn.Plan.Memory == engine.MemoryResidentInt4 })
	if n := c.memoryNote.Text; !strings.Contains(n, "resident-int4 (chosen automatically, Balanced)") || !strings.Contains(n, "resident would not fit") {
		t.Errorf("balanced: memory note %q", n)
	}
	if h.w.status.memory.Text != "Memory mode: automatic (resident-int4)" {
		t.Errorf("status bar %q", h.w.status.memory.Text)
	}
	if labelsContain(c.settingsMsgs, "would swap") {
		t.Error("a take that fits is warned")
	}

	c.memorySel.SetSelected("Resident — fastest, most memory")
	sn = h.settle(func(sn studio.Snapshot) bool { return sn.Plan != nil && sn.Plan.Memory == engine.MemoryResident })
	if !labelsContain(c.settingsMsgs, "would swap") || c.generate.Disabled() || !c.memQualitySel.Disabled() {
		t.Errorf("explicit resident over the budget: swap warning shown %v, generate disabled %v, floor disabled %v",
			labelsContain(c.settingsMsgs, "would swap"), c.generate.Disabled(), c.memQualitySel.Disabled())
	}
	// Every memory mode can be chosen: Streaming, 4-bit weights reaches the
	// plan.
	if n := len(c.memorySel.Options); n != 7 {
		t.Errorf("the Memory select offers %d choices, want Automatic and the six modes: %q", n, c.memorySel.Options)
	}
	c.memorySel.SetSelected("Streaming, 4-bit weights — least read per step")
	h.settle(func(sn studio.Snapshot) bool { return sn.Plan != nil && sn.Plan.Memory == engine.MemoryStreamingInt4 })

	// Settings… holds the same quality floor.
	h.w.showSettings()
	sel := findSelect(h.topDialog("Settings"), "Fastest that fits")
	if sel == nil || sel.Selected != "Balanced" {
		t.Fatalf("Settings has no quality floor select showing Balanced: %+v", sel)
	}
	sel.SetSelected("Fastest that fits")
	h.settle(func(sn studio.Snapshot) bool { return sn.Draft.Settings.MemoryQuality == engine.FastestThatFit })
	if c.memQualitySel.Selected != "Fastest that fits" {
		t.Errorf("Compose ▸ Memory shows floor %q after Settings changed it", c.memQualitySel.Selected)
	}
}

// findSelect finds a select in o that offers option, or nil.
func findSelect(o fyne.CanvasObject, option string) *widget.Select {
	sel, _ := findObject(o, func(s *widget.Select) bool { return slices.Contains(s.Options, option) })
	return sel
}
