package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

// moveToTrash asks the Finder to move path to the Trash (so Put Back works).
func moveToTrash(path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	quoted := strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(abs)
	out, err := exec.Command("/usr/bin/osascript", "-e", `tell application "Finder" to delete POSIX file "`+quoted+`"`).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%w: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}
