package testmodel

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"h3studio/engine/audiovae"
	"h3studio/engine/compute/cpu"
	"h3studio/engine/dit"
	"h3studio/engine/qwen3vl"
	"h3studio/engine/snapshot"
	"h3studio/engine/tokenizer"
	"h3studio/engine/videovae"
)

// writeDemo writes the demo checkpoint into a fresh temporary folder.
func writeDemo(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "demo")
	if err := Write(dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestWriteLoadsEveryComponent writes the checkpoint and loads every
// component of both partitions with the engine's own loaders (strict
// binding: nothing missing, nothing left over).
func TestWriteLoadsEveryComponent(t *testing.T) {
	dir := writeDemo(t)
	snap, err := snapshot.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	b := cpu.New(cpu.Options{})
	for _, part := range snapshot.Partitions {
		find := func(k snapshot.Kind) *snapshot.Component {
			c := snap.Find(part, k)
			if c == nil {
				t.Fatalf("%s: no %s", part, k)
			}
			return c
		}
		tok, err := tokenizer.Load(find(snapshot.Tokenizer).Dir)
		if err != nil {
			t.Fatalf("%s tokenizer: %v", part, err)
		}
		te := find(snapshot.TextEncoder)
		q, err := qwen3vl.Open(b, te.ConfigDir, te.Dir, nil)
		if err != nil {
			t.Fatalf("%s text encoder: %v", part, err)
		}
		if q.Layers() != 4 {
			t.Errorf("text encoder runs %d layers, want round(50/64·5) = 4", q.Layers())
		}
		if tok.Len() > q.Config().Text.VocabSize {
			t.Errorf("tokenizer has %d ids, the text encoder's vocabulary %d", tok.Len(), q.Config().Text.VocabSize)
		}
		for name, id := range map[string]int64{"<|image_pad|>": q.Config().ImageTokenID, "<|video_pad|>": q.Config().VideoTokenID,
			"<|vision_start|>": q.Config().VisionStartTokenID, "<|vision_end|>": q.Config().VisionEndTokenID} {
			if got, ok := tok.TokenID(name); !ok || int64(got) != id {
				t.Errorf("%s: tokenizer id %d (%v), config %d", name, got, ok, id)
			}
		}
		for _, extra := range []string{"<d>", "</d>", "<|cutoff|>"} {
			if _, ok := tok.TokenID(extra); !ok {
				t.Errorf("H3 token %s is not declared", extra)
			}
		}
		q.Close()
		tr := find(snapshot.Transformer)
		cfg, err := dit.ReadConfig(tr.ConfigDir)
		if err != nil {
			t.Fatal(err)
		}
		if cfg != withKeys(DiTConfig(), dit.OriginalKeys) {
			t.Errorf("transformer config %+v, want %+v", cfg, DiTConfig())
		}
		m, err := dit.Open(b, tr.ConfigDir, tr.Dir, nil)
		if err != nil {
			t.Fatalf("%s transformer: %v", part, err)
		}
		if err := m.BindCore(nil); err != nil {
			t.Fatal(err)
		}
		if err := m.Close(); err != nil {
			t.Fatal(err)
		}
		vv, err := videovae.Open(b, find(snapshot.VideoVAE).ConfigDir, find(snapshot.VideoVAE).Dir, nil)
		if err != nil {
			t.Fatalf("%s video VAE: %v", part, err)
		}
		c := vv.Config
		if c.SpatialRatio() != 16 || c.TemporalRatio() != 4 || c.LatentChannels != 24 {
			t.Errorf("video VAE geometry %d×/%d×/%d channels", c.SpatialRatio(), c.TemporalRatio(), c.LatentChannels)
		}
		vv.Close()
		av, err := audiovae.Open(b, find(snapshot.AudioVAE).ConfigDir, find(snapshot.AudioVAE).Dir, nil)
		if err != nil {
			t.Fatalf("%s audio VAE: %v", part, err)
		}
		if av.Config.SampleRate != 32000 || av.Config.Hop() != 800 || av.Config.LatentChannels != 32 {
			t.Errorf("audio VAE %d Hz hop %d, %d channels", av.Config.SampleRate, av.Config.Hop(), av.Config.LatentChannels)
		}
		av.Close()
	}
	if m, ok := ReadMarker(dir); !ok || !m.Demo || m.Version != Version {
		t.Errorf("marker %+v %v", m, ok)
	}
}

func withKeys(c dit.Config, k dit.KeySet) dit.Config { c.Keys = k; return c }

// TestWriteIsDeterministic writes twice and compares every file.
func TestWriteIsDeterministic(t *testing.T) {
	a, b := writeDemo(t), writeDemo(t)
	n := 0
	err := filepath.Walk(a, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(a, p)
		x, _ := os.ReadFile(p)
		y, err := os.ReadFile(filepath.Join(b, rel))
		if err != nil || !bytes.Equal(x, y) {
			t.Errorf("%s differs between two writes (%v)", rel, err)
		}
		n++
		return nil
	})
	if err != nil || n < 30 {
		t.Fatalf("walked %d files: %v", n, err)
	}
}

// TestEnsure writes once, reuses, and replaces a damaged or stale copy;
// Write refuses an existing folder and leaves no temporary folder behind.
func TestEnsure(t *testing.T) {
	cache := t.TempDir()
	dir, err := Ensure(cache)
	if err != nil {
		t.Fatal(err)
	}
	stamp := filepath.Join(dir, "FL2VA", "stamp")
	os.WriteFile(stamp, nil, 0o644)
	if again, err := Ensure(cache); err != nil || again != dir {
		t.Fatalf("second Ensure: %q %v", again, err)
	}
	if _, err := os.Stat(stamp); err != nil {
		t.Error("Ensure rewrote a complete checkpoint")
	}
	os.RemoveAll(filepath.Join(dir, "Ref2VA", "audio_vae"))
	if _, err := Ensure(cache); err != nil {
		t.Fatal(err)
	}
	if !complete(dir) {
		t.Error("a damaged checkpoint was not replaced")
	}
	if err := Write(dir); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("Write over an existing folder: %v", err)
	}
	entries, _ := os.ReadDir(cache)
	for _, e := range entries {
		if e.Name() != DirName {
			t.Errorf("left behind in the cache folder: %s", e.Name())
		}
	}
}

// TestWriteModes: the demo checkpoint is an ordinary readable folder (its
// root was os.MkdirTemp's 0700 and its shards os.CreateTemp's 0600).
func TestWriteModes(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	dir := writeDemo(t)
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		want := os.FileMode(0o644)
		if info.IsDir() {
			want = 0o755
		}
		if got := info.Mode().Perm(); got != want {
			t.Errorf("%s: mode %v, want %v", p, got, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
