package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"h3studio/engine"
	"h3studio/engine/compute/cpu"
	"h3studio/engine/testmodel"
	"h3studio/ui/studio"
)

// TestGenerateMemoryFlags: --memory, --quality and --device-memory reach
// the request and the backend the session plans on.
func TestGenerateMemoryFlags(t *testing.T) {
	a, err := parseGenerateArgs([]string{"-d", "m", "-p", "x", "--memory", "resident-int4", "--quality", "best", "--device-memory", "16GiB", "--working-set", "10GiB"})
	if err != nil {
		t.Fatal(err)
	}
	if a.req.Memory != engine.MemoryResidentInt4 || a.req.Quality != engine.BestQuality || a.deviceMemory != 16<<30 || a.workingSet != 10<<30 {
		t.Errorf("parsed %q %q %d %d", a.req.Memory, a.req.Quality, a.deviceMemory, a.workingSet)
	}
	d := deviceMemory{Backend: cpu.New(cpu.Options{}), memory: 16 << 30}.Device()
	if d.MemoryBytes != 16<<30 || d.WorkingSetBytes != 0 {
		t.Errorf("device %+v", d)
	}
	for _, bad := range [][]string{{"--quality", "great"}, {"--device-memory", "-1"}} {
		if _, err := parseGenerateArgs(append([]string{"-d", "m", "-p", "x"}, bad...)); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}

// TestGenerateEveryMemoryMode runs `h3studio generate --memory MODE` on the
// demo checkpoint in each of the six modes: each exits 0 with its 22 frames,
// says and records the mode it ran, the streamed modes give the same frames
// as the resident mode of the same weights (streaming moves weights, not
// results), and the quantized modes' frames differ from BF16's.
func TestGenerateEveryMemoryMode(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "model")
	if err := testmodel.Write(model); err != nil {
		t.Fatal(err)
	}
	frames := map[engine.MemoryMode][][]byte{}
	for _, m := range []engine.MemoryMode{engine.MemoryResident, engine.MemoryResidentInt8, engine.MemoryResidentInt4,
		engine.MemoryStreaming, engine.MemoryStreamingInt8, engine.MemoryStreamingInt4} {
		out := filepath.Join(dir, string(m))
		var log bytes.Buffer
		code := run([]string{"generate", "-d", model, "-p", "A red fox walks through fresh snow.", "--width", "64", "--height", "64",
			"--frames", "22", "--steps", "2", "--seed", "3", "--backend", "cpu", "--memory", string(m), "-o", "", "--frames-dir", out}, &log, &log)
		if code != 0 {
			t.Fatalf("--memory %s: exit %d: %s", m, code, log.String())
		}
		if !strings.Contains(log.String(), "memory: "+string(m)+",") {
			t.Errorf("--memory %s: the output does not say the mode:\n%s", m, log.String())
		}
		var sc struct {
			Memory string `json:"memory_mode"`
		}
		b, err := os.ReadFile(filepath.Join(out, "take.json"))
		if err != nil || json.Unmarshal(b, &sc) != nil || sc.Memory != string(m) {
			t.Errorf("--memory %s: the sidecar records %q (%v)", m, sc.Memory, err)
		}
		pngs, _ := filepath.Glob(filepath.Join(out, "frame-*.png"))
		if len(pngs) != 22 {
			t.Fatalf("--memory %s: %d frames", m, len(pngs))
		}
		for _, p := range pngs {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			frames[m] = append(frames[m], b)
		}
	}
	same := func(a, b engine.MemoryMode) bool {
		for i := range frames[a] {
			if !bytes.Equal(frames[a][i], frames[b][i]) {
				return false
			}
		}
		return true
	}
	for _, p := range [][2]engine.MemoryMode{{engine.MemoryStreaming, engine.MemoryResident},
		{engine.MemoryStreamingInt8, engine.MemoryResidentInt8}, {engine.MemoryStreamingInt4, engine.MemoryResidentInt4}} {
		if !same(p[0], p[1]) {
			t.Errorf("%s frames differ from %s's", p[0], p[1])
		}
	}
	for _, m := range []engine.MemoryMode{engine.MemoryResidentInt8, engine.MemoryResidentInt4} {
		if same(m, engine.MemoryResident) {
			t.Errorf("%s frames are BF16's", m)
		}
	}
}

// TestStudioEveryMemoryMode makes one take of the demo checkpoint through
// the studio (the real engine, as the window and `serve` run it) in each
// of the six memory modes set under Compose ▸ Memory: each take is saved
// and records the mode it ran in; the plan shown before it names that mode.
func TestStudioEveryMemoryMode(t *testing.T) {
	s, until := demoStudio(t)
	st := studio.DemoSettings()
	st.Speed.Steps, st.Speed.Reuse = 4, 1 // 4 denoising passes: the modes differ in weights, not in steps
	s.Compose().SetSettings(st)
	s.Compose().SetPrompt("A red fox walks through fresh snow.")
	for _, m := range []engine.MemoryMode{engine.MemoryResident, engine.MemoryResidentInt8, engine.MemoryResidentInt4,
		engine.MemoryStreaming, engine.MemoryStreamingInt8, engine.MemoryStreamingInt4} {
		s.Compose().SetMemory(m)
		sn := until("the plan of "+string(m), func(sn studio.Snapshot) bool {
			return sn.Plan != nil && sn.Draft.Settings.Memory == m && sn.CanGenerate
		})
		if sn.Plan.Memory != m {
			t.Errorf("%s: the plan shows %q", m, sn.Plan.Memory)
		}
		id, err := s.Queue().Generate()
		if err != nil {
			t.Fatalf("%s: %v", m, err)
		}
		var job studio.JobView
		until("the take in "+string(m), func(sn studio.Snapshot) bool {
			for _, j := range sn.Jobs {
				if j.ID == id && j.State != studio.JobQueued && j.State != studio.JobRunning {
					job = j
					return true
				}
			}
			return false
		})
		if job.State != studio.JobDone {
			t.Fatalf("%s: the take ended %v: %s", m, job.State, job.Message)
		}
		var take *studio.Take
		for _, tk := range s.Snapshot().Takes {
			if tk.ID == job.TakeID {
				take = &tk
			}
		}
		if take == nil {
			t.Fatalf("%s: take %s is not in the library", m, job.TakeID)
		}
		if tm := take.Meta; tm.Settings.Memory != m || tm.Memory != m || tm.PredictedPeakBytes <= 0 || tm.Frames != st.Frames {
			t.Errorf("%s: the take records setting %q, mode %q, predicted peak %d, %d frames", m, tm.Settings.Memory, tm.Memory, tm.PredictedPeakBytes, tm.Frames)
		}
	}
}
