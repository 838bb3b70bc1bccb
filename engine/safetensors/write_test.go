package safetensors

import (
	"os"
	"path/filepath"
	"strings"
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

// TestEntryRewrites: a stored tensor's Entry writes it again unchanged; an
// unknown name is an error naming the file.
func TestEntryRewrites(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src.safetensors")
	if err := Write(src, []Entry{F32("w", compute.BF16, compute.Shape{2, 3}, []float32{1, 2, 3, 4, 5, 6})}, nil); err != nil {
		t.Fatal(err)
	}
	f, err := Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	e, err := f.Entry("w")
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, "dst.safetensors")
	if err := Write(dst, []Entry{e}, nil); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(src)
	b, _ := os.ReadFile(dst)
	if string(a) != string(b) {
		t.Errorf("rewritten file differs:\n%q\n%q", a, b)
	}
	if _, err := f.Entry("nope"); err == nil || !strings.Contains(err.Error(), "src.safetensors") {
		t.Errorf("unknown tensor: %v", err)
	}
}
