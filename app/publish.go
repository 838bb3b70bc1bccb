package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// takeStage holds the outputs of one take while they are written: every
// output goes into a hidden staging folder beside its destination (the same
// file system, so publishing is a rename) and nothing appears at a
// destination until publish moves them all, the take record included. A
// failed publish puts back what it moved and what it replaced, so the
// outputs of a take exist all together or not at all.
type takeStage struct {
	stages  map[string]string // destination folder → its staging folder
	items   []stageItem       // staged → final, in publish order
	created []string          // folders made for the outputs
}

// stageItem is one rename of the publication.
type stageItem struct {
	staged, final string
	// backup is where a replaced (or pruned, with staged "") file was
	// moved aside; restored when the publication fails.
	backup string
	moved  bool
}

func newTakeStage() *takeStage { return &takeStage{stages: map[string]string{}} }

// stagedPath returns where the output final is written while staged,
// creating the destination folder and its staging folder when missing.
func (s *takeStage) stagedPath(final string) (string, error) {
	st, err := s.stageDir(filepath.Dir(final))
	if err != nil {
		return "", err
	}
	return filepath.Join(st, filepath.Base(final)), nil
}

// stageDir returns dir's staging folder, creating both when missing.
func (s *takeStage) stageDir(dir string) (string, error) {
	if st, ok := s.stages[dir]; ok {
		return st, nil
	}
	if err := s.ensureDir(dir); err != nil {
		return "", err
	}
	st, err := os.MkdirTemp(dir, ".h3studio-take-*.part")
	if err != nil {
		return "", fmt.Errorf("cannot write into %s: %w", dir, err)
	}
	s.stages[dir] = st
	return st, nil
}

// add schedules the staged file or folder to be published at final.
func (s *takeStage) add(staged, final string) {
	s.items = append(s.items, stageItem{staged: staged, final: final})
}

// prune schedules an existing file to be removed by the publication (a
// stale frame of an earlier, longer take).
func (s *takeStage) prune(path string) { s.items = append(s.items, stageItem{final: path}) }

// addFramesFolder schedules a staged frames folder: moved into place as a
// whole when dir is new, else frame by frame into the existing folder
// (which checkOutputSafety has found to be a folder H3 Studio wrote), its
// frames numbered past the new take's last removed.
func (s *takeStage) addFramesFolder(staged, dir string) error {
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		s.add(staged, dir)
		return nil
	}
	ents, err := os.ReadDir(staged)
	if err != nil {
		return err
	}
	newFrames := 0
	for _, e := range ents {
		if n, ok := frameNumber(e.Name()); ok && n > newFrames {
			newFrames = n
		}
		s.add(filepath.Join(staged, e.Name()), filepath.Join(dir, e.Name()))
	}
	ff, err := readFramesFolder(dir)
	if err != nil {
		return err
	}
	if ff.h3Take {
		for _, p := range ff.frames {
			if n, _ := frameNumber(filepath.Base(p)); n > newFrames && n <= ff.takeCount {
				s.prune(p)
			}
		}
	}
	return nil
}

// publish moves every staged output into place. On failure everything it
// moved goes back and the error says so; the staging folders are removed
// either way.
func (s *takeStage) publish() error {
	defer s.discard()
	for i := range s.items {
		if err := s.place(i); err != nil {
			rerr := s.rollback(i)
			if rerr != nil {
				return fmt.Errorf("%w; putting back what was already moved failed too: %v", err, rerr)
			}
			return fmt.Errorf("%w; nothing was written (files it would have replaced are as they were)", err)
		}
	}
	return nil
}

func (s *takeStage) place(i int) error {
	it := &s.items[i]
	if fi, err := os.Lstat(it.final); err == nil {
		if fi.IsDir() {
			// Only a new frames folder is moved as a whole: an existing
			// folder is never replaced.
			return fmt.Errorf("cannot write %s: a folder is in the way", it.final)
		}
		st, err := s.stageDir(filepath.Dir(it.final))
		if err != nil {
			return err
		}
		it.backup = filepath.Join(st, fmt.Sprintf(".replaced-%d-%s", i, filepath.Base(it.final)))
		if err := os.Rename(it.final, it.backup); err != nil {
			it.backup = ""
			return fmt.Errorf("cannot replace %s: %w", it.final, err)
		}
	}
	if it.staged == "" {
		return nil
	}
	if err := os.Rename(it.staged, it.final); err != nil {
		return fmt.Errorf("cannot move %s into place: %w", it.final, err)
	}
	it.moved = true
	return nil
}

// rollback undoes items[0..n] in reverse order.
func (s *takeStage) rollback(n int) error {
	var errs []error
	for i := n; i >= 0; i-- {
		it := &s.items[i]
		if it.moved {
			if err := os.Rename(it.final, it.staged); err != nil {
				errs = append(errs, err)
			}
		}
		if it.backup != "" {
			if err := os.Rename(it.backup, it.final); err != nil {
				errs = append(errs, fmt.Errorf("%s is left at %s: %w", it.final, it.backup, err))
			}
		}
	}
	return errors.Join(errs...)
}

// discard removes the staging folders (and what is still in them) and the
// output folders made for this take where they stayed empty.
func (s *takeStage) discard() {
	dirs := make([]string, 0, len(s.stages))
	for _, st := range s.stages {
		dirs = append(dirs, st)
	}
	sort.Strings(dirs)
	for _, st := range dirs {
		if strings.HasPrefix(filepath.Base(st), ".h3studio-take-") {
			os.RemoveAll(st)
		}
	}
	s.stages = map[string]string{}
	for i := len(s.created) - 1; i >= 0; i-- {
		removeEmptyTree(s.created[i])
	}
}

// ensureDir creates dir (and its parents) when missing, remembering the
// topmost folder it made.
func (s *takeStage) ensureDir(dir string) error {
	if dir == "" || dir == "." {
		return nil
	}
	if st, err := os.Stat(dir); err == nil {
		if !st.IsDir() {
			return fmt.Errorf("%s exists and is not a folder", dir)
		}
		return nil
	}
	top := dir
	for {
		parent := filepath.Dir(top)
		if parent == top {
			break
		}
		if _, err := os.Stat(parent); err == nil {
			break
		}
		top = parent
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("cannot create %s: %w", dir, err)
	}
	s.created = append(s.created, top)
	return nil
}

// removeEmptyTree removes dir and the folders under it, where empty.
func removeEmptyTree(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if e.IsDir() {
			removeEmptyTree(filepath.Join(dir, e.Name()))
		}
	}
	os.Remove(dir)
}
