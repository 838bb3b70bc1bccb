package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"h3studio/engine"
	"h3studio/engine/snapshot/snapshottest"
)

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
