package studio_test

import (
	"bytes"
	"image"
	"image/color"
	"image/jpeg"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"h3studio/engine"
	"h3studio/engine/take"
	"h3studio/ui/studio"
	"h3studio/ui/studio/fakeengine"
)

func TestLibraryRecoversAndListsDamaged(t *testing.T) {
	dir := t.TempDir()
	// A staging folder with a complete take.json is finished; one without
	// is cleared.
	done := filepath.Join(dir, ".h3-staging-aaaa")
	os.Mkdir(done, 0o755)
	os.WriteFile(filepath.Join(done, studio.TakeMetaFile), []byte(`{"version":1,"title":"Recovered fox","created":"2026-01-02T03:04:05Z","seed":5}`), 0o644)
	half := filepath.Join(dir, ".h3-staging-bbbb")
	os.Mkdir(half, 0o755)
	os.WriteFile(filepath.Join(half, studio.ViewerFile), []byte("partial"), 0o644)
	// A take whose take.json is damaged is listed, not lost.
	dmg := filepath.Join(dir, "2026-01-01-000000-old-s1")
	os.Mkdir(dmg, 0o755)
	os.WriteFile(filepath.Join(dmg, studio.TakeMetaFile), []byte(`{"version":1,`), 0o644)
	os.WriteFile(filepath.Join(dmg, studio.ViewerFile), []byte("x"), 0o644)
	// Unrelated folders are ignored.
	os.Mkdir(filepath.Join(dir, "Some other folder"), 0o755)

	l, err := studio.OpenLibrary(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(half); !os.IsNotExist(err) {
		t.Error("incomplete staging folder kept")
	}
	ts, err := l.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 2 {
		t.Fatalf("takes %+v", ts)
	}
	var rec, bad studio.Take
	for _, tk := range ts {
		if tk.Damaged != "" {
			bad = tk
		} else {
			rec = tk
		}
	}
	if rec.Meta.Title != "Recovered fox" || !strings.HasPrefix(rec.ID, "2026-01-02-") || !strings.HasSuffix(rec.ID, "-recovered-fox-s5") {
		t.Errorf("recovered take %+v", rec)
	}
	if !strings.Contains(bad.Damaged, "damaged") {
		t.Errorf("damaged take %+v", bad)
	}
	if _, err := l.SetStarred(bad, true); err == nil {
		t.Error("starring a damaged take rewrote it")
	}
}

func TestDeleteMovesToTrash(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_DATA_HOME", filepath.Join(home, "data"))
	lib := filepath.Join(home, "Library")
	l, _ := studio.OpenLibrary(lib, nil)
	take := filepath.Join(lib, "2026-01-01-000000-fox-s1")
	os.Mkdir(take, 0o755)
	os.WriteFile(filepath.Join(take, studio.TakeMetaFile), []byte(`{"version":1,"title":"fox"}`), 0o644)
	ts, _ := l.List()
	if err := l.Delete(ts[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(take); !os.IsNotExist(err) {
		t.Error("take still in the library")
	}
	trashed := filepath.Join(home, "data", "Trash", "files", filepath.Base(take), studio.TakeMetaFile)
	if _, err := os.Stat(trashed); err != nil && os.Getenv("GOOS") != "darwin" {
		// On macOS the take goes to ~/.Trash instead.
		if _, err2 := os.Stat(filepath.Join(home, ".Trash", filepath.Base(take))); err2 != nil {
			t.Errorf("take not in the Trash: %v", err)
		}
	}
	info, _ := os.ReadFile(filepath.Join(home, "data", "Trash", "info", filepath.Base(take)+".trashinfo"))
	if len(info) > 0 && !strings.Contains(string(info), "Path="+take) {
		t.Errorf("trashinfo %s", info)
	}
	// Something outside the library is never deleted through it.
	if err := l.Delete(studio.Take{Dir: home}); err == nil {
		t.Error("deleted a folder outside the library")
	}
}

func TestMJPEGAndWAV(t *testing.T) {
	var stream []byte
	var want []image.Image
	for i := 0; i < 5; i++ {
		img := image.NewRGBA(image.Rect(0, 0, 40+i, 30))
		for p := range img.Pix {
			img.Pix[p] = byte(p*7 + i*50)
		}
		var b bytes.Buffer
		jpeg.Encode(&b, img, &jpeg.Options{Quality: 90})
		stream = append(stream, b.Bytes()...)
		want = append(want, img)
	}
	frames, err := studio.SplitMJPEG(stream)
	if err != nil || len(frames) != 5 {
		t.Fatalf("SplitMJPEG: %v, %d frames", err, len(frames))
	}
	for i, f := range frames {
		img, err := jpeg.Decode(bytes.NewReader(f))
		if err != nil || img.Bounds().Dx() != want[i].Bounds().Dx() {
			t.Errorf("frame %d: %v", i, err)
		}
	}
	if _, err := studio.SplitMJPEG(append(stream, 0xFF, 0xD8, 0xFF)); err == nil {
		t.Error("truncated stream accepted")
	}

}

func FuzzSplitMJPEG(f *testing.F) {
	f.Add([]byte{0xFF, 0xD8, 0xFF, 0xD9})
	f.Add([]byte{0xFF, 0xD8, 0xFF, 0xDA, 0x00, 0x02, 0x12, 0xFF, 0x00, 0xFF, 0xD9})
	f.Fuzz(func(t *testing.T, b []byte) {
		frames, _ := studio.SplitMJPEG(b)
		n := 0
		for _, fr := range frames {
			n += len(fr)
		}
		if n > len(b) {
			t.Fatalf("frames longer than the stream")
		}
	})
}

// TestTakeRecordBothWays: the studio's take.json reads with the take
// record's reader (the one the command line's take.json is written for),
// and a take.json written the way `h3studio generate` writes it opens in
// the studio's library and runs again with its own prompt, seed, canvas and
// first frame.
func TestTakeRecordBothWays(t *testing.T) {
	e := newEnv(t, fakeengine.Options{}, false)
	e.tiny()
	if _, err := e.s.Queue().Generate(); err != nil {
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
	const owl = "A grey owl blinks. It turns its head."
	e.cliTake("cli-take", engine.TaskFL2VA, owl, first)
	e.s.Takes().Refresh()
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

	e.s.Takes().Rerun("cli-take", false)
	sn = e.settle(func(sn studio.Snapshot) bool { return len(sn.Takes) == 3 })
	var again studio.Take
	for _, tk := range sn.Takes {
		if tk.ID != "cli-take" && tk.Meta.Task == engine.TaskFL2VA {
			again = tk
		}
	}
	if m := again.Meta; m.Prompt != owl || m.Seed != 7 || m.Width != 256 || m.Height != 256 ||
		m.First == nil || m.First.Path != first || m.First.Hash != hash {
		t.Errorf("rerun of the command-line take: %+v", again)
	}
}

// TestEveryActionOnAVanishedTakeSaysSo: a take's folder deleted outside
// the app before the list caught up (the library is not watched here): each
// action on it says the take is no longer in the library and drops it from
// the list, never a message about something else (an MP4 writer, the
// Trash, a star), never a reference or frame from the missing folder in
// the draft, never the folder made again.
func TestEveryActionOnAVanishedTakeSaysSo(t *testing.T) {
	e := newEnv(t, fakeengine.Options{}, false)
	e.tiny()
	out := t.TempDir()
	actions := []struct {
		name string
		do   func(id string)
	}{
		{"Export MP4", func(id string) { e.s.Takes().ExportMP4(id, filepath.Join(out, "a.mp4")) }},
		{"Export Audio", func(id string) { e.s.Takes().ExportAudio(id, filepath.Join(out, "a.wav")) }},
		{"Export Frames", func(id string) { e.s.Takes().ExportFrames(id, filepath.Join(out, "frames")) }},
		{"Chain", func(id string) { e.s.Takes().Chain(id) }},
		{"Use as Reference", func(id string) { e.s.Takes().UseAsReference(id) }},
		{"Move to Trash", func(id string) { e.s.Takes().Delete(id) }},
		{"Star", func(id string) { e.s.Takes().SetStarred(id, true) }},
		{"Show", func(id string) { e.s.Takes().Show(id) }},
	}
	for i := range actions {
		if _, err := e.s.Queue().Generate(); err != nil {
			t.Fatal(err)
		}
		e.settle(func(sn studio.Snapshot) bool { return len(sn.Takes) == i+1 })
	}
	takes := e.s.Snapshot().Takes
	for i, a := range actions {
		tk := takes[i]
		before := e.s.Snapshot().Draft.Saved()
		for _, n := range e.s.Snapshot().Notices {
			e.s.Dismiss(n.ID)
		}
		if err := os.RemoveAll(tk.Dir); err != nil {
			t.Fatal(err)
		}
		a.do(tk.ID)
		sn := e.settle(func(sn studio.Snapshot) bool {
			for _, n := range sn.Notices {
				if strings.Contains(n.Text, "no longer in the library") {
					return true
				}
			}
			return false
		})
		for _, n := range sn.Notices {
			if !strings.Contains(n.Text, "no longer in the library") {
				t.Errorf("%s: another notice beside the true one: %s", a.name, n.Text)
			}
		}
		for _, other := range sn.Takes {
			if other.ID == tk.ID {
				t.Errorf("%s: the vanished take stays in the list", a.name)
			}
		}
		if sn.Viewer.TakeID == tk.ID && sn.Viewer.Err != "" {
			t.Errorf("%s: the viewer shows the vanished take's error %q", a.name, sn.Viewer.Err)
		}
		if !reflect.DeepEqual(sn.Draft.Saved(), before) {
			t.Errorf("%s: the draft changed: %+v", a.name, sn.Draft.Saved())
		}
		if _, err := os.Stat(tk.Dir); err == nil {
			t.Errorf("%s: the take's folder was made again", a.name)
		}
	}
}

// cliTake writes a take folder name into the library as the command line
// does (take.FromResult of a 256×256 × 22-frame result, 1 s of denoising).
func (e *env) cliTake(name string, task engine.Task, prompt, first string) {
	e.t.Helper()
	res := engine.Result{
		Plan: engine.Plan{Task: task, Request: engine.Request{Prompt: prompt,
			Width: 256, Height: 256, Frames: 22, Steps: 10, Seed: 7, Preset: engine.PresetDefault, Reuse: 1, Layers: 50, CoreReuse: 1, First: first}},
		Seed: 7, Frames: 22, Model: "MiniMax-H3 (demo)", ModelID: "demo",
		Timings: map[engine.Phase]time.Duration{engine.PhaseDenoise: time.Second},
	}
	dir := filepath.Join(e.lib, name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := take.Write(filepath.Join(dir, take.File), take.FromResult(res, "test", "/models/h3", "CPU", "cpu")); err != nil {
		e.t.Fatal(err)
	}
}
