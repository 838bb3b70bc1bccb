package videovae

import (
	"reflect"
	"testing"

	"h3studio/engine/compute/cpu"
	"h3studio/engine/safetensors"
)

// TestLoadLeavesConfig checks that Load completes a copy of the config from
// the weights and leaves the caller's config as it was read, in both layouts
// (the fixtures hold the decoder only).
func TestLoadLeavesConfig(t *testing.T) {
	for _, dirs := range [][2]string{
		{"testdata/original/video_vae", "testdata/original/video_vae/source"},
		{"testdata/diffusers/vae", "testdata/diffusers/vae"},
	} {
		cfg, err := ReadConfig(dirs[0], dirs[1])
		if err != nil {
			t.Fatal(err)
		}
		want, err := ReadConfig(dirs[0], dirs[1])
		if err != nil {
			t.Fatal(err)
		}
		b := cpu.New(cpu.Options{})
		m, ck, err := safetensors.BindDir("videovae", dirs[1], b, func(w *safetensors.Binder) (*Model, error) { return Load(b, w, cfg, &Options{DecoderOnly: true}) })
		if err != nil {
			t.Fatalf("%s: %v", dirs[0], err)
		}
		m.ck = ck
		if !reflect.DeepEqual(cfg, want) {
			t.Errorf("%s: Load changed the config passed in:\n got %+v\nwant %+v", dirs[0], *cfg, *want)
		}
		if m.Config == cfg || m.Config.DecoderFFNHidden <= 0 || m.Config.DecoderRegisters <= 0 {
			t.Errorf("%s: the model's config %+v is not a completed copy", dirs[0], *m.Config)
		}
		if err := m.Close(); err != nil {
			t.Error(err)
		}
	}
}
