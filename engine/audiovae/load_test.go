package audiovae

import (
	"reflect"
	"testing"

	"h3studio/engine/compute/cpu"
	"h3studio/engine/safetensors"
)

// TestLoadLeavesConfig checks that Load keeps its own copy of the config (the
// fixtures hold the decoder only) and
// leaves the caller's as it was read, in both layouts.
func TestLoadLeavesConfig(t *testing.T) {
	for _, dir := range []string{"testdata/original/audio_vae", "testdata/diffusers/audio_vae"} {
		cfg, err := ReadConfig(dir)
		if err != nil {
			t.Fatal(err)
		}
		want, err := ReadConfig(dir)
		if err != nil {
			t.Fatal(err)
		}
		b := cpu.New(cpu.Options{})
		m, ck, err := safetensors.BindDir("audiovae", dir, b, func(w *safetensors.Binder) (*Model, error) { return Load(b, w, cfg, &Options{DecoderOnly: true}) })
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		m.ck = ck
		if !reflect.DeepEqual(cfg, want) || m.Config == cfg || !reflect.DeepEqual(m.Config, want) {
			t.Errorf("%s: after Load the config passed in is %+v and the model's %+v, want both %+v", dir, *cfg, *m.Config, *want)
		}
		if err := m.Close(); err != nil {
			t.Error(err)
		}
	}
}
