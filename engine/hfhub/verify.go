package hfhub

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"h3studio/engine/snapshot"
)

// Mismatch is a file whose bytes do not hash to what was recorded for it.
type Mismatch struct {
	Path string `json:"path"`
	Kind string `json:"kind"` // "sha256" or "git sha1"
	Want string `json:"want"`
	Got  string `json:"got"`
}

// VerifyReport is the result of Verify.
type VerifyReport struct {
	Root     string     `json:"root"`
	Commit   string     `json:"commit,omitempty"`
	Checked  int        `json:"checked"`  // files whose hash was compared
	Bytes    int64      `json:"bytes"`    // bytes hashed (each content once)
	Bad      []Mismatch `json:"bad"`      // wrong bytes
	Missing  []string   `json:"missing"`  // recorded but absent (a dangling symlink, a lost file)
	Unknown  []string   `json:"unknown"`  // present without any record of their hash
	Problems []string   `json:"problems"` // unreadable files and records
}

// OK reports whether every recorded file is present with the right bytes.
func (r *VerifyReport) OK() bool {
	return len(r.Bad) == 0 && len(r.Missing) == 0 && len(r.Problems) == 0
}

// expectation is what one repo path should hash to.
type expectation struct {
	path, file, etag string
	lfs              bool
}

// Verify re-hashes the snapshot at root against what was recorded when its
// files arrived: the blob names of an HF cache snapshot (etags), or the
// .metadata files of a --local-dir folder. Entries, when given (a tree
// listing), are the expectation instead, so that a folder without records
// can be checked against the Hub.
func Verify(ctx context.Context, root string, entries []Entry, parallel int) (*VerifyReport, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	st, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("verify %s: %w", root, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("verify %s: not a folder", root)
	}
	rep := &VerifyReport{Root: abs}
	var exp []expectation
	if entries != nil {
		for _, e := range entries {
			exp = append(exp, expectation{path: e.Path, file: filepath.Join(abs, filepath.FromSlash(e.Path)), etag: e.Etag(), lfs: e.LFS != nil})
		}
	} else {
		exp, err = recorded(abs, rep)
		if err != nil {
			return nil, err
		}
	}
	if parallel <= 0 {
		parallel = 4
	}
	// Each content is hashed once (hard links and shared blobs are one file).
	type job struct {
		key  string
		exps []expectation
	}
	groups := map[string]*job{}
	var order []string
	for _, e := range exp {
		fst, err := os.Stat(e.file)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				rep.Missing = append(rep.Missing, e.path)
			} else {
				rep.Problems = append(rep.Problems, fmt.Sprintf("%s: %v", e.path, err))
			}
			continue
		}
		key := fmt.Sprintf("%s|%v", e.etag, fileID(fst))
		if groups[key] == nil {
			groups[key] = &job{key: key}
			order = append(order, key)
		}
		groups[key].exps = append(groups[key].exps, e)
	}
	var mu sync.Mutex
	work := make(chan *job)
	var wg sync.WaitGroup
	for i := 0; i < parallel; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range work {
				e := j.exps[0]
				got, n, err := hashFile(ctx, e.file, e.lfs)
				mu.Lock()
				rep.Bytes += n
				for _, x := range j.exps {
					switch {
					case err != nil:
						rep.Problems = append(rep.Problems, fmt.Sprintf("%s: %v", x.path, err))
					case got != x.etag:
						rep.Checked++
						rep.Bad = append(rep.Bad, Mismatch{Path: x.path, Kind: hashKind(x.lfs), Want: x.etag, Got: got})
					default:
						rep.Checked++
					}
				}
				mu.Unlock()
			}
		}()
	}
	for _, k := range order {
		if ctx.Err() != nil {
			break
		}
		work <- groups[k]
	}
	close(work)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return rep, err
	}
	sort.Slice(rep.Bad, func(i, j int) bool { return rep.Bad[i].Path < rep.Bad[j].Path })
	sort.Strings(rep.Missing)
	sort.Strings(rep.Problems)
	sort.Strings(rep.Unknown)
	return rep, nil
}

// recorded collects the expectations a snapshot folder carries with it.
func recorded(root string, rep *VerifyReport) ([]expectation, error) {
	var exp []expectation
	commits := map[string]bool{}
	metaRoot := filepath.Join(root, ".cache", "huggingface", "download")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // vanished while walking
			}
			rep.Problems = append(rep.Problems, err.Error())
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if p != root && strings.HasPrefix(d.Name(), ".") {
				return fs.SkipDir
			}
			return nil
		}
		if strings.HasPrefix(d.Name(), ".") {
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			// An HF cache snapshot: the link's target is blobs/<etag>.
			target, err := os.Readlink(p)
			if err != nil {
				rep.Problems = append(rep.Problems, fmt.Sprintf("%s: %v", rel, err))
				return nil
			}
			etag := filepath.Base(target)
			if isHex(etag, 64) || isHex(etag, 40) {
				exp = append(exp, expectation{path: rel, file: p, etag: etag, lfs: len(etag) == 64})
				return nil
			}
		}
		if m, err := readMetadata(root, rel); err == nil {
			commits[m.Commit] = true
			exp = append(exp, expectation{path: rel, file: p, etag: m.Etag, lfs: len(m.Etag) == 64})
			return nil
		}
		rep.Unknown = append(rep.Unknown, rel)
		return nil
	})
	if err != nil {
		return nil, err
	}
	// Records of files that are no longer there.
	filepath.WalkDir(metaRoot, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".metadata") {
			return nil
		}
		rel, _ := filepath.Rel(metaRoot, strings.TrimSuffix(p, ".metadata"))
		if _, err := os.Lstat(filepath.Join(root, rel)); errors.Is(err, fs.ErrNotExist) {
			rep.Missing = append(rep.Missing, filepath.ToSlash(rel))
		}
		return nil
	})
	if len(commits) == 1 {
		for c := range commits {
			rep.Commit = c
		}
	} else if parent := filepath.Base(root); isHex(parent, 40) && filepath.Base(filepath.Dir(root)) == "snapshots" {
		rep.Commit = parent
	}
	return exp, nil
}

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
