package hfhub

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"h3studio/engine/snapshot"
)

// Discard deletes what a verification found wrong, so that a download
// fetches it again: in the HF cache the blob a bad path links to, in a
// plain folder the file and its .metadata record.
func Discard(rep *VerifyReport) error {
	var errs []error
	for _, b := range rep.Bad {
		p := filepath.Join(rep.Root, filepath.FromSlash(b.Path))
		if real, err := filepath.EvalSymlinks(p); err == nil && real != p {
			if err := os.Remove(real); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
			continue
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
		os.Remove(metadataPath(rep.Root, b.Path))
	}
	return errors.Join(errs...)
}

// Source is where a snapshot folder's files came from, for downloading into it again.
type Source struct {
	Repo, Revision string
	HubCache       string // set for an HF cache snapshot
	Dir            string // set for a plain folder
	Tasks          []snapshot.Task
}

// SourceOf works out the repo, revision and tasks of the snapshot at root
// (a cache snapshot, or a folder whose records name its commit).
func SourceOf(root, commit string) (Source, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return Source{}, err
	}
	s := Source{Repo: Repo, Revision: commit, Tasks: DefaultTasks}
	if st, err := os.Stat(filepath.Join(abs, string(snapshot.Ref2VA))); err == nil && st.IsDir() {
		s.Tasks = snapshot.Tasks
	}
	snaps := filepath.Dir(abs)
	repoDir := filepath.Dir(snaps)
	if name, ok := strings.CutPrefix(filepath.Base(repoDir), "models--"); ok && filepath.Base(snaps) == "snapshots" && isHex(filepath.Base(abs), 40) {
		s.Repo = strings.Replace(name, "--", "/", 1)
		s.Revision = filepath.Base(abs)
		s.HubCache = filepath.Dir(repoDir)
		return s, nil
	}
	if !isHex(s.Revision, 40) {
		return Source{}, fmt.Errorf("%s carries no record of the commit its files came from", root)
	}
	s.Dir = abs
	return s, nil
}

// Repair deletes what rep found wrong in its snapshot and downloads it
// again from the same commit; the fresh bytes are verified as they arrive.
func Repair(ctx context.Context, c *Client, rep *VerifyReport, prog *Progress) (*Result, error) {
	src, err := SourceOf(rep.Root, rep.Commit)
	if err != nil {
		return nil, err
	}
	if err := Discard(rep); err != nil {
		return nil, fmt.Errorf("delete the damaged files: %w", err)
	}
	return Download(ctx, c, &Request{Repo: src.Repo, Revision: src.Revision, Tasks: src.Tasks, Dir: src.Dir, HubCache: src.HubCache, Progress: prog})
}
