package studio_test

import (
	"image/color"
	"os"
	"path/filepath"
	"testing"
	"time"

	"h3studio/engine"
	"h3studio/engine/take"
	"h3studio/ui/studio"
	"h3studio/ui/studio/fakeengine"
)

// TestTakeRecordBothWays: the studio's take.json reads with the take
// record's reader (the one the command line's take.json is written for),
// and a take.json written the way `h3studio generate` writes it opens in
// the studio's library and runs again with its own prompt, seed, canvas and
// first frame.
func TestTakeRecordBothWays(t *testing.T) {
	e := newEnv(t, fakeengine.Options{}, false)
	e.tiny()
	if _, err := e.s.Generate(); err != nil {
		t.Fatal(err)
	}
	sn := e.settle(func(sn studio.Snapshot) bool { return len(sn.Takes) == 1 })
	rec, err := take.Read(filepath.Join(sn.Takes[0].Dir, take.File))
	if err != nil {
		t.Fatal(err)
	}
	if rec.Version != take.Version || rec.Prompt != "A red fox walks through fresh snow." || rec.Seed != 42 || rec.Frames != 22 ||
		rec.Task != engine.TaskT2VA || rec.App.Name != take.AppName || rec.Files.Viewer != studio.ViewerFile {
		t.Errorf("studio take read by take.Read: %+v", rec)
	}

	first := e.png("first.png", color.RGBA{0, 90, 200, 255})
	res := engine.Result{
		Plan: engine.Plan{Task: engine.TaskFL2VA, Request: engine.Request{Prompt: "A grey owl blinks. It turns its head.",
			Width: 256, Height: 256, Frames: 22, Steps: 10, Seed: 7, Preset: engine.PresetDefault, Reuse: 1, Layers: 50, CoreReuse: 1, First: first}},
		Seed: 7, Frames: 22, Model: "MiniMax-H3 (demo)", ModelID: "demo",
		Timings: map[engine.Phase]time.Duration{engine.PhaseDenoise: time.Second},
	}
	cli := filepath.Join(e.lib, "cli-take")
	if err := os.Mkdir(cli, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := take.Write(filepath.Join(cli, take.File), take.FromResult(res, "test", "/models/h3", "CPU", "cpu")); err != nil {
		t.Fatal(err)
	}
	e.s.RefreshLibrary()
	sn = e.settle(func(sn studio.Snapshot) bool { return len(sn.Takes) == 2 })
	var got studio.Take
	for _, tk := range sn.Takes {
		if tk.ID == "cli-take" {
			got = tk
		}
	}
	hash, _ := take.HashFile(first)
	if got.ID == "" || got.Damaged != "" || got.Meta.Title != "A grey owl blinks" || got.Meta.Task != engine.TaskFL2VA ||
		got.Meta.First == nil || got.Meta.First.Path != first || got.Meta.First.Hash != hash || got.Meta.Model.Dir != "/models/h3" {
		t.Fatalf("command-line take in the library: %+v", got)
	}

	e.s.Rerun("cli-take", false)
	sn = e.settle(func(sn studio.Snapshot) bool { return len(sn.Takes) == 3 })
	var again studio.Take
	for _, tk := range sn.Takes {
		if tk.ID != "cli-take" && tk.Meta.Task == engine.TaskFL2VA {
			again = tk
		}
	}
	if m := again.Meta; m.Prompt != res.Plan.Request.Prompt || m.Seed != 7 || m.Width != 256 || m.Height != 256 ||
		m.First == nil || m.First.Path != first || m.First.Hash != hash {
		t.Errorf("rerun of the command-line take: %+v", again)
	}
}
