package hfhub

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"h3studio/engine/hfhub/fakehub"
	"h3studio/engine/snapshot"
	"h3studio/engine/snapshot/snapshottest"
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
	d, err := os.MkdirTemp("", "hfhub-repo-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(d)
	if err := snapshottest.WriteReleasedMinimal(d, "FL2VA", "Ref2VA"); err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	err = filepath.Walk(d, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(d, p)
		files[filepath.ToSlash(rel)] = b
		return err
	})
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
