package hfhub

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// RemovalSet is what removing the snapshot at path deletes. A plain folder
// is removed whole. In the HF cache: the whole repo folder when it is the
// only snapshot, else the snapshot folder and the blobs no other snapshot
// links to (refs pointing at it are left for huggingface_hub to re-resolve).
func RemovalSet(path string, inCache bool) ([]string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	if !inCache {
		return []string{abs}, nil
	}
	snaps := filepath.Dir(abs)
	repoDir := filepath.Dir(snaps)
	if filepath.Base(snaps) != "snapshots" {
		return nil, fmt.Errorf("%s is not a snapshot of an HF cache", path)
	}
	others, err := os.ReadDir(snaps)
	if err != nil {
		return nil, err
	}
	if len(others) <= 1 {
		return []string{repoDir}, nil
	}
	used := map[string]bool{}
	for _, o := range others {
		if o.Name() == filepath.Base(abs) {
			continue
		}
		for b := range linkedBlobs(filepath.Join(snaps, o.Name())) {
			used[b] = true
		}
	}
	out := []string{abs}
	for b := range linkedBlobs(abs) {
		if !used[b] {
			out = append(out, b)
		}
	}
	return out, nil
}

// linkedBlobs are the files the symlinks under dir resolve to.
func linkedBlobs(dir string) map[string]bool {
	out := map[string]bool{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.Type()&fs.ModeSymlink == 0 {
			return nil
		}
		if real, err := filepath.EvalSymlinks(p); err == nil {
			out[real] = true
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return nil
	})
	return out
}
