package hfhub

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"h3studio/engine/snapshot"
	"h3studio/engine/testkit"
)

func TestDiscoverCacheAndLocalDir(t *testing.T) {
	_, h := testHub(t)
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
	_, h := testHub(t)
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
	files, h := testHub(t)
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
	files, h := testHub(t)
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
	files, h := testHub(t)
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

// The real huggingface_hub downloads from the same fake Hub: its cache and
// ours hold identical bytes, our discovery accepts the cache it wrote, and
// our download into that cache fetches nothing.
func TestHuggingFaceHubPeer(t *testing.T) {
	py := testkit.PythonPeer(t, "huggingface_hub")
	files, h := testHub(t)
	h.Token = "hf_peer"
	hfHome := t.TempDir()
	script := `
import os, sys
from huggingface_hub import snapshot_download, hf_hub_download
p = snapshot_download(sys.argv[1], revision="main", allow_patterns=["model_index.json", "FL2VA/*"])
f = hf_hub_download(sys.argv[1], "FL2VA/model_index.json", revision="main")
print(p)
`
	cmd := exec.Command(py, "-c", script, Repo)
	var base []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HF_") && !strings.HasPrefix(kv, "HUGGINGFACE_") && !strings.HasPrefix(kv, "HUGGING_FACE_") {
			base = append(base, kv)
		}
	}
	cmd.Env = append(base, "HF_ENDPOINT="+h.Endpoint(), "HF_HOME="+hfHome, "HF_TOKEN=hf_peer",
		"HF_HUB_DISABLE_TELEMETRY=1", "HF_HUB_DISABLE_XET=1", "HF_HUB_DISABLE_PROGRESS_BARS=1",
		"NO_PROXY=127.0.0.1,127.0.0.2", "no_proxy=127.0.0.1,127.0.0.2")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("huggingface_hub: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	hfSnap := lines[len(lines)-1]
	if !strings.HasPrefix(hfSnap, hfHome) {
		t.Fatalf("huggingface_hub wrote %s, outside HF_HOME %s", hfSnap, hfHome)
	}
	for _, r := range h.Log() {
		if r.Server == "cdn" && r.Auth {
			t.Fatal("huggingface_hub sent Authorization to the CDN (the fake is not faithful)")
		}
	}
	// Ours, into a separate cache.
	ours := t.TempDir()
	res, err := Download(ctxT(t), testClient(h, "hf_peer"), &Request{Tasks: fl2va, HubCache: ours})
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(hfSnap) != filepath.Base(res.Root) {
		t.Fatalf("huggingface_hub's snapshot %s, ours %s", hfSnap, res.Root)
	}
	n := 0
	for p := range files {
		if !inSet(p, "fl2va") {
			continue
		}
		a, errA := os.ReadFile(filepath.Join(hfSnap, p))
		b, errB := os.ReadFile(filepath.Join(res.Root, p))
		if errA != nil || errB != nil || string(a) != string(b) {
			t.Fatalf("%s: huggingface_hub and h3studio disagree (%v, %v)", p, errA, errB)
		}
		ta, _ := os.Readlink(filepath.Join(hfSnap, p))
		tb, _ := os.Readlink(filepath.Join(res.Root, p))
		if ta != tb {
			t.Fatalf("%s: huggingface_hub links to %s, we link to %s", p, ta, tb)
		}
		n++
	}
	// Our discovery accepts the cache huggingface_hub wrote, offline.
	env := EnvFrom(func(k string) string { return map[string]string{"HF_HOME": hfHome}[k] })
	found := Discover(env, nil, nil)
	if len(found) != 1 || found[0].Revision != testCommit || !slices.Contains(found[0].Tasks, "fl2va") || found[0].State == "partial" {
		t.Fatalf("discovery of huggingface_hub's cache: %+v", found)
	}
	rep, err := Verify(ctxT(t), found[0].Path, nil, 2)
	if err != nil || !rep.OK() || rep.Checked != n {
		t.Fatalf("verify of huggingface_hub's cache: %v %+v", err, rep)
	}
	// A user who already ran hf download gets it without a byte downloaded.
	before := len(h.Log())
	res2, err := Download(ctxT(t), testClient(h, "hf_peer"), &Request{Tasks: fl2va, HubCache: env.HubCache})
	if err != nil || res2.Fetched != 0 {
		t.Fatalf("download over huggingface_hub's cache: %v %+v", err, res2)
	}
	for _, r := range h.Log()[before:] {
		if r.Bytes > 0 {
			t.Fatalf("re-fetched %s that huggingface_hub had downloaded", r.File)
		}
	}
}
