package hfhub

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"h3studio/engine/atomicfile"
)

// RepoFolderName is the cache folder of a model repo: models--ORG--NAME.
func RepoFolderName(repo string) string {
	return "models--" + strings.Join(strings.Split(repo, "/"), "--")
}

// content is one distinct file content of a download: every path that holds it.
type content struct {
	Etag  string
	Size  int64
	LFS   bool
	Paths []string
}

// store is where a download puts its files: the HF cache or a plain folder.
type store interface {
	// root is the folder that holds the repo's paths (a snapshot folder or --dir).
	root() string
	// partial is the stable name of c's partial download, the same in every process.
	partial(c *content) string
	// held returns the file that already holds c's bytes, or "".
	held(c *content) string
	// publish moves a verified partial into place as c's bytes.
	publish(c *content, partial string) (string, error)
	// place makes every path of c show the bytes in src (a file held or published).
	place(c *content, src string) error
	// finish records the download once every file is placed.
	finish() error
}

// cacheStore is the HF cache layout: blobs named by etag, snapshot paths
// as relative symlinks to them, refs/<name> holding the commit.
type cacheStore struct {
	repoDir, commit, rev string
}

func newCacheStore(hubCache, repo, commit, rev string) *cacheStore {
	return &cacheStore{repoDir: filepath.Join(hubCache, RepoFolderName(repo)), commit: commit, rev: rev}
}

func (s *cacheStore) root() string { return filepath.Join(s.repoDir, "snapshots", s.commit) }
func (s *cacheStore) blob(c *content) string {
	return filepath.Join(s.repoDir, "blobs", c.Etag)
}

// Partials live in a hidden folder of the repo folder: huggingface_hub
// neither scans nor cleans it, and it is on the blobs' volume.
func (s *cacheStore) partial(c *content) string {
	return filepath.Join(s.repoDir, ".h3studio-partial", c.Etag+".part")
}

func (s *cacheStore) held(c *content) string {
	if st, err := os.Stat(s.blob(c)); err == nil && st.Mode().IsRegular() && st.Size() == c.Size {
		return s.blob(c)
	}
	return ""
}

func (s *cacheStore) publish(c *content, partial string) (string, error) {
	return movePartial(partial, s.blob(c))
}

func (s *cacheStore) place(c *content, src string) error {
	for _, p := range c.Paths {
		link := filepath.Join(s.root(), filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
			return err
		}
		target, err := filepath.Rel(filepath.Dir(link), src)
		if err != nil {
			return err
		}
		if cur, err := os.Readlink(link); err == nil && cur == target {
			continue
		}
		tmp := filepath.Join(filepath.Dir(link), "."+filepath.Base(link)+".h3link")
		os.Remove(tmp)
		if err := os.Symlink(target, tmp); err != nil {
			return err
		}
		if err := os.Rename(tmp, link); err != nil {
			os.Remove(tmp)
			return err
		}
	}
	return nil
}

func (s *cacheStore) finish() error {
	if s.rev == s.commit {
		return nil
	}
	ref := filepath.Join(s.repoDir, "refs", filepath.FromSlash(s.rev))
	if b, err := os.ReadFile(ref); err == nil && strings.TrimSpace(string(b)) == s.commit {
		return nil // already recorded: a read-only cache stays usable
	}
	if err := os.MkdirAll(filepath.Dir(ref), 0o755); err != nil {
		return err
	}
	return atomicfile.WriteFile(ref, []byte(s.commit))
}

// dirStore is a plain folder (`hf download --local-dir`): real files, copies
// of one content hard-linked, and huggingface_hub's metadata per file in
// .cache/huggingface/download/<path>.metadata (commit, etag, timestamp).
type dirStore struct {
	dir, commit string
}

func (s *dirStore) root() string { return s.dir }
func (s *dirStore) partial(c *content) string {
	return filepath.Join(s.dir, ".cache", "h3studio", "partial", c.Etag+".part")
}

func metadataPath(dir, p string) string {
	return filepath.Join(dir, ".cache", "huggingface", "download", filepath.FromSlash(p)+".metadata")
}

// localMetadata is one .metadata file of a --local-dir folder.
type localMetadata struct {
	Commit, Etag string
	Time         time.Time
}

func readMetadata(dir, p string) (localMetadata, error) {
	b, err := os.ReadFile(metadataPath(dir, p))
	if err != nil {
		return localMetadata{}, err
	}
	return parseMetadata(b)
}

// parseMetadata reads huggingface_hub's three lines: commit, etag, unix time.
func parseMetadata(b []byte) (localMetadata, error) {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) < 2 {
		return localMetadata{}, fmt.Errorf("metadata has %d lines, want commit, etag and time", len(lines))
	}
	m := localMetadata{Commit: strings.TrimSpace(lines[0]), Etag: strings.TrimSpace(lines[1])}
	if !isHex(m.Commit, 40) || !(isHex(m.Etag, 40) || isHex(m.Etag, 64)) {
		return localMetadata{}, fmt.Errorf("metadata commit %q / etag %q are not hex hashes", trunc(m.Commit, 50), trunc(m.Etag, 70))
	}
	if len(lines) > 2 {
		if f, err := strconv.ParseFloat(strings.TrimSpace(lines[2]), 64); err == nil {
			m.Time = time.Unix(int64(f), 0)
		}
	}
	return m, nil
}

func (s *dirStore) writeMetadata(p, etag string) error {
	mp := metadataPath(s.dir, p)
	if err := os.MkdirAll(filepath.Dir(mp), 0o755); err != nil {
		return err
	}
	body := fmt.Sprintf("%s\n%s\n%.6f\n", s.commit, etag, float64(time.Now().UnixNano())/1e9)
	return atomicfile.WriteFile(mp, []byte(body))
}

func (s *dirStore) held(c *content) string {
	for _, p := range c.Paths {
		f := filepath.Join(s.dir, filepath.FromSlash(p))
		st, err := os.Stat(f)
		if err != nil || !st.Mode().IsRegular() || st.Size() != c.Size {
			continue
		}
		if m, err := readMetadata(s.dir, p); err == nil && m.Etag == c.Etag && !st.ModTime().After(m.Time.Add(time.Second)) {
			return f
		}
	}
	// A file the user put there without a record is adopted when its bytes are right.
	for _, p := range c.Paths {
		f := filepath.Join(s.dir, filepath.FromSlash(p))
		if st, err := os.Stat(f); err == nil && st.Mode().IsRegular() && st.Size() == c.Size {
			if ok, err := fileMatches(f, c.Etag, c.LFS); err == nil && ok {
				return f
			}
		}
	}
	return ""
}

func (s *dirStore) publish(c *content, partial string) (string, error) {
	return movePartial(partial, filepath.Join(s.dir, filepath.FromSlash(c.Paths[0])))
}

// movePartial renames a finished partial download to dst, readable by all,
// creating dst's folder first; it returns dst.
func movePartial(partial, dst string) (string, error) {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return "", err
	}
	if err := os.Chmod(partial, 0o644); err != nil {
		return "", err
	}
	if err := os.Rename(partial, dst); err != nil {
		return "", err
	}
	return dst, nil
}

func (s *dirStore) place(c *content, src string) error {
	sst, err := os.Stat(src)
	if err != nil {
		return err
	}
	for _, p := range c.Paths {
		dst := filepath.Join(s.dir, filepath.FromSlash(p))
		if st, err := os.Stat(dst); err == nil && os.SameFile(st, sst) {
			if err := s.writeMetadata(p, c.Etag); err != nil {
				return err
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		tmp := filepath.Join(filepath.Dir(dst), "."+filepath.Base(dst)+".h3link")
		os.Remove(tmp)
		if err := os.Link(src, tmp); err != nil {
			// No hard links here (another volume, a file system without them): a copy.
			if err := copyFile(src, tmp); err != nil {
				return err
			}
		}
		if err := os.Rename(tmp, dst); err != nil {
			os.Remove(tmp)
			return err
		}
		if err := s.writeMetadata(p, c.Etag); err != nil {
			return err
		}
	}
	return nil
}

func (s *dirStore) finish() error {
	gi := filepath.Join(s.dir, ".cache", "huggingface", ".gitignore")
	if _, err := os.Stat(gi); errors.Is(err, fs.ErrNotExist) {
		return atomicfile.WriteFile(gi, []byte("*\n"))
	}
	return nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		os.Remove(dst)
		return err
	}
	return out.Close()
}
