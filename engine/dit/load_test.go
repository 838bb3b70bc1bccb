package dit_test

import (
	"path/filepath"
	"testing"

	"h3studio/engine/compute/cpu"
	"h3studio/engine/dit"
	"h3studio/engine/safetensors"
)

// TestOpenFolder opens a transformer folder with nil options (the released
// mixed precision) and checks the model's config is the folder's.
func TestOpenFolder(t *testing.T) {
	dir := filepath.Join("testdata", fixtures[1].weights)
	want, err := dit.ReadConfig(dir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := dit.Open(cpu.New(cpu.Options{}), dir, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if m.Config() != want {
		t.Errorf("Open: config %+v, want %+v", m.Config(), want)
	}
	if err := m.BindCore(nil); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Error(err)
	}
}

// TestLoadLeavesConfig checks that Load neither changes the config passed
// in nor follows later changes to it.
func TestLoadLeavesConfig(t *testing.T) {
	l := load(t, fixtures[1])
	cfg := l.cfg
	b := cpu.New(cpu.Options{})
	m, err := dit.Load(b, safetensors.NewBinder("dit", l.ck, b), &cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if cfg != l.cfg {
		t.Errorf("Load changed the config passed in: %+v, want %+v", cfg, l.cfg)
	}
	cfg.NumLayers++
	if m.Config() != l.cfg {
		t.Errorf("the model's config follows the caller's: %+v, want %+v", m.Config(), l.cfg)
	}
}
