package studio_test

import (
	"image/color"
	"reflect"
	"testing"
	"time"

	"h3studio/engine"
	"h3studio/ui/studio"
	"h3studio/ui/studio/fakeengine"
)

// edited is what the draft's history keeps: the files, the prompt, the
// reference options and the settings.
type edited struct {
	Saved    studio.SavedDraft
	Settings studio.Settings
}

func editedOf(sn studio.Snapshot) edited {
	return edited{sn.Draft.Saved(), sn.Draft.Settings}
}

// TestEveryDraftChangeIsUndoable: each of Compose's editing methods changes
// the draft as one step that Undo takes back exactly and Redo re-applies;
// a method of Compose that is not in the table fails the test until it is
// added (or named as not editing the draft), so a new editor cannot skip
// the history.
func TestEveryDraftChangeIsUndoable(t *testing.T) {
	e := newEnv(t, fakeengine.Options{}, false)
	c := e.s.Compose()
	red, green := e.png("red.png", color.RGBA{200, 0, 0, 255}), e.png("green.png", color.RGBA{0, 200, 0, 255})
	blue, sound := e.png("blue.png", color.RGBA{0, 0, 200, 255}), e.wav("voice.wav", 0.5)
	lora := writeLoRA(t, e.in, "style.safetensors")
	ref := func(i int) int { return e.s.Snapshot().Draft.References[i].ID }
	// a draft with something in every part
	c.SetPrompt("A red fox walks through fresh snow.")
	c.AddReferences([]string{red, green})
	c.AddLoRAs([]string{lora})
	e.settle(func(sn studio.Snapshot) bool {
		return len(sn.Draft.References) == 2 && len(sn.Draft.Settings.LoRAs) == 1
	})

	type edit struct {
		name string
		do   func()
	}
	edits := []edit{
		{"SetPrompt", func() { c.SetPrompt("A grey wolf at dusk.") }},
		{"SetKeepLabels", func() { c.SetKeepLabels(!e.s.Snapshot().Draft.KeepLabels) }},
		{"SetSettings", func() { st := e.s.Snapshot().Draft.Settings; st.Seed += 9; c.SetSettings(st) }},
		{"SetQuality", func() { c.SetQuality(engine.PresetPreview) }},
		{"SetCanvas", func() { c.SetCanvas(studio.Canvases[len(studio.Canvases)-1].ID) }},
		{"SetFrames", func() { c.SetFrames(e.s.Snapshot().Draft.Settings.Frames + 17) }},
		{"SetSeconds", func() { c.SetSeconds(2) }},
		{"SetSeed", func() { c.SetSeed(1234) }},
		{"RollSeed", func() { c.RollSeed() }},
		{"SetMemory", func() { c.SetMemory(engine.MemoryStreaming) }},
		{"SetMemoryQuality", func() { c.SetMemoryQuality(studio.MemoryQualities[2].Floor) }},
		{"SetSpeed", func() { sp := e.s.Snapshot().Draft.Settings.Speed; sp.Steps += 3; c.SetSpeed(sp) }},
		{"SetRenderSize", func() { c.SetRenderSize(512, 288) }},
		{"SetPreviewFrames", func() { c.SetPreviewFrames(!e.s.Snapshot().Draft.Settings.Preview) }},
		{"SetRefSize", func() { c.SetRefSize(studio.RefSizes[1]) }},
		{"SetFrame", func() { c.SetFrame(studio.LastSlot, blue) }},
		{"ClearFrame", func() { c.ClearFrame(studio.FirstSlot) }},
		{"SwapFrames", func() { c.SwapFrames() }},
		{"AddReferences", func() { c.AddReferences([]string{blue}) }},
		{"InsertReferences", func() { c.InsertReferences(0, []string{blue}) }},
		{"RemoveReference", func() { c.RemoveReference(ref(0)) }},
		{"ClearReferences", func() { c.ClearReferences() }},
		{"MoveReference", func() { c.MoveReference(ref(0), 1) }},
		{"ReplaceReference", func() { c.ReplaceReference(ref(1), blue) }},
		{"SetSilent", func() { c.SetSilent(ref(0), true) }},
		{"PairSound", func() { c.PairSound(ref(0), sound) }},
		{"Drop", func() { c.Drop([]string{blue}, studio.DropReferences) }},
		{"DropReferencesAt", func() { c.DropReferencesAt([]string{blue}, 0) }},
		{"ApplyTemplate", func() { c.ApplyTemplate("ref2va") }},
		{"ApplyExample", func() { c.ApplyExample(0) }},
		{"AddLoRAs", func() { c.AddLoRAs([]string{writeLoRA(t, e.in, "other.safetensors")}) }},
		{"RemoveLoRA", func() { c.RemoveLoRA(lora) }},
		{"SetLoRAOn", func() { c.SetLoRAOn(lora, false) }},
		{"SetLoRAStrength", func() { c.SetLoRAStrength(lora, 0.5) }},
		{"SetTurbo", func() { c.SetTurbo(studio.TurboChoices[len(studio.TurboChoices)-1]) }},
	}
	// TidyPrompt only re-syncs the labels (no change of its own); Restore
	// is the start-up's, restoring the last draft, which is not a step.
	notEdits := map[string]bool{"Undo": true, "Redo": true, "ForgetHistory": true, "TidyPrompt": true, "Restore": true}
	inTable := map[string]bool{}
	for _, ed := range edits {
		inTable[ed.name] = true
	}
	ct := reflect.TypeOf(c)
	for i := range ct.NumMethod() {
		if name := ct.Method(i).Name; !inTable[name] && !notEdits[name] {
			t.Errorf("Compose.%s is not in the table: add it, with a change, or name it as no edit", name)
		}
	}
	// every edit starts from the same draft: a first frame, two
	// references, the LoRA on at strength 1
	c.SetFrame(studio.FirstSlot, red)
	base := e.settle(func(studio.Snapshot) bool { return true }).Draft
	for i, ed := range edits {
		c.Restore(base.Saved())
		c.SetSettings(base.Settings)
		// a step of its own just before the edit: an edit that is not
		// recorded makes Undo take this one back instead
		c.SetSeed(uint64(1000 + i))
		e.skew.Add(int64(2 * time.Second)) // not one burst of typing with the last edit
		before := editedOf(e.settle(func(studio.Snapshot) bool { return true }))
		ed.do()
		after := editedOf(e.settle(func(studio.Snapshot) bool { return true }))
		if reflect.DeepEqual(before, after) {
			t.Errorf("%s: the draft did not change (the table's change is no change)", ed.name)
			continue
		}
		c.Undo()
		if got := editedOf(e.settle(func(studio.Snapshot) bool { return true })); !reflect.DeepEqual(got, before) {
			t.Errorf("%s: Undo gave\n%+v\nwant\n%+v", ed.name, got, before)
		}
		c.Redo()
		if got := editedOf(e.settle(func(studio.Snapshot) bool { return true })); !reflect.DeepEqual(got, after) {
			t.Errorf("%s: Redo gave\n%+v\nwant\n%+v", ed.name, got, after)
		}
	}
}
