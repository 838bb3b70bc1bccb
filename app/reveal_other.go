//go:build !darwin

package main

import (
	"os"
	"os/exec"
	"path/filepath"
)

// reveal opens the folder holding a file (or the folder itself) in the
// desktop's file manager.
func reveal(path string) error {
	if st, err := os.Stat(path); err == nil && !st.IsDir() {
		path = filepath.Dir(path)
	}
	return exec.Command("xdg-open", path).Start()
}
