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

// TestSidecarInputsAbsolute: conditioning files given relative to the
// working folder are recorded by absolute path (with their hash), since
// the sidecar is read from beside the output.
func TestSidecarInputsAbsolute(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	os.WriteFile("first.png", []byte("x"), 0o644)
	sc := NewSidecar(Result{Plan: Plan{Task: TaskFL2VA, Request: Request{First: "first.png"}}}, "test", "m", "CPU", "cpu")
	if len(sc.Inputs) != 1 || !filepath.IsAbs(sc.Inputs[0].Path) || filepath.Base(sc.Inputs[0].Path) != "first.png" || len(sc.Inputs[0].SHA256) != 64 {
		t.Errorf("inputs %+v", sc.Inputs)
	}
}
