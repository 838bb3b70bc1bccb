package atomicfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteFile: a new file is 0644, a replaced one keeps its permission
// and gets the new content, and a failed write leaves nothing behind.
func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	fresh := filepath.Join(dir, "fresh.json")
	if err := WriteFile(fresh, []byte("{}\n")); err != nil {
		t.Fatal(err)
	}
	kept := filepath.Join(dir, "kept.json")
	if err := os.WriteFile(kept, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(kept, 0o640); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(kept, []byte("new")); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]os.FileMode{fresh: 0o644, kept: 0o640} {
		st, err := os.Stat(path)
		if err != nil || st.Mode().Perm() != want {
			t.Errorf("%s: %v %v, want mode %v", filepath.Base(path), st.Mode().Perm(), err, want)
		}
	}
	if b, _ := os.ReadFile(kept); string(b) != "new" {
		t.Errorf("replaced file holds %q", b)
	}
	// The destination is a folder: the rename fails, nothing stays.
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o755)
	if err := WriteFile(sub, []byte("x")); err == nil || !strings.Contains(err.Error(), "sub") {
		t.Errorf("writing over a folder: %v", err)
	}
	names, _ := os.ReadDir(dir)
	for _, n := range names {
		if strings.HasPrefix(n.Name(), ".") {
			t.Errorf("left behind: %s", n.Name())
		}
	}
}
