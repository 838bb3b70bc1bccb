//go:build !darwin

package main

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// moveToTrash moves path into the user's trash as the freedesktop.org
// Trash specification describes ($XDG_DATA_HOME/Trash/files and a
// .trashinfo beside it in info/), so file managers can restore it.
func moveToTrash(path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	data := os.Getenv("XDG_DATA_HOME")
	if data == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return err
		}
		data = filepath.Join(home, ".local", "share")
	}
	trash := filepath.Join(data, "Trash")
	if err := os.MkdirAll(filepath.Join(trash, "files"), 0o700); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(trash, "info"), 0o700); err != nil {
		return err
	}
	name := filepath.Base(abs)
	for i := 2; ; i++ {
		info, err := os.OpenFile(filepath.Join(trash, "info", name+".trashinfo"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if os.IsExist(err) {
			name = filepath.Base(abs) + "." + strconv.Itoa(i)
			continue
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(info, "[Trash Info]\nPath=%s\nDeletionDate=%s\n", (&url.URL{Path: abs}).EscapedPath(), time.Now().Format("2006-01-02T15:04:05"))
		info.Close()
		break
	}
	if err := os.Rename(abs, filepath.Join(trash, "files", name)); err != nil {
		os.Remove(filepath.Join(trash, "info", name+".trashinfo"))
		return fmt.Errorf("move %s to %s: %w", abs, trash, err)
	}
	return nil
}
