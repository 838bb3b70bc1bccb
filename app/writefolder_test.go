package main

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteFolderFailure: a write that fails leaves no folder behind and
// returns its error; one that succeeds is renamed into place.
func TestWriteFolderFailure(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "snap")
	boom := errors.New("boom")
	err := writeFolder(dir, func(tmp string) error {
		if err := os.WriteFile(filepath.Join(tmp, "partial"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Errorf("writeFolder returned %v, want the write's error", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("a failed write left %s (stat: %v)", dir, err)
	}
	if entries, _ := os.ReadDir(filepath.Dir(dir)); len(entries) != 0 {
		t.Errorf("a failed write left %d entries beside it", len(entries))
	}
	if err := writeFolder(dir, func(tmp string) error { return os.WriteFile(filepath.Join(tmp, "ok"), nil, 0o644) }); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "ok")); err != nil {
		t.Errorf("a successful write: %v", err)
	}
}
