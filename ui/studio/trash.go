package studio

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// MoveToTrash moves a file or folder to the user's Trash: ~/.Trash on macOS
// (the folder Finder shows; "Put Back" needs Finder's own API, which the
// darwin layer may substitute), the freedesktop.org trash
// (~/.local/share/Trash, with a .trashinfo record) elsewhere. It never
// deletes: when the move is impossible (another volume, no trash folder) it
// returns an error and leaves the item where it was.
func MoveToTrash(path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	if _, err := os.Lstat(abs); err != nil {
		return fmt.Errorf("studio: move to Trash: %w", err)
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return fmt.Errorf("studio: move to Trash: %w", err)
	}
	if runtime.GOOS == "darwin" {
		return moveUnique(abs, filepath.Join(home, ".Trash"))
	}
	data := os.Getenv("XDG_DATA_HOME")
	if data == "" {
		data = filepath.Join(home, ".local", "share")
	}
	trash := filepath.Join(data, "Trash")
	files, info := filepath.Join(trash, "files"), filepath.Join(trash, "info")
	if err := os.MkdirAll(files, 0o700); err != nil {
		return fmt.Errorf("studio: move to Trash: %w", err)
	}
	if err := os.MkdirAll(info, 0o700); err != nil {
		return fmt.Errorf("studio: move to Trash: %w", err)
	}
	name := filepath.Base(abs)
	for i := 2; ; i++ {
		rec := filepath.Join(info, name+".trashinfo")
		f, err := os.OpenFile(rec, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			name = fmt.Sprintf("%s.%d", filepath.Base(abs), i)
			continue
		}
		if err != nil {
			return fmt.Errorf("studio: move to Trash: %w", err)
		}
		u := (&url.URL{Path: abs}).EscapedPath()
		_, err = fmt.Fprintf(f, "[Trash Info]\nPath=%s\nDeletionDate=%s\n", u, time.Now().Format("2006-01-02T15:04:05"))
		f.Close()
		if err == nil {
			err = os.Rename(abs, filepath.Join(files, name))
		}
		if err != nil {
			os.Remove(rec)
			return fmt.Errorf("studio: move to Trash: %w", err)
		}
		return nil
	}
}

func moveUnique(src, dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("studio: move to Trash: %w", err)
	}
	base := filepath.Base(src)
	name := base
	for i := 2; ; i++ {
		dst := filepath.Join(dir, name)
		if _, err := os.Lstat(dst); errors.Is(err, fs.ErrNotExist) {
			if err := os.Rename(src, dst); err != nil {
				return fmt.Errorf("studio: move to Trash: %w", err)
			}
			return nil
		}
		ext := filepath.Ext(base)
		name = fmt.Sprintf("%s %d%s", strings.TrimSuffix(base, ext), i, ext)
	}
}
