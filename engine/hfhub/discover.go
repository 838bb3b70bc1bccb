package hfhub

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"h3studio/engine/atomicfile"
	"h3studio/engine/snapshot"
)

// Installed is a snapshot found on disk.
type Installed struct {
	Path string `json:"path"`
	// Source is "hf-cache" (a snapshot of $HF_HUB_CACHE), "local-dir" (a
	// folder written by `hf download --local-dir` or `model download --dir`)
	// or "folder" (any other folder holding the model).
	Source   string   `json:"source"`
	Repo     string   `json:"repo,omitempty"`
	Revision string   `json:"revision,omitempty"` // the commit, when known
	Refs     []string `json:"refs,omitempty"`     // branch names pointing at it (hf-cache)
	Tasks    []string `json:"tasks"`              // the tasks it can run, per engine/snapshot
	// Unavailable says, for each other task, why not.
	Unavailable map[string]string `json:"unavailable,omitempty"`
	Size        int64             `json:"size"` // bytes on disk, each content once
	// State is "complete" (every task its partitions declare can run and
	// its bytes were verified), "unverified" (complete, never verified or
	// changed since) or "partial" (Missing says what is absent).
	State    string   `json:"state"`
	Missing  []string `json:"missing,omitempty"`
	Verified bool     `json:"verified"`
	Demo     bool     `json:"demo,omitempty"`
	// Partial is the bytes of unfinished downloads waiting beside it.
	Partial int64  `json:"partialBytes,omitempty"`
	Problem string `json:"problem,omitempty"`
}

// Complete reports whether it can run at least one task with nothing missing.
func (i *Installed) Complete() bool { return i.State != "partial" && len(i.Tasks) > 0 }

// beforeInspect is a test hook run between finding a folder and reading it.
var beforeInspect = func(string) {}

// Discover lists the snapshots in the HF cache of env and in folders
// (--local-dir folders, folders opened before, the usual places), reading
// only the disk. Folders that vanish while listed are left out.
func Discover(env Env, folders []string, rec *Records) []Installed {
	type cand struct{ path, source, repo string }
	var cands []cand
	seen := map[string]bool{}
	add := func(p, source, repo string) {
		abs, err := filepath.Abs(p)
		if err != nil {
			return
		}
		real, err := filepath.EvalSymlinks(abs)
		if err != nil || seen[real] {
			return
		}
		seen[real] = true
		cands = append(cands, cand{abs, source, repo})
	}
	if repos, err := os.ReadDir(env.HubCache); err == nil {
		for _, r := range repos {
			name, ok := strings.CutPrefix(r.Name(), "models--")
			if !ok || !r.IsDir() {
				continue
			}
			repo := strings.Replace(name, "--", "/", 1)
			snaps, _ := os.ReadDir(filepath.Join(env.HubCache, r.Name(), "snapshots"))
			for _, s := range snaps {
				if s.IsDir() {
					add(filepath.Join(env.HubCache, r.Name(), "snapshots", s.Name()), "hf-cache", repo)
				}
			}
		}
	}
	for _, f := range folders {
		if f != "" {
			add(f, "", "")
		}
	}
	out := make([]Installed, len(cands))
	keep := make([]bool, len(cands))
	var wg sync.WaitGroup
	for i, c := range cands {
		wg.Add(1)
		go func() {
			defer wg.Done()
			beforeInspect(c.path)
			in, ok := describe(c.path, c.source, c.repo, rec)
			out[i], keep[i] = in, ok
		}()
	}
	wg.Wait()
	var res []Installed
	for i := range out {
		if keep[i] {
			res = append(res, out[i])
		}
	}
	sort.SliceStable(res, func(i, j int) bool {
		if res[i].Complete() != res[j].Complete() {
			return res[i].Complete()
		}
		return len(res[i].Tasks) > len(res[j].Tasks)
	})
	return res
}

// UsualFolders are where people put a `hf download --local-dir` copy.
func UsualFolders(home string) []string {
	if home == "" {
		return nil
	}
	var out []string
	for _, d := range []string{"", "models", "Models", "Downloads", "h3.c", "Documents"} {
		out = append(out, filepath.Join(home, d, "MiniMax-H3"))
	}
	return out
}

// describe reads one candidate; ok is false when it is not a snapshot (or vanished).
func describe(path, source, repo string, rec *Records) (Installed, bool) {
	in := Installed{Path: path, Source: source, Repo: repo}
	rep, err := snapshot.Inspect(path)
	if err != nil {
		return in, false
	}
	if _, err := os.Stat(path); err != nil {
		return in, false
	}
	var newest time.Time
	in.Size, in.Missing, newest = diskUsage(path)
	switch source {
	case "hf-cache":
		in.Revision = filepath.Base(path)
		repoDir := filepath.Dir(filepath.Dir(path))
		in.Refs = refsTo(repoDir, in.Revision)
		in.Partial = dirBytes(filepath.Join(repoDir, ".h3studio-partial"))
	default:
		if m, ok := anyMetadata(path); ok {
			in.Source = "local-dir"
			in.Revision = m.Commit
			if in.Repo == "" {
				in.Repo = Repo
			}
		} else {
			in.Source = "folder"
		}
		in.Partial = dirBytes(filepath.Join(path, ".cache", "h3studio", "partial"))
	}
	in.Demo = rep.Demo
	in.Unavailable = map[string]string{}
	declared := map[string]bool{}
	for _, p := range rep.Partitions {
		for _, t := range p.Tasks {
			declared[strings.ToLower(t)] = true
		}
	}
	for _, t := range rep.Tasks {
		if t.Available {
			in.Tasks = append(in.Tasks, string(t.Task))
			continue
		}
		in.Unavailable[string(t.Task)] = t.Why()
		if declared[string(t.Task)] {
			for _, k := range append(t.Missing, t.Broken...) {
				in.Missing = append(in.Missing, string(t.Partition)+" "+k.Title())
			}
		}
	}
	for _, p := range rep.Problems {
		in.Missing = append(in.Missing, "corrupt "+p.Path)
	}
	in.Missing = dedupe(in.Missing)
	in.Tasks = dedupe(in.Tasks)
	if len(in.Tasks) == 0 {
		in.Tasks = []string{}
	}
	in.Verified = rec.verified(path, in.Revision, newest)
	switch {
	case len(in.Missing) > 0 || len(in.Tasks) == 0:
		in.State = "partial"
	case in.Verified:
		in.State = "complete"
	default:
		in.State = "unverified"
	}
	return in, true
}

func dedupe(s []string) []string {
	seen := map[string]bool{}
	out := s[:0]
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// diskUsage sums the files under root (each inode once, links followed),
// lists dangling links and returns the newest modification time.
func diskUsage(root string) (size int64, dangling []string, newest time.Time) {
	ids := map[[2]uint64]bool{}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if p != root && strings.HasPrefix(d.Name(), ".") {
				return fs.SkipDir
			}
			return nil
		}
		st, err := os.Stat(p)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				rel, _ := filepath.Rel(root, p)
				dangling = append(dangling, filepath.ToSlash(rel))
			}
			return nil
		}
		if !st.Mode().IsRegular() {
			return nil
		}
		if st.ModTime().After(newest) {
			newest = st.ModTime()
		}
		id := fileID(st)
		if id != ([2]uint64{}) && ids[id] {
			return nil
		}
		ids[id] = true
		size += st.Size()
		return nil
	})
	return
}

func dirBytes(dir string) int64 {
	var n int64
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if info, err := e.Info(); err == nil && info.Mode().IsRegular() {
			n += info.Size()
		}
	}
	return n
}

func refsTo(repoDir, commit string) []string {
	var out []string
	refs := filepath.Join(repoDir, "refs")
	filepath.WalkDir(refs, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if b, err := os.ReadFile(p); err == nil && strings.TrimSpace(string(b)) == commit {
			rel, _ := filepath.Rel(refs, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	return out
}

// anyMetadata returns one .metadata record of a --local-dir folder.
func anyMetadata(dir string) (localMetadata, bool) {
	var m localMetadata
	found := false
	root := filepath.Join(dir, ".cache", "huggingface", "download")
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || found || d.IsDir() || !strings.HasSuffix(p, ".metadata") {
			return nil
		}
		if b, err := os.ReadFile(p); err == nil {
			if mm, err := parseMetadata(b); err == nil {
				m, found = mm, true
				return fs.SkipAll
			}
		}
		return nil
	})
	return m, found
}

// FindRevision returns the snapshot folder of rev (a commit or a ref name)
// in the HF cache of env, or "".
func FindRevision(env Env, repo, rev string) string {
	repoDir := filepath.Join(env.HubCache, RepoFolderName(repo))
	if isHex(rev, 40) {
		if st, err := os.Stat(filepath.Join(repoDir, "snapshots", rev)); err == nil && st.IsDir() {
			return filepath.Join(repoDir, "snapshots", rev)
		}
	}
	if err := CheckRepoPath(rev); err != nil {
		return ""
	}
	b, err := os.ReadFile(filepath.Join(repoDir, "refs", filepath.FromSlash(rev)))
	if err != nil {
		return ""
	}
	c := strings.TrimSpace(string(b))
	if !isHex(c, 40) {
		return ""
	}
	p := filepath.Join(repoDir, "snapshots", c)
	if st, err := os.Stat(p); err == nil && st.IsDir() {
		return p
	}
	return ""
}

// Records remembers which snapshots were verified and the folders the user
// pointed at, in one JSON file (models.json beside settings.json).
type Records struct {
	Path     string                    `json:"-"`
	Verified map[string]VerifiedRecord `json:"verified,omitempty"`
	Folders  []string                  `json:"folders,omitempty"`
	mu       sync.Mutex
}

// VerifiedRecord is one successful verification.
type VerifiedRecord struct {
	Revision string    `json:"revision,omitempty"`
	At       time.Time `json:"at"`
}

// DefaultRecordsPath is models.json in H3 Studio's configuration folder.
func DefaultRecordsPath() string {
	d, err := os.UserConfigDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "H3 Studio", "models.json")
}

// LoadRecords reads the records at path; a missing or damaged file gives empty records.
func LoadRecords(path string) *Records {
	r := &Records{Path: path}
	if path == "" {
		return r
	}
	if b, err := os.ReadFile(path); err == nil {
		if json.Unmarshal(b, r) != nil {
			os.Rename(path, path+".damaged")
			r = &Records{Path: path}
		}
	}
	return r
}

func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

func (r *Records) verified(path, rev string, newest time.Time) bool {
	if r == nil {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	v, ok := r.Verified[realPath(path)]
	return ok && v.Revision == rev && !newest.After(v.At)
}

// MarkVerified records that path (at rev) was verified now and saves.
func (r *Records) MarkVerified(path, rev string) error {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	if r.Verified == nil {
		r.Verified = map[string]VerifiedRecord{}
	}
	r.Verified[realPath(path)] = VerifiedRecord{Revision: rev, At: time.Now()}
	r.mu.Unlock()
	return r.save()
}

// AddFolder remembers a folder the user pointed at and saves.
func (r *Records) AddFolder(path string) error {
	if r == nil {
		return nil
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	r.mu.Lock()
	for _, f := range r.Folders {
		if f == abs {
			r.mu.Unlock()
			return nil
		}
	}
	r.Folders = append(r.Folders, abs)
	r.mu.Unlock()
	return r.save()
}

// Forget drops what is recorded about path and saves.
func (r *Records) Forget(path string) error {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	delete(r.Verified, realPath(path))
	keep := r.Folders[:0]
	for _, f := range r.Folders {
		if f != path {
			keep = append(keep, f)
		}
	}
	r.Folders = keep
	r.mu.Unlock()
	return r.save()
}

func (r *Records) save() error {
	if r.Path == "" {
		return nil
	}
	r.mu.Lock()
	b, err := json.MarshalIndent(r, "", "  ")
	r.mu.Unlock()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(r.Path), 0o755); err != nil {
		return err
	}
	return atomicfile.WriteFile(r.Path, b)
}
