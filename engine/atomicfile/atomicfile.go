// Package atomicfile writes files so that a reader never sees a partial one
// and a failure leaves nothing behind: through a temporary file in the same
// folder, synced, then renamed over the destination. It is the one place
// that knows the permission such a file ends with.
package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
)

// Mode is the permission a file written over path gets: the file it
// replaces keeps its own, a new one is readable by everyone (0644) as
// os.WriteFile makes it — os.CreateTemp's 0600 would otherwise stay on
// every video, sound, sidecar and checkpoint written.
func Mode(path string) os.FileMode {
	if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() {
		return st.Mode().Perm()
	}
	return 0o644
}

// CreateTemp creates the temporary file a write of path goes through, in
// path's folder and hidden.
func CreateTemp(path, pattern string) (*os.File, error) {
	return os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+pattern)
}

// Commit gives tmp (a file from CreateTemp for path) path's final
// permission, syncs and closes it and renames it over path. On failure tmp
// is removed.
func Commit(tmp *os.File, path string) error {
	err := tmp.Chmod(Mode(path))
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// WriteFile writes data to path atomically.
func WriteFile(path string, data []byte) error {
	tmp, err := CreateTemp(path, ".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := Commit(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
