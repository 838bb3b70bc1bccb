package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"h3studio/engine/hfhub"
	"h3studio/engine/hfhub/fakehub"
	"h3studio/engine/snapshot/snapshottest"
)

func runModelCmd(args ...string) (int, string) {
	var out bytes.Buffer
	code := runModel(args, &out, &out)
	return code, out.String()
}

func TestModelCommand(t *testing.T) {
	d := t.TempDir()
	if err := snapshottest.WriteReleasedMinimal(d, "FL2VA"); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{"model_index.json": []byte(`{}`)}
	filepath.Walk(d, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			rel, _ := filepath.Rel(d, p)
			files[filepath.ToSlash(rel)], _ = os.ReadFile(p)
		}
		return err
	})
	const commit = "fedcba9876543210fedcba9876543210fedcba98"
	hub := fakehub.New(hfhub.Repo, commit, files)
	hub.Token = "hf_cmdtest_secret"
	defer hub.Close()
	home := t.TempDir()
	for _, k := range []string{"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_TOKEN_PATH", "HF_HUB_OFFLINE"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("HF_HOME", filepath.Join(home, "hf"))
	t.Setenv("HF_ENDPOINT", hub.Endpoint())

	if code, _ := runModelCmd(); code != exitInvalid {
		t.Fatalf("no subcommand: exit %d", code)
	}
	if code, out := runModelCmd("download", "--tasks", "nosuch"); code != exitInvalid || !strings.Contains(out, "nosuch") {
		t.Fatalf("unknown task: exit %d: %s", code, out)
	}
	if code, out := runModelCmd("download", "--tasks", "t2va"); code != exitFailed || !strings.Contains(out, "licence") {
		t.Fatalf("gated without a token: exit %d: %s", code, out)
	}
	t.Setenv("HF_TOKEN", "hf_cmdtest_secret")
	code, out := runModelCmd("download", "--tasks", "t2va,fl2va")
	if code != exitOK || strings.Contains(out, "hf_cmdtest_secret") {
		t.Fatalf("download: exit %d: %s", code, out)
	}
	code, out = runModelCmd("list", "--json")
	var listed struct {
		Snapshots []hfhub.Installed `json:"snapshots"`
	}
	if code != exitOK || json.Unmarshal([]byte(out), &listed) != nil || len(listed.Snapshots) != 1 || listed.Snapshots[0].Revision != commit {
		t.Fatalf("list --json: exit %d: %s", code, out)
	}
	if code, out := runModelCmd("verify", "--revision", "main"); code != exitOK {
		t.Fatalf("verify: exit %d: %s", code, out)
	}
	cfg := filepath.Join(listed.Snapshots[0].Path, "FL2VA", "transformer", "config.json")
	real, _ := filepath.EvalSymlinks(cfg)
	b, _ := os.ReadFile(real)
	b[0] ^= 1
	os.WriteFile(real, b, 0o644)
	if code, out := runModelCmd("verify", "--revision", commit); code != exitFailed || !strings.Contains(out, "FL2VA/transformer/config.json") {
		t.Fatalf("verify of a flipped byte: exit %d: %s", code, out)
	}
	if code, out := runModelCmd("verify", "--revision", commit, "--repair"); code != exitOK {
		t.Fatalf("verify --repair: exit %d: %s", code, out)
	}
	if code, out := runModelCmd("path", "--task", "fl2va"); code != exitOK || strings.TrimSpace(out) != listed.Snapshots[0].Path {
		t.Fatalf("path: exit %d: %q", code, out)
	}
}
