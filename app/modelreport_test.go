package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"h3studio/engine"
	"h3studio/engine/compute"
	"h3studio/engine/safetensors"
)

// tinySnapshot writes a folder in the original layout with one small
// safetensors file per weight component.
func tinySnapshot(t *testing.T, dir string, parts []string, skip map[string]bool) {
	t.Helper()
	for _, p := range parts {
		for _, c := range []string{"transformer", "text_encoder", "video_vae/source", "audio_vae"} {
			if skip[p+"/"+c] {
				continue
			}
			d := filepath.Join(dir, p, c)
			os.MkdirAll(d, 0o755)
			e := safetensors.F32("w", compute.F32, compute.Shape{2, 2}, []float32{1, 2, 3, 4})
			if err := safetensors.Write(filepath.Join(d, "model.safetensors"), []safetensors.Entry{e}, nil); err != nil {
				t.Fatal(err)
			}
		}
		for _, c := range []string{"tokenizer", "processor"} {
			if skip[p+"/"+c] {
				continue
			}
			os.MkdirAll(filepath.Join(dir, p, c), 0o755)
			os.WriteFile(filepath.Join(dir, p, c, "config.json"), []byte("{}"), 0o644)
		}
	}
}

func TestInspectModel(t *testing.T) {
	empty := t.TempDir()
	if info := inspectModel(empty); info.Usable || !strings.Contains(info.Problem, "FL2VA/") {
		t.Errorf("empty folder: %+v", info)
	}
	if info := inspectModel(filepath.Join(empty, "nope")); info.Usable || info.Problem == "" {
		t.Errorf("missing folder: %+v", info)
	}

	full := t.TempDir()
	tinySnapshot(t, full, []string{"FL2VA", "Ref2VA"}, nil)
	info := inspectModel(full)
	if !info.Usable || len(info.Tasks) != 3 || info.Name != "MiniMax-H3 FL2VA + Ref2VA" {
		t.Fatalf("full snapshot: %+v", info)
	}
	for _, w := range []string{"original release layout", "FL2VA:", "Ref2VA:", "transformer", "1 tensors", "tasks: fl2va, ref2va, t2va"} {
		if !strings.Contains(info.Report, w) {
			t.Errorf("report lacks %q:\n%s", w, info.Report)
		}
	}

	// A download in progress: the FL2VA transformer is not there yet.
	partial := t.TempDir()
	tinySnapshot(t, partial, []string{"FL2VA"}, map[string]bool{"FL2VA/transformer": true})
	info = inspectModel(partial)
	if info.Usable || !strings.Contains(info.Problem, "transformer") {
		t.Errorf("partial snapshot: %+v", info)
	}
	// A corrupt shard names the file.
	bad := t.TempDir()
	tinySnapshot(t, bad, []string{"FL2VA"}, nil)
	os.WriteFile(filepath.Join(bad, "FL2VA", "audio_vae", "model.safetensors"), []byte("garbage"), 0o644)
	info = inspectModel(bad)
	if info.Usable || !strings.Contains(info.Report, "audio_vae") {
		t.Errorf("corrupt snapshot: %+v\n%s", info, info.Report)
	}

	// The demo checkpoint's marker names it.
	os.WriteFile(filepath.Join(full, "FL2VA", "model_index.json"), []byte(`{"_h3studio":{"demo":true,"name":"MiniMax-H3 demo model (tiny random weights)","version":1}}`), 0o644)
	if info := inspectModel(full); !info.Demo || info.Name != "MiniMax-H3 demo model (tiny random weights)" {
		t.Errorf("demo: %+v", info)
	}
	_ = engine.TaskT2VA
}
