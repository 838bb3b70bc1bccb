package engine

import (
	"os"
	"path/filepath"
	"testing"
)

// TestWriteFileAtomicPermissions: a new sidecar is 0644 (not the 0600 of
// its temporary file), a replaced one keeps its permission, and nothing
// temporary is left beside it.
func TestWriteFileAtomicPermissions(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "take.json")
	if err := WriteFileAtomic(p, []byte("{}\n")); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(p); err != nil || st.Mode().Perm() != 0o644 {
		t.Errorf("new sidecar: %v %v, want 0644", st.Mode(), err)
	}
	os.Chmod(p, 0o640)
	if err := WriteFileAtomic(p, []byte("{\"a\":1}\n")); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(p); err != nil || st.Mode().Perm() != 0o640 {
		t.Errorf("replaced sidecar: %v %v, want its 0640 kept", st.Mode(), err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("folder holds %d entries, want only take.json", len(ents))
	}
}
