package studio_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"h3studio/engine"
	"h3studio/engine/compute"
	"h3studio/engine/safetensors"
	"h3studio/ui/studio"
	"h3studio/ui/studio/fakeengine"
)

// writeLoRA writes a one-module PEFT LoRA (rank 2) and returns its path.
func writeLoRA(t *testing.T, dir, name string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	es := []safetensors.Entry{
		safetensors.F32("transformer_blocks.0.attn.to_q.lora_A.weight", compute.BF16, compute.Shape{2, 4}, make([]float32, 8)),
		safetensors.F32("transformer_blocks.0.attn.to_q.lora_B.weight", compute.BF16, compute.Shape{4, 2}, make([]float32, 8)),
	}
	if err := safetensors.Write(p, es, nil); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestLoRALibrary: a LoRA file dropped anywhere joins the library (on, at
// strength 1) instead of the references; a .safetensors that is no LoRA is
// refused naming it; strength, on/off and Turbo reach the request; the take
// remembers them and Use Settings (Re-run's draft) restores them.
func TestLoRALibrary(t *testing.T) {
	e := newEnv(t, fakeengine.Options{}, false)
	e.tiny()
	turbo := writeLoRA(t, e.in, "turbo.safetensors")
	bad := filepath.Join(e.in, "weights.safetensors")
	if err := safetensors.Write(bad, []safetensors.Entry{safetensors.F32("text_encoder.w", compute.F32, compute.Shape{1}, []float32{1})}, nil); err != nil {
		t.Fatal(err)
	}
	e.s.Compose().Drop([]string{turbo, bad}, studio.DropReferences)
	sn := e.settle(func(sn studio.Snapshot) bool { return len(sn.Draft.Settings.LoRAs) == 1 })
	l := sn.Draft.Settings.LoRAs[0]
	if l.Path != turbo || !l.On || l.Strength != 1 || !strings.Contains(l.Summary, "diffusers/PEFT, 1 modules, rank 2") || len(sn.Draft.References) != 0 {
		t.Fatalf("library %+v, references %d", sn.Draft.Settings.LoRAs, len(sn.Draft.References))
	}
	refusedNamed := false
	for _, n := range sn.Notices {
		refusedNamed = refusedNamed || strings.Contains(n.Text, "weights.safetensors")
	}
	if !refusedNamed {
		t.Errorf("no notice names the refused file: %+v", sn.Notices)
	}

	e.s.Compose().SetLoRAStrength(turbo, 0.73)
	e.s.Compose().SetQuality(engine.PresetDefault) // the preset's controls, none set by hand
	e.s.Compose().SetTurbo(6)
	e.s.Compose().SetTurbo(5) // not a Turbo choice: ignored
	sn = e.settle(func(sn studio.Snapshot) bool { return sn.Draft.Settings.Turbo == 6 })
	r := sn.Draft.Request()
	if len(r.LoRAs) != 1 || r.LoRAs[0].Strength != 0.75 || r.Turbo != 6 || r.Steps != 0 {
		t.Errorf("request LoRAs %+v turbo %d steps %d", r.LoRAs, r.Turbo, r.Steps)
	}
	// Speed controls set by hand under Advanced still win over Turbo.
	sp := sn.Draft.Settings.Speed
	sp.Steps = 7
	e.s.Compose().SetSpeed(sp)
	sn = e.settle(func(sn studio.Snapshot) bool { return sn.Draft.Settings.Speed.Steps == 7 })
	if r := sn.Draft.Request(); r.Steps != 7 || r.Turbo != 6 {
		t.Errorf("hand-set steps with Turbo: steps %d turbo %d", r.Steps, r.Turbo)
	}
	e.s.Compose().SetQuality(engine.PresetDefault)
	if n := studio.TurboNote(sn.Draft.Settings); !strings.Contains(n, "6 passes") || strings.Contains(n, "Switch on") {
		t.Errorf("turbo note %q", n)
	}
	e.s.Compose().SetLoRAOn(turbo, false)
	sn = e.settle(func(sn studio.Snapshot) bool { return !sn.Draft.Settings.LoRAs[0].On })
	if r := sn.Draft.Request(); len(r.LoRAs) != 0 || !strings.Contains(studio.TurboNote(sn.Draft.Settings), "Switch on a Turbo LoRA") {
		t.Errorf("off: %+v", r.LoRAs)
	}
	e.s.Compose().SetLoRAOn(turbo, true)

	e.s.Queue().Generate()
	sn = e.settle(func(sn studio.Snapshot) bool { return len(sn.Takes) == 1 })
	tk := sn.Takes[0]
	if ls := tk.Meta.Settings.LoRAs; len(ls) != 1 || ls[0].Path != turbo || ls[0].Strength != 0.75 || tk.Meta.Settings.Turbo != 6 {
		t.Fatalf("take settings %+v", tk.Meta.Settings)
	}
	e.s.Compose().RemoveLoRA(turbo)
	e.s.Compose().SetTurbo(0)
	e.settle(func(sn studio.Snapshot) bool {
		return len(sn.Draft.Settings.LoRAs) == 0 && sn.Draft.Settings.Turbo == 0
	})
	e.s.Takes().UseSettings(tk.ID)
	sn = e.settle(func(sn studio.Snapshot) bool { return len(sn.Draft.Settings.LoRAs) == 1 })
	if l := sn.Draft.Settings.LoRAs[0]; l.Path != turbo || !l.On || l.Strength != 0.75 || sn.Draft.Settings.Turbo != 6 {
		t.Errorf("restored %+v turbo %d", sn.Draft.Settings.LoRAs, sn.Draft.Settings.Turbo)
	}
	// Settings restored from disk (no summaries) read the files again.
	st := sn.Draft.Settings
	st.LoRAs = []studio.LoRAChoice{{Path: turbo, Strength: 0.5, On: true}}
	e.s.Compose().SetSettings(st)
	sn = e.settle(func(sn studio.Snapshot) bool { return sn.Draft.Settings.LoRAs[0].Strength == 0.5 })
	if l := sn.Draft.Settings.LoRAs[0]; l.Summary == "" || !l.On {
		t.Errorf("restored settings: %+v", l)
	}
	// A LoRA that has gone since the take comes back switched off, with a warning.
	os.Remove(turbo)
	e.s.Takes().UseSettings(tk.ID)
	sn = e.settle(func(sn studio.Snapshot) bool {
		return len(sn.Draft.Settings.LoRAs) == 1 && !sn.Draft.Settings.LoRAs[0].On
	})
	if sn.Draft.Settings.LoRAs[0].Problem == "" {
		t.Errorf("a missing LoRA has no problem: %+v", sn.Draft.Settings.LoRAs[0])
	}
}
