package safetensors

import (
	"os"
	"path/filepath"
	"testing"

	"h3studio/engine/compute"
)

// TestWriteModes: a written file is readable by everyone (0644) unless it
// replaces one, whose permission it keeps; os.CreateTemp's 0600 never stays.
func TestWriteModes(t *testing.T) {
	dir := t.TempDir()
	entries := []Entry{F32("w", compute.F32, compute.Shape{2}, []float32{1, 2})}
	fresh := filepath.Join(dir, "fresh.safetensors")
	if err := Write(fresh, entries, nil); err != nil {
		t.Fatal(err)
	}
	kept := filepath.Join(dir, "kept.safetensors")
	if err := os.WriteFile(kept, nil, 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(kept, 0o640); err != nil {
		t.Fatal(err)
	}
	if err := Write(kept, entries, nil); err != nil {
		t.Fatal(err)
	}
	if err := WriteSharded(dir, "model", entries, 1<<20); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]os.FileMode{
		fresh: 0o644,
		kept:  0o640,
		filepath.Join(dir, "model.safetensors.index.json"): 0o644,
	} {
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := st.Mode().Perm(); got != want {
			t.Errorf("%s: mode %v, want %v", filepath.Base(path), got, want)
		}
	}
	shards, _ := filepath.Glob(filepath.Join(dir, "model*.safetensors"))
	if len(shards) == 0 {
		t.Fatal("WriteSharded wrote no shard")
	}
	for _, p := range shards {
		if st, err := os.Stat(p); err != nil || st.Mode().Perm() != 0o644 {
			t.Errorf("%s: %v %v, want mode 0644", filepath.Base(p), st.Mode().Perm(), err)
		}
	}
}
