package main

// Tests of what describes a model snapshot: the model command (list,
// download, verify, path), `h3studio info`, and the studio's model report
// built from the same inspection.

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"h3studio/engine"
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
	files, err := snapshottest.ReleasedMinimalFiles("FL2VA")
	if err != nil {
		t.Fatal(err)
	}
	files["model_index.json"] = []byte(`{}`)
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

func TestInfoReleased(t *testing.T) {
	root := t.TempDir()
	if err := snapshottest.WriteReleasedMinimal(root); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if st := run([]string{"info", "-d", root}, &out, &errb); st != 0 {
		t.Fatalf("info exited %d: %s", st, errb.String())
	}
	for _, want := range []string{"FL2VA/transformer", "Ref2VA/transformer", "video VAE", "audio VAE", "text encoder",
		"t2va    available", "fl2va   available", "ref2va  available", "Compute device:"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if st := run([]string{"info", "-json", "-d", root}, &out, &errb); st != 0 {
		t.Fatalf("info -json exited %d", st)
	}
	var rep struct {
		Tasks  []struct{ Available bool }
		Device struct{ Backend string }
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil || len(rep.Tasks) != 3 || !rep.Tasks[2].Available || rep.Device.Backend == "" {
		t.Errorf("json: %v %+v", err, rep)
	}
}

func TestInfoExitStatus(t *testing.T) {
	root := t.TempDir()
	if err := snapshottest.WriteReleasedMinimal(root, "FL2VA"); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if st := run([]string{"info", "-d", root}, &out, &errb); st != 0 || !strings.Contains(out.String(), "ref2va  unavailable") {
		t.Fatalf("partial snapshot: exit %d\n%s%s", st, out.String(), errb.String())
	}
	os.WriteFile(filepath.Join(root, "FL2VA", "video_vae", "config.json"), []byte("{"), 0o644)
	errb.Reset()
	if st := run([]string{"info", "-d", root}, &out, &errb); st != 1 || !strings.Contains(errb.String(), "video_vae/config.json") {
		t.Errorf("corrupt config: exit %d, stderr %q", st, errb.String())
	}
	for _, args := range [][]string{{"info"}, {"info", "-d"}, {"info", "-d", root, "extra"}} {
		if st := run(args, &out, &errb); st != 2 {
			t.Errorf("%v: exit %d, want 2 (usage)", args, st)
		}
	}
	if st := run([]string{"info", "-d", t.TempDir()}, &out, &errb); st != 1 {
		t.Errorf("empty folder: exit %d", st)
	}
}

// BenchmarkInfo times `h3studio info` (inspection and the printed report)
// on the full-size released snapshot (both partitions, 288 GB apparent,
// sparse). Target: < 100 ms.
func BenchmarkInfo(b *testing.B) {
	root := b.TempDir()
	if err := snapshottest.WriteReleased(root); err != nil {
		b.Fatal(err)
	}
	if u := snapshottest.DiskUsage(root); u < 0 || u > 64<<20 {
		b.Skipf("the file system does not keep the released snapshot sparse (%d bytes on disk)", u)
	}
	var out, errb bytes.Buffer
	snapshottest.Bench(b, func() func() {
		out.Reset()
		if st := run([]string{"info", "-d", root}, &out, &errb); st != 0 {
			b.Fatalf("exit %d: %s", st, errb.String())
		}
		return nil
	})
}

// infoOutput runs `h3studio info -d dir` and returns its standard output.
func infoOutput(t *testing.T, dir string) string {
	t.Helper()
	var out, errb bytes.Buffer
	run([]string{"info", "-d", dir}, &out, &errb)
	return out.String()
}

// TestInspectModel: the studio's model report is exactly what `h3studio
// info` prints, for a complete, a partial, a corrupt and a demo snapshot;
// its tasks, name and usability come from the same inspection.
func TestInspectModel(t *testing.T) {
	full := t.TempDir()
	if err := snapshottest.WriteReleasedMinimal(full); err != nil {
		t.Fatal(err)
	}
	fl2va := t.TempDir()
	if err := snapshottest.WriteReleasedMinimal(fl2va, "FL2VA"); err != nil {
		t.Fatal(err)
	}
	partial := t.TempDir() // a download in progress: no FL2VA transformer yet
	if err := snapshottest.WriteReleasedMinimal(partial, "FL2VA"); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(filepath.Join(partial, "FL2VA", "transformer"))
	bad := t.TempDir()
	if err := snapshottest.WriteReleasedMinimal(bad, "FL2VA"); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(bad, "FL2VA", "audio_vae", "config.json"), []byte("{"), 0o644)
	demo := t.TempDir()
	if err := snapshottest.WriteReleasedMinimal(demo); err != nil {
		t.Fatal(err)
	}
	mi := filepath.Join(demo, "FL2VA", "model_index.json")
	b, _ := os.ReadFile(mi)
	var m map[string]any
	json.Unmarshal(b, &m)
	m["_h3studio"] = map[string]any{"demo": true, "name": "MiniMax-H3 demo model (tiny random weights)", "version": 2}
	b, _ = json.Marshal(m)
	os.WriteFile(mi, b, 0o644)

	for _, c := range []struct {
		name, dir, title string
		tasks            int
		problem          string // a fragment; "" when usable
	}{
		{"full", full, "MiniMax-H3 FL2VA + Ref2VA", 3, ""},
		{"FL2VA only", fl2va, "MiniMax-H3 FL2VA", 2, ""},
		{"partial", partial, "MiniMax-H3 snapshot (incomplete)", 0, "missing transformer"},
		{"corrupt", bad, "MiniMax-H3 snapshot (incomplete)", 0, "corrupt audio VAE"},
		{"demo", demo, "MiniMax-H3 demo model (tiny random weights)", 3, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			info := inspectModel(c.dir)
			if got := infoOutput(t, c.dir); info.Report != got {
				t.Errorf("the studio's report differs from `h3studio info`:\n%s\n--- info:\n%s", info.Report, got)
			}
			if info.Name != c.title || len(info.Tasks) != c.tasks || info.Usable != (c.tasks > 0) ||
				(c.problem == "") != (info.Problem == "") || !strings.Contains(info.Problem, c.problem) || info.Demo != (c.name == "demo") {
				t.Errorf("info %+v", info)
			}
			if !strings.Contains(info.Report, "Compute device:") {
				t.Errorf("the report lacks the compute device:\n%s", info.Report)
			}
		})
	}
	if info := inspectModel(full); info.Tasks[0] != engine.TaskT2VA {
		t.Errorf("tasks %v", info.Tasks)
	}

	// Not a snapshot: the command's error, in the studio's words too.
	empty := t.TempDir()
	if info := inspectModel(empty); info.Usable || !strings.Contains(info.Problem, "FL2VA/") || !strings.Contains(info.Report, "h3studio info:") {
		t.Errorf("empty folder: %+v", info)
	}
	if info := inspectModel(filepath.Join(empty, "nope")); info.Usable || info.Problem == "" {
		t.Errorf("missing folder: %+v", info)
	}
}
