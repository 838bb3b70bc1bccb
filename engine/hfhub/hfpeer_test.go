package hfhub

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"h3studio/engine/testkit"
)

// The real huggingface_hub downloads from the same fake Hub: its cache and
// ours hold identical bytes, our discovery accepts the cache it wrote, and
// our download into that cache fetches nothing.
func TestHuggingFaceHubPeer(t *testing.T) {
	py := testkit.PythonPeer(t, "huggingface_hub")
	files := testRepo(t)
	h := newHub(t, files)
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
