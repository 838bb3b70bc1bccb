package request

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTurboPreset: --turbo N sets N passes, the exact path and the Turbo
// shifts (12/3 below the 768p class, 6/3 at 768p); explicit controls win.
func TestTurboPreset(t *testing.T) {
	lp := filepath.Join(t.TempDir(), "turbo.safetensors")
	if err := os.WriteFile(lp, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	l := []LoRA{{Path: lp, Strength: 1}}
	for _, c := range []struct {
		r                 Request
		steps             int
		videoShift, reuse float64
		layers            int
	}{
		{Request{Turbo: 4, LoRAs: l, Width: 960, Height: 544}, 4, 12, 1, 50},
		{Request{Turbo: 8, LoRAs: l, Width: 1344, Height: 768}, 8, 6, 1, 50},
		{Request{Turbo: 6, LoRAs: l, Width: 768, Height: 1344, Steps: 7, VideoShift: 9, Layers: 45}, 7, 9, 1, 45},
		{Request{Turbo: 6, LoRAs: l, Preset: PresetPreview}, 6, 12, 1, 50},
	} {
		p, err := Resolve(c.r, released, nil)
		if err != nil {
			t.Fatal(err)
		}
		r := p.Request
		if r.Steps != c.steps || r.VideoShift != c.videoShift || r.AudioShift != 3 || float64(r.Reuse) != c.reuse || r.Layers != c.layers || r.CoreReuse != 1 {
			t.Errorf("%+v resolved to steps %d shifts %g/%g reuse %d layers %d", c.r, r.Steps, r.VideoShift, r.AudioShift, r.Reuse, r.Layers)
		}
		if p.Forwards != c.steps {
			t.Errorf("turbo %d: %d forwards, want %d", c.r.Turbo, p.Forwards, c.steps)
		}
	}
	for _, c := range []struct {
		r    Request
		want string
	}{
		{Request{Turbo: 5}, "turbo 5 is not a Turbo preset"},
		{Request{LoRAs: []LoRA{{Path: filepath.Join(t.TempDir(), "missing.safetensors"), Strength: 1}}}, "missing.safetensors"},
		{Request{LoRAs: []LoRA{{Path: t.TempDir(), Strength: 1}}}, "is not a file"},
	} {
		if _, err := Resolve(c.r, released, nil); err == nil || !IsRequestError(err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want a request error with %q", c.r, err, c.want)
		}
	}
	p, err := Resolve(Request{Turbo: 4}, released, nil)
	if err != nil || !strings.Contains(strings.Join(p.Notes, "\n"), "Turbo LoRA") {
		t.Errorf("turbo without a LoRA: %v %v", p.Notes, err)
	}
}
