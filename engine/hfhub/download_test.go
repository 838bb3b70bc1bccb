package hfhub

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"h3studio/engine/hfhub/fakehub"
	"h3studio/engine/snapshot"
	"h3studio/engine/snapshot/snapshottest"
	"h3studio/engine/testkit"
)

const testCommit = "5d1c0f4e2b7a9c3d8e6f1a2b4c5d6e7f8a9b0c1d"

// testRepo is a MiniMax-H3 repo in miniature: the released structure of
// FL2VA/ and Ref2VA/ (tiny tensors), Ref2VA's transformer shards differing,
// a root model_index.json and a root diffusers file the native layout never needs.
// It is built once per test binary; tests must not change it.
func testRepo(t testing.TB) map[string][]byte {
	t.Helper()
	repoOnce.Do(func() { repoFiles, repoErr = buildTestRepo() })
	if repoErr != nil {
		t.Fatal(repoErr)
	}
	return repoFiles
}

var (
	repoOnce  sync.Once
	repoFiles map[string][]byte
	repoErr   error
)

func buildTestRepo() (map[string][]byte, error) {
	files, err := snapshottest.ReleasedMinimalFiles("FL2VA", "Ref2VA")
	if err != nil {
		return nil, err
	}
	for p, b := range files {
		if strings.HasPrefix(p, "Ref2VA/transformer/") && strings.HasSuffix(p, ".safetensors") {
			c := append([]byte(nil), b...)
			c[len(c)-1] ^= 0x80 // a data byte: still a valid shard, other bytes
			files[p] = c
		}
	}
	files["model_index.json"] = []byte(`{"_class_name": "MiniMaxH3Pipeline", "transformer": ["diffusers", "MiniMaxH3Transformer3DModel"]}`)
	files["transformer/diffusion_pytorch_model.safetensors"] = make([]byte, 5000)
	return files, nil
}

// inSet mirrors the definition of the task sets.
func inSet(p, set string) bool {
	fl := p == "model_index.json" || strings.HasPrefix(p, "FL2VA/")
	add := p == "Ref2VA/model_index.json" || strings.HasPrefix(p, "Ref2VA/transformer/")
	if set == "fl2va" {
		return fl
	}
	return fl || add
}

// testHub is the test repo and a fake hub serving it.
func testHub(t testing.TB) (map[string][]byte, *fakehub.Hub) {
	files := testRepo(t)
	return files, newHub(t, files)
}

func newHub(t testing.TB, files map[string][]byte) *fakehub.Hub {
	h := fakehub.New(Repo, testCommit, files)
	t.Cleanup(h.Close)
	return h
}

func testClient(h *fakehub.Hub, token string) *Client {
	c := NewClient(h.Endpoint(), token)
	c.Backoff = 10 * time.Millisecond
	c.MaxBackoff = 100 * time.Millisecond
	c.IdleTimeout = 5 * time.Second
	return c
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// downloadFL2VA downloads the fl2va tasks from h into a fresh hub cache
// (mode "cache") or local folder (mode "dir") and returns the result.
func downloadFL2VA(t testing.TB, h *fakehub.Hub, mode string) *Result {
	t.Helper()
	req := &Request{Tasks: fl2va}
	if mode == "cache" {
		req.HubCache = t.TempDir()
	} else {
		req.Dir = t.TempDir()
	}
	res, err := Download(ctxT(t), testClient(h, ""), req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// checkFiles asserts root holds exactly the bytes of every path of set.
func checkFiles(t testing.TB, root string, files map[string][]byte, set string) {
	t.Helper()
	for p, want := range files {
		got, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(p)))
		if !inSet(p, set) {
			if err == nil {
				t.Errorf("%s was downloaded but is not in the %s set", p, set)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		if string(got) != string(want) {
			t.Errorf("%s: bytes differ from the hub's", p)
		}
	}
}

// served sums the file bytes the hub sent per path.
func served(h *fakehub.Hub) map[string]int64 {
	out := map[string]int64{}
	for _, r := range h.Log() {
		if (r.Kind == "resolve" || r.Kind == "cdn") && r.Method == "GET" && (r.Status == 200 || r.Status == 206) {
			out[r.File] += r.Bytes
		}
	}
	return out
}

var fl2va = []snapshot.Task{snapshot.T2VA, snapshot.FL2VAT}

func TestDownloadIntoCacheThenRef2VA(t *testing.T) {
	files, h := testHub(t)
	h.Token = "hf_good"
	cache := t.TempDir()
	c := testClient(h, "hf_good")
	res, err := Download(ctxT(t), c, &Request{Tasks: fl2va, HubCache: cache})
	if err != nil {
		t.Fatal(err)
	}
	repoDir := filepath.Join(cache, RepoFolderName(Repo))
	if res.Root != filepath.Join(repoDir, "snapshots", testCommit) {
		t.Fatalf("root %s", res.Root)
	}
	checkFiles(t, res.Root, files, "fl2va")
	if b, _ := os.ReadFile(filepath.Join(repoDir, "refs", "main")); string(b) != testCommit {
		t.Fatalf("refs/main = %q", b)
	}
	// Every snapshot path is a relative symlink to blobs/<etag>; identical files share one blob.
	blobs := map[string]bool{}
	for p := range files {
		if !inSet(p, "fl2va") {
			continue
		}
		link := filepath.Join(res.Root, filepath.FromSlash(p))
		target, err := os.Readlink(link)
		if err != nil || filepath.IsAbs(target) {
			t.Fatalf("%s: not a relative symlink (%q, %v)", p, target, err)
		}
		if filepath.Base(target) != h.Etag(p) {
			t.Fatalf("%s links to %s, want blobs/%s", p, target, h.Etag(p))
		}
		blobs[h.Etag(p)] = true
	}
	ents, _ := os.ReadDir(filepath.Join(repoDir, "blobs"))
	if len(ents) != len(blobs) || res.Distinct != len(blobs) {
		t.Fatalf("%d blobs for %d distinct contents (result says %d)", len(ents), len(blobs), res.Distinct)
	}
	for p, n := range served(h) {
		if !inSet(p, "fl2va") {
			t.Fatalf("fetched %s, outside the fl2va set", p)
		}
		if n > int64(len(files[p])) && !strings.HasPrefix(p, "Ref2VA/") {
			t.Fatalf("%s sent %d bytes for %d", p, n, len(files[p]))
		}
	}
	// Ref2VA adds only its model_index.json and transformer; held bytes are not sent again.
	before := len(h.Log())
	res2, err := Download(ctxT(t), c, &Request{Tasks: []snapshot.Task{snapshot.Ref2VAT}, HubCache: cache})
	if err != nil {
		t.Fatal(err)
	}
	checkFiles(t, res2.Root, files, "ref2va")
	for _, r := range h.Log()[before:] {
		if r.Bytes > 0 && !(r.File == "Ref2VA/model_index.json" || strings.HasPrefix(r.File, "Ref2VA/transformer/")) {
			t.Fatalf("ref2va fetched %s (%d bytes): already held or not needed", r.File, r.Bytes)
		}
		if r.Bytes > 0 && strings.HasPrefix(r.File, "Ref2VA/transformer/") && string(files[r.File]) == string(files["FL2VA/"+strings.TrimPrefix(r.File, "Ref2VA/")]) {
			t.Fatalf("ref2va re-sent %s, identical to the FL2VA file already held", r.File)
		}
	}
	if res2.Held == 0 || res2.Fetched == 0 {
		t.Fatalf("ref2va: held %d fetched %d", res2.Held, res2.Fetched)
	}
	// The snapshot is usable by the engine with Ref2VA.
	rep, err := snapshot.Inspect(res2.Root)
	if err != nil || !rep.OK() {
		t.Fatalf("inspect: %v %+v", err, rep.Problems)
	}
	// No CDN request carried Authorization.
	for _, r := range h.Log() {
		if r.Server == "cdn" && r.Auth {
			t.Fatalf("the CDN saw Authorization for %s", r.File)
		}
	}
}

func TestDownloadDirHardLinksAndMetadata(t *testing.T) {
	files, h := testHub(t)
	dir := filepath.Join(t.TempDir(), "MiniMax-H3")
	res, err := Download(ctxT(t), testClient(h, ""), &Request{Tasks: []snapshot.Task{snapshot.Ref2VAT}, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	checkFiles(t, dir, files, "ref2va")
	a, _ := os.Stat(filepath.Join(dir, "FL2VA/transformer/config.json"))
	b, _ := os.Stat(filepath.Join(dir, "Ref2VA/transformer/config.json"))
	if string(files["FL2VA/transformer/config.json"]) == string(files["Ref2VA/transformer/config.json"]) && !os.SameFile(a, b) {
		t.Fatal("identical files are not hard-linked")
	}
	m, err := readMetadata(dir, "FL2VA/transformer/config.json")
	if err != nil || m.Commit != testCommit || m.Etag != h.Etag("FL2VA/transformer/config.json") {
		t.Fatalf("metadata %+v %v", m, err)
	}
	// A second run fetches nothing.
	before := len(h.Log())
	res2, err := Download(ctxT(t), testClient(h, ""), &Request{Tasks: []snapshot.Task{snapshot.Ref2VAT}, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range h.Log()[before:] {
		if r.Bytes > 0 {
			t.Fatalf("the second run fetched %s", r.File)
		}
	}
	if res2.Fetched != 0 || res2.Held != res.TotalBytes {
		t.Fatalf("second run: fetched %d, held %d of %d", res2.Fetched, res2.Held, res.TotalBytes)
	}
	rep, err := Verify(ctxT(t), dir, nil, 2)
	if err != nil || !rep.OK() || rep.Checked != res.Files || len(rep.Unknown) != 0 {
		t.Fatalf("verify: %v %+v", err, rep)
	}
}

func TestGatedRefusalsPublishNothing(t *testing.T) {
	_, h := testHub(t)
	h.Token = "hf_good"
	for _, tok := range []string{"", "hf_other"} {
		dir := t.TempDir()
		_, err := Download(ctxT(t), testClient(h, tok), &Request{Tasks: fl2va, Dir: dir})
		if !Gated(err) {
			t.Fatalf("token %q: %v, want a GatedRepo error", tok, err)
		}
		if !strings.Contains(err.Error(), "licence") || !strings.Contains(err.Error(), PageURL(Repo)) {
			t.Fatalf("the message names neither the licence nor the page: %v", err)
		}
		var he *Error
		errors.As(err, &he)
		if want := map[string]int{"": 401, "hf_other": 403}[tok]; he.Status != want {
			t.Fatalf("status %d, want %d", he.Status, want)
		}
		if _, err := os.Stat(filepath.Join(dir, "model_index.json")); err == nil {
			t.Fatal("a file was published after a gated refusal")
		}
	}
}

// TestCutConnection: a connection cut partway through the biggest shard is
// resumed with a ranged request from at most where it was cut; a server
// that ignores Range answers the ranged retry with a 200 and the file is
// fetched again. Either way the download completes with the right bytes.
func TestCutConnection(t *testing.T) {
	for _, c := range []struct {
		name        string
		ignoreRange bool
		cut         int // the cut falls at 1/cut of the file
		retried     func(r fakehub.Request, cutAt int64) bool
		failure     string
	}{
		{"resumed with Range", false, 2, func(r fakehub.Request, cutAt int64) bool {
			return r.Status == 206 && r.Start > 0 && r.Start <= cutAt
		}, "no ranged resume after the cut"},
		{"Range ignored", true, 3, func(r fakehub.Request, _ int64) bool {
			return r.Range != "" && r.Status == 200
		}, "the ranged retry never met the 200"},
	} {
		t.Run(c.name, func(t *testing.T) {
			files, h := testHub(t)
			big := biggestLFS(files, "FL2VA/")
			h.IgnoreRange = c.ignoreRange
			h.Cut = &fakehub.Fault{Path: big, At: int64(len(files[big]) / c.cut)}
			dir := t.TempDir()
			if _, err := Download(ctxT(t), testClient(h, ""), &Request{Tasks: fl2va, Dir: dir}); err != nil {
				t.Fatal(err)
			}
			checkFiles(t, dir, files, "fl2va")
			for _, r := range h.Log() {
				if r.File == big && c.retried(r, h.Cut.At) {
					return
				}
			}
			t.Fatalf("%s of %s: %+v", c.failure, big, h.Log())
		})
	}
}

func TestCorruptByteIsRefetchedOrRefused(t *testing.T) {
	files := testRepo(t)
	big := biggestLFS(files, "FL2VA/")
	for _, always := range []bool{false, true} {
		h := newHub(t, files)
		h.Corrupt = &fakehub.Fault{Path: big, At: 100, Always: always}
		dir := t.TempDir()
		res, err := Download(ctxT(t), testClient(h, ""), &Request{Tasks: fl2va, Dir: dir, Parallel: 1})
		if !always {
			if err != nil || res.Refetched != 1 {
				t.Fatalf("once: %v, refetched %v", err, res)
			}
			checkFiles(t, dir, files, "fl2va")
			continue
		}
		if !errors.Is(err, ErrVerify) || !strings.Contains(err.Error(), big) {
			t.Fatalf("always: %v, want ErrVerify naming %s", err, big)
		}
		if _, err := os.Stat(filepath.Join(dir, big)); err == nil {
			t.Fatal("a corrupt file was published")
		}
	}
}

func TestRetryAfterAnd503(t *testing.T) {
	files, h := testHub(t)
	h.Throttle = &fakehub.Fault{Path: "model_index.json"}
	h.RetrySecs = 1
	big := biggestLFS(files, "FL2VA/")
	h.FailOnce = &fakehub.Fault{Path: big}
	dir := t.TempDir()
	if _, err := Download(ctxT(t), testClient(h, ""), &Request{Tasks: fl2va, Dir: dir}); err != nil {
		t.Fatal(err)
	}
	checkFiles(t, dir, files, "fl2va")
	var t429 time.Time
	for _, r := range h.Log() {
		if r.File == "model_index.json" && r.Status == 429 {
			t429 = r.T
		} else if r.File == "model_index.json" && !t429.IsZero() {
			if gap := r.T0.Sub(t429); gap < 900*time.Millisecond {
				t.Fatalf("retried %v after a 429 with Retry-After: 1", gap)
			}
			return
		}
	}
	t.Fatal("no retry after the 429")
}

func TestFreeSpaceIsCheckedFirst(t *testing.T) {
	_, h := testHub(t)
	dir := t.TempDir()
	_, err := Download(ctxT(t), testClient(h, ""), &Request{Tasks: fl2va, Dir: dir,
		FreeSpace: func(string) (int64, error) { return 1000, nil }})
	if !errors.Is(err, ErrNoSpace) || !strings.Contains(err.Error(), "free") {
		t.Fatalf("%v, want ErrNoSpace", err)
	}
	if served(h)["model_index.json"] != 0 {
		t.Fatal("bytes were fetched before the free-space check")
	}
}

// A disk that fills up during the download (the partial's writes fail with
// ENOSPC, here through /dev/full) fails naming the file, publishing nothing.
func TestDiskFullDuringWrite(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full on this system")
	}
	files, h := testHub(t)
	dir := t.TempDir()
	big := biggestLFS(files, "FL2VA/")
	st := &dirStore{dir: dir}
	part := st.partial(&content{Etag: h.Etag(big)})
	os.MkdirAll(filepath.Dir(part), 0o755)
	if err := os.Symlink("/dev/full", part); err != nil {
		t.Fatal(err)
	}
	_, err := Download(ctxT(t), testClient(h, ""), &Request{Tasks: fl2va, Dir: dir})
	if err == nil || !strings.Contains(err.Error(), big) || !strings.Contains(err.Error(), "no space") {
		t.Fatalf("%v, want a no-space error naming %s", err, big)
	}
	if _, err := os.Stat(filepath.Join(dir, big)); err == nil {
		t.Fatal("published after a failed write")
	}
}

// A read-only cache: what it holds is still found and "downloaded" (nothing
// to fetch, nothing written); what it lacks fails with a permission error.
func TestReadOnlyCache(t *testing.T) {
	_, h := testHub(t)
	cache := t.TempDir()
	c := testClient(h, "")
	if _, err := Download(ctxT(t), c, &Request{Tasks: fl2va, HubCache: cache}); err != nil {
		t.Fatal(err)
	}
	makeReadOnly(t, cache)
	res, err := Download(ctxT(t), c, &Request{Tasks: fl2va, HubCache: cache})
	if err != nil || res.Fetched != 0 {
		t.Fatalf("a held download in a read-only cache: %v (fetched %v)", err, res)
	}
	_, err = Download(ctxT(t), c, &Request{Tasks: []snapshot.Task{snapshot.Ref2VAT}, HubCache: cache})
	if err == nil || !errors.Is(err, os.ErrPermission) {
		t.Fatalf("%v, want a permission error", err)
	}
	found := Discover(Env{HubCache: cache}, nil, nil)
	if len(found) != 1 || found[0].Revision != testCommit {
		t.Fatalf("discovery in a read-only cache: %+v", found)
	}
}

// makeReadOnly makes dir and everything under it unwritable, for root too
// (chattr +i), and undoes it at the end of the test.
func makeReadOnly(t *testing.T, dir string) {
	if os.Geteuid() != 0 {
		if err := exec.Command("chmod", "-R", "a-w", dir).Run(); err != nil {
			t.Skip("chmod:", err)
		}
		t.Cleanup(func() { exec.Command("chmod", "-R", "u+w", dir).Run() })
		return
	}
	chattr := func(flag string) ([]byte, error) {
		return exec.Command("find", dir, "!", "-type", "l", "-exec", "chattr", flag, "{}", "+").CombinedOutput()
	}
	t.Cleanup(func() { chattr("-i") })
	if out, err := chattr("+i"); err != nil {
		t.Skipf("root ignores permissions and chattr +i failed: %v %s", err, out)
	}
}

func biggestLFS(files map[string][]byte, prefix string) string {
	best := ""
	for p, b := range files {
		if strings.HasPrefix(p, prefix) && (best == "" || len(b) > len(files[best])) {
			best = p
		}
	}
	return best
}

// TestHelperDownloadProcess is the child of TestKillAndResumeAcrossProcesses:
// a download into $H3_TEST_CACHE from $H3_TEST_ENDPOINT, killed mid-file.
func TestHelperDownloadProcess(t *testing.T) {
	if os.Getenv("H3_TEST_HELPER") != "download" {
		t.Skip("run by TestKillAndResumeAcrossProcesses")
	}
	c := NewClient(os.Getenv("H3_TEST_ENDPOINT"), "")
	_, err := Download(context.Background(), c, &Request{Tasks: fl2va, HubCache: os.Getenv("H3_TEST_CACHE"), Parallel: 1})
	fmt.Println("child download ended:", err)
}

func TestKillAndResumeAcrossProcesses(t *testing.T) {
	files, h := testHub(t)
	big := biggestLFS(files, "FL2VA/")
	stallAt := int64(len(files[big]) * 2 / 3)
	h.Stall = &fakehub.Fault{Path: big, At: stallAt}
	cache := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperDownloadProcess$", "-test.v")
	cmd.Env = append(os.Environ(), "H3_TEST_HELPER=download", "H3_TEST_ENDPOINT="+h.Endpoint(), "H3_TEST_CACHE="+cache)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-h.Stalled:
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the child never reached byte %d of %s: %s", stallAt, big, out.String())
	}
	// The child writes what it received as it reads; it is killed once
	// some of that is on disk (a loaded machine can take a while).
	partial := filepath.Join(cache, RepoFolderName(Repo), ".h3studio-partial", h.Etag(big)+".part")
	testkit.Wait(t, "the child's first bytes of "+big, nil, func() bool {
		st, err := os.Stat(partial)
		return err == nil && st.Size() > 0
	})
	cmd.Process.Kill()
	cmd.Wait()
	st, err := os.Stat(partial)
	if err != nil || st.Size() == 0 || st.Size() > stallAt {
		t.Fatalf("after the kill the partial %s: %v, %v (want 1..%d bytes)", partial, st, err, stallAt)
	}
	if m, _ := filepath.Glob(filepath.Join(cache, "*", "blobs", "*.incomplete")); len(m) > 0 {
		t.Fatalf("left huggingface_hub's .incomplete names: %v", m)
	}
	before := len(h.Log())
	res, err := Download(ctxT(t), testClient(h, ""), &Request{Tasks: fl2va, HubCache: cache})
	if err != nil {
		t.Fatal(err)
	}
	checkFiles(t, res.Root, files, "fl2va")
	ok := false
	for _, r := range h.Log()[before:] {
		// The killed child's stalled request is logged when its handler
		// returns, which can come after before was taken.
		if r.File == big && r.Bytes > 0 && r.Event != "stall" {
			if r.Status != 206 || r.Start != st.Size() {
				t.Fatalf("the new process fetched %s from byte %d (status %d), want a resume from %d", big, r.Start, r.Status, st.Size())
			}
			ok = true
		}
	}
	if !ok {
		t.Fatalf("%s was not fetched after the kill", big)
	}
}
