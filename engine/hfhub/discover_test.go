package hfhub

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"h3studio/engine/snapshot"
)

func TestDiscoverCacheAndLocalDir(t *testing.T) {
	files := testRepo(t)
	h := newHub(t, files)
	cache, dir := t.TempDir(), filepath.Join(t.TempDir(), "MiniMax-H3")
	c := testClient(h, "")
	if _, err := Download(ctxT(t), c, &Request{Tasks: fl2va, HubCache: cache}); err != nil {
		t.Fatal(err)
	}
	if _, err := Download(ctxT(t), c, &Request{Tasks: []snapshot.Task{snapshot.Ref2VAT}, Dir: dir}); err != nil {
		t.Fatal(err)
	}
	rec := LoadRecords(filepath.Join(t.TempDir(), "models.json"))
	found := Discover(Env{HubCache: cache}, []string{dir, filepath.Join(t.TempDir(), "absent")}, rec)
	if len(found) != 2 {
		t.Fatalf("found %d snapshots: %+v", len(found), found)
	}
	byPath := map[string]Installed{}
	for _, f := range found {
		byPath[f.Source] = f
	}
	hc, ld := byPath["hf-cache"], byPath["local-dir"]
	if hc.Revision != testCommit || !slices.Contains(hc.Tasks, "fl2va") || slices.Contains(hc.Tasks, "ref2va") || !slices.Contains(hc.Refs, "main") {
		t.Fatalf("hf-cache entry %+v", hc)
	}
	if ld.Revision != testCommit || !slices.Contains(ld.Tasks, "ref2va") || ld.Path != dir {
		t.Fatalf("local-dir entry %+v", ld)
	}
	if hc.State != "unverified" {
		t.Fatalf("state %q before any verification, want unverified", hc.State)
	}
	if err := rec.MarkVerified(hc.Path, hc.Revision); err != nil {
		t.Fatal(err)
	}
	if again := Discover(Env{HubCache: cache}, nil, LoadRecords(rec.Path)); again[0].State != "complete" {
		t.Fatalf("after verification: %+v", again[0])
	}
	// A lost blob makes the snapshot partial, naming what is missing.
	link := filepath.Join(hc.Path, "FL2VA", "transformer", "config.json")
	target, _ := filepath.EvalSymlinks(link)
	os.Remove(target)
	broken := Discover(Env{HubCache: cache}, nil, rec)
	if len(broken) != 1 || broken[0].State != "partial" || !strings.Contains(strings.Join(broken[0].Missing, ";"), "config.json") {
		t.Fatalf("after losing a blob: %+v", broken)
	}
}

func TestDiscoverSnapshotDeletedWhileListed(t *testing.T) {
	files := testRepo(t)
	h := newHub(t, files)
	cache := t.TempDir()
	res, err := Download(ctxT(t), testClient(h, ""), &Request{Tasks: fl2va, HubCache: cache})
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	beforeInspect = func(p string) {
		once.Do(func() { os.RemoveAll(res.Root) })
	}
	t.Cleanup(func() { beforeInspect = func(string) {} })
	if found := Discover(Env{HubCache: cache}, nil, nil); len(found) != 0 {
		t.Fatalf("a snapshot deleted while listed is still listed: %+v", found)
	}
}

func TestVerifyNamesAFlippedByte(t *testing.T) {
	files := testRepo(t)
	h := newHub(t, files)
	for _, mode := range []string{"cache", "dir"} {
		res := downloadFL2VA(t, h, mode)
		rep, err := Verify(ctxT(t), res.Root, nil, 2)
		if err != nil || !rep.OK() || rep.Checked != res.Files {
			t.Fatalf("%s: clean verify %v %+v", mode, err, rep)
		}
		big := biggestLFS(files, "FL2VA/transformer/")
		p, _ := filepath.EvalSymlinks(filepath.Join(res.Root, big))
		os.Chmod(p, 0o644)
		b, _ := os.ReadFile(p)
		b[len(b)/2] ^= 1
		os.WriteFile(p, b, 0o644)
		rep, err = Verify(ctxT(t), res.Root, nil, 2)
		if err != nil || rep.OK() || len(rep.Bad) != 1 || rep.Bad[0].Path != big || rep.Bad[0].Kind != "sha256" {
			t.Fatalf("%s: after a flip %v %+v", mode, err, rep)
		}
		// Against the Hub's tree instead of the records.
		entries, err := testClient(h, "").Tree(ctxT(t), Repo, testCommit, "", true)
		if err != nil {
			t.Fatal(err)
		}
		sel, _ := Select(entries, fl2va)
		rep, err = Verify(ctxT(t), res.Root, sel, 2)
		if err != nil || len(rep.Bad) != 1 || rep.Bad[0].Path != big {
			t.Fatalf("%s: online verify %v %+v", mode, err, rep)
		}
	}
}

func TestSelectDerivesSetsFromTheTree(t *testing.T) {
	files := testRepo(t)
	h := newHub(t, files)
	h.PageSize = 3
	entries, err := testClient(h, "").Tree(ctxT(t), Repo, "main", "", true)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(files) {
		t.Fatalf("paged tree: %d entries for %d files", len(entries), len(files))
	}
	for _, set := range []string{"fl2va", "ref2va"} {
		tasks := fl2va
		if set == "ref2va" {
			tasks = []snapshot.Task{snapshot.Ref2VAT}
		}
		sel, err := Select(entries, tasks)
		if err != nil {
			t.Fatal(err)
		}
		var got, want []string
		for _, e := range sel {
			got = append(got, e.Path)
		}
		for p := range files {
			if inSet(p, set) {
				want = append(want, p)
			}
		}
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("%s: selected %v\nwant %v", set, got, want)
		}
	}
	if _, err := ParseTasks("fl2va,nosuch"); err == nil || !strings.Contains(err.Error(), "nosuch") {
		t.Fatalf("unknown task: %v", err)
	}
}

func TestTokenPrecedence(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "token"), []byte("hf_file\n"), 0o600)
	env := func(m map[string]string) Env { return EnvFrom(func(k string) string { return m[k] }) }
	store := &memStore{}
	if tok, src := env(map[string]string{"HF_HOME": dir}).Token(store); tok != "hf_file" || src != TokenFromFile {
		t.Fatalf("file: %q %q", tok, src)
	}
	store.Set(TokenService, TokenAccount, "hf_stored")
	if tok, src := env(map[string]string{"HF_HOME": dir}).Token(store); tok != "hf_stored" || src != TokenFromKeychain {
		t.Fatalf("stored: %q %q", tok, src)
	}
	if tok, src := env(map[string]string{"HF_HOME": dir, "HF_TOKEN": "hf_env"}).Token(store); tok != "hf_env" || src != TokenFromEnv {
		t.Fatalf("env: %q %q", tok, src)
	}
	e := env(map[string]string{"HF_HOME": dir, "HF_ENDPOINT": "http://x/"})
	if e.HubCache != filepath.Join(dir, "hub") || e.Endpoint != "http://x" {
		t.Fatalf("env %+v", e)
	}
	if e := env(map[string]string{"HF_HOME": dir, "HF_HUB_CACHE": "/c"}); e.HubCache != "/c" {
		t.Fatalf("HF_HUB_CACHE not honoured: %+v", e)
	}
}

type memStore struct{ m map[string]string }

func (s *memStore) Get(a, b string) (string, error) {
	if v, ok := s.m[a+"/"+b]; ok {
		return v, nil
	}
	return "", os.ErrNotExist
}
func (s *memStore) Set(a, b, v string) error {
	if s.m == nil {
		s.m = map[string]string{}
	}
	s.m[a+"/"+b] = v
	return nil
}
func (s *memStore) Delete(a, b string) error { delete(s.m, a+"/"+b); return nil }

func TestRepairRefetchesWhatVerifyFound(t *testing.T) {
	files := testRepo(t)
	h := newHub(t, files)
	for _, mode := range []string{"cache", "dir"} {
		res := downloadFL2VA(t, h, mode)
		big := biggestLFS(files, "FL2VA/transformer/")
		p, _ := filepath.EvalSymlinks(filepath.Join(res.Root, big))
		b, _ := os.ReadFile(p)
		b[7] ^= 1
		os.WriteFile(p, b, 0o644)
		rep, _ := Verify(ctxT(t), res.Root, nil, 2)
		if rep.OK() {
			t.Fatal("the flip went unnoticed")
		}
		before := len(h.Log())
		if _, err := Repair(ctxT(t), testClient(h, ""), rep, nil); err != nil {
			t.Fatalf("%s: repair: %v", mode, err)
		}
		if rep, err := Verify(ctxT(t), res.Root, nil, 2); err != nil || !rep.OK() {
			t.Fatalf("%s: after repair %v %+v", mode, err, rep)
		}
		for _, r := range h.Log()[before:] {
			if r.Bytes > 0 && r.File != big {
				t.Fatalf("%s: repair fetched %s, which was fine", mode, r.File)
			}
		}
	}
}
