package hfhub

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
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
				got, n, err := hashFileCtx(ctx, e.file, e.lfs)
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

type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(b []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(b)
}

func hashFileCtx(ctx context.Context, p string, lfs bool) (string, int64, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", 0, err
	}
	h := newHash(lfs, st.Size())
	n, err := io.CopyBuffer(h, ctxReader{ctx, f}, make([]byte, 1<<20))
	if err != nil {
		return "", n, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}
