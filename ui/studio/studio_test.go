package studio_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"image/color"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"h3studio/engine"
	"h3studio/engine/media"
	"h3studio/engine/testkit"
	"h3studio/ui/internal/uitest"
	"h3studio/ui/studio"
	"h3studio/ui/studio/fakeengine"
)

type env struct {
	t    *testing.T
	s    *studio.Studio
	x    *uitest.Queue
	eng  *fakeengine.Engine
	lib  string
	in   string
	wake testkit.Wake
	// skew moves the studio's clock ahead (nanoseconds), for tests of
	// what depends on time passing.
	skew atomic.Int64
}

// newEnv makes a studio over the fake engine with a fresh library. With
// async, background work runs on goroutines (for cancellation tests) and
// the test waits on change notifications.
func newEnv(t *testing.T, o fakeengine.Options, async bool) *env {
	t.Helper()
	return startEnv(t, o, func(opts *studio.Options) {
		if async {
			opts.Go = nil
		}
	})
}

// startEnv makes the studio of newEnv with the options adjusted by edit.
func startEnv(t *testing.T, o fakeengine.Options, edit func(*studio.Options)) *env {
	t.Helper()
	dir := t.TempDir()
	e := &env{t: t, lib: filepath.Join(dir, "Library"), in: filepath.Join(dir, "in"), x: &uitest.Queue{}, wake: testkit.NewWake()}
	os.MkdirAll(e.in, 0o755)
	lib, err := studio.OpenLibrary(e.lib, nil)
	if err != nil {
		t.Fatal(err)
	}
	e.eng = fakeengine.New(o)
	opts := studio.Options{Engine: e.eng, Library: lib, AppVersion: "test", Device: "test device", Go: e.x.Go,
		Now: func() time.Time { return time.Now().Add(time.Duration(e.skew.Load())) }}
	edit(&opts)
	e.s, err = studio.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	auditNotices(t, e.s)
	t.Cleanup(e.s.Close)
	e.s.Subscribe(e.wake.Signal)
	model := filepath.Join(dir, "model")
	os.MkdirAll(model, 0o755)
	e.s.Model().Use(model)
	e.settle(func(sn studio.Snapshot) bool { return sn.Model.Ready && sn.LibraryLoaded })
	return e
}

// settle drains the queue (sync) or waits for notifications (async)
// until cond holds.
func (e *env) settle(cond func(studio.Snapshot) bool) studio.Snapshot {
	e.t.Helper()
	return waitState(e.t, "the awaited state", e.s, e.x, e.wake, cond)
}

// waitState drains x (nil: none) until s's state satisfies cond, looking
// again on each signal on wake (nil: none, only the kit's rechecks); it
// fails t naming what, with the state it saw last.
func waitState(t testing.TB, what string, s *studio.Studio, x *uitest.Queue, wake testkit.Wake, cond func(studio.Snapshot) bool) studio.Snapshot {
	t.Helper()
	var sn studio.Snapshot
	if !testkit.Until(wake, func() bool {
		if x != nil {
			x.Drain()
		}
		sn = s.Snapshot()
		return cond(sn)
	}) {
		t.Fatalf("%s: never happened; model %+v, %d takes, running %v, queued %d, jobs %+v, notices %+v, viewer %+v",
			what, sn.Model, len(sn.Takes), sn.Running, sn.Queued, sn.Jobs, sn.Notices, sn.Viewer)
	}
	return sn
}

// subscribe returns a Wake signalled on every change of s and a wait for
// s's state (waitState without a queue).
func subscribe(t testing.TB, s *studio.Studio) (testkit.Wake, func(what string, cond func(studio.Snapshot) bool) studio.Snapshot) {
	wake := testkit.NewWake()
	s.Subscribe(wake.Signal)
	return wake, func(what string, cond func(studio.Snapshot) bool) studio.Snapshot {
		t.Helper()
		return waitState(t, what, s, nil, wake, cond)
	}
}

func (e *env) png(name string, c color.RGBA) string {
	e.t.Helper()
	return uitest.WriteFile(e.t, e.in, name, uitest.PNG(64, 48, c))
}

func (e *env) wav(name string, secs float64) string {
	e.t.Helper()
	return uitest.WAV(e.t, e.in, name, secs, 0.5)
}

func (e *env) tiny() {
	st := studio.DemoSettings()
	e.s.Compose().SetSettings(st)
	e.s.Compose().SetPrompt("A red fox walks through fresh snow.")
}

func takeDirs(t *testing.T, lib string) (takes, staging []string) {
	t.Helper()
	ents, err := os.ReadDir(lib)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		switch {
		case strings.HasPrefix(e.Name(), ".h3-staging-"):
			staging = append(staging, e.Name())
		case e.IsDir():
			takes = append(takes, e.Name())
		}
	}
	return
}

func TestGenerateSavesTake(t *testing.T) {
	e := newEnv(t, fakeengine.Options{}, false)
	e.tiny()
	sn := e.settle(func(sn studio.Snapshot) bool { return sn.Plan != nil })
	if !sn.CanGenerate {
		t.Fatalf("can't generate: %s", sn.Why)
	}
	if sn.Plan.Request.Frames != 22 || sn.Estimates[engine.PresetPreview] == 0 {
		t.Errorf("plan %+v, estimates %v", sn.Plan, sn.Estimates)
	}
	id, err := e.s.Queue().Generate()
	if err != nil {
		t.Fatal(err)
	}
	sn = e.settle(func(sn studio.Snapshot) bool { return len(sn.Jobs) == 1 && sn.Jobs[0].State == studio.JobDone })
	j := sn.Jobs[0]
	if j.ID != id || j.TakeID == "" {
		t.Fatalf("job %+v", j)
	}
	for _, p := range j.Phases {
		if p.State != studio.PhaseFinished {
			t.Errorf("phase %s not finished: %+v", p.Phase, p)
		}
	}
	takes, staging := takeDirs(t, e.lib)
	if len(takes) != 1 || len(staging) != 0 {
		t.Fatalf("library holds takes %v, staging %v", takes, staging)
	}
	dir := filepath.Join(e.lib, takes[0])
	for _, f := range []string{studio.TakeMetaFile, studio.AudioFile, studio.ThumbFile, studio.LastFile, studio.ViewerFile} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("take file %s: %v", f, err)
		}
	}
	var m studio.TakeMeta
	b, _ := os.ReadFile(filepath.Join(dir, studio.TakeMetaFile))
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m.Prompt != "A red fox walks through fresh snow." || m.Frames != 22 || m.Width != 256 || m.Seed != 42 ||
		m.Model.Engine != fakeengine.Name || m.Model.Version != fakeengine.ModelID || m.App.Version != "test" || m.App.Device == "" || m.Task != engine.TaskT2VA ||
		m.SampleRate != 32000 || m.Channels != 2 || m.Timings[engine.PhaseDenoise] < 0 || m.Settings.Steps != engine.Presets[engine.PresetPreview].Steps {
		t.Errorf("take.json = %s", b)
	}
	// the preset by name and by the values of the one table (engine.Presets)
	if q := engine.Presets[engine.PresetPreview]; m.Settings.Quality != engine.PresetPreview || m.Settings.Reuse != q.Reuse ||
		m.Settings.CoreReuse != q.CoreReuse || m.Settings.Layers != int(float64(engine.MaxLayers)*q.LayersFraction+0.5) {
		t.Errorf("take.json records the preset as %q %+v, want %q %+v", m.Settings.Quality, m.Settings, engine.PresetPreview, q)
	}
	if len(sn.Takes) != 1 || sn.Takes[0].ID != takes[0] || sn.Takes[0].Thumb == nil {
		t.Errorf("snapshot takes %+v", sn.Takes)
	}
	// The finished take plays in the viewer at once, with its sound.
	if sn.Viewer.TakeID != takes[0] || sn.Viewer.Clip.Len() != 22 || sn.Viewer.Clip.Audio.Frames() != 22*32000/24 || len(sn.Viewer.Clip.Peaks) == 0 {
		t.Errorf("viewer %+v", sn.Viewer)
	}
	if f := sn.Viewer.Clip.Frame(21); f == nil || f.Bounds().Dx() != 256 {
		t.Errorf("last viewer frame %v", f)
	}
	// Reloading the library from disk gives the same take, and its clip.
	l, _ := studio.OpenLibrary(e.lib, nil)
	ts, err := l.List()
	if err != nil || len(ts) != 1 || ts[0].Meta.Seed != 42 {
		t.Fatalf("List: %v %+v", err, ts)
	}
	c, err := l.LoadClip(ts[0])
	if err != nil || c.Len() != 22 || c.Audio.Rate != 32000 {
		t.Fatalf("LoadClip: %v %d", err, c.Len())
	}
}

func TestQueueRunsOneAtATime(t *testing.T) {
	hold := make(chan struct{})
	e := newEnv(t, fakeengine.Options{Hold: hold}, true)
	e.tiny()
	a, err := e.s.Queue().Generate()
	if err != nil {
		t.Fatal(err)
	}
	e.s.Compose().SetSeed(7)
	b, err := e.s.Queue().Generate()
	if err != nil {
		t.Fatal(err)
	}
	sn := e.s.Snapshot()
	if sn.Queued != 1 && !(sn.Running != nil && sn.Queued == 1) {
		// the first job may not have started yet; both are in the list
	}
	if len(sn.Jobs) != 2 {
		t.Fatalf("jobs %+v", sn.Jobs)
	}
	done := make(chan struct{})
	go func() {
		for {
			select {
			case hold <- struct{}{}:
			case <-done:
				return
			}
		}
	}()
	defer close(done)
	sn = e.settle(func(sn studio.Snapshot) bool {
		n := 0
		for _, j := range sn.Jobs {
			if j.State == studio.JobDone {
				n++
			}
		}
		return n == 2
	})
	if e.eng.Gen.MaxActive != 1 {
		t.Errorf("%d generations ran at once", e.eng.Gen.MaxActive)
	}
	if sn.Jobs[0].ID != b || sn.Jobs[1].ID != a {
		t.Errorf("finished jobs not newest first: %+v", sn.Jobs)
	}
	if takes, _ := takeDirs(t, e.lib); len(takes) != 2 {
		t.Errorf("takes %v", takes)
	}
}

func TestCancelRunningLeavesNothing(t *testing.T) {
	hold := make(chan struct{})
	e := newEnv(t, fakeengine.Options{Hold: hold}, true)
	e.tiny()
	id, _ := e.s.Queue().Generate()
	// Let it reach denoising.
	for i := 0; i < 8; i++ {
		hold <- struct{}{}
	}
	sn := e.settle(func(sn studio.Snapshot) bool {
		return sn.Running != nil && sn.Running.Current == engine.PhaseDenoise
	})
	if sn.Running.ETA <= 0 || sn.Running.Elapsed <= 0 {
		t.Errorf("running view %+v", sn.Running)
	}
	e.s.Queue().Cancel(id)
	sn = e.settle(func(sn studio.Snapshot) bool { return sn.Jobs[0].State == studio.JobCancelled && sn.Running == nil })
	takes, staging := takeDirs(t, e.lib)
	if len(takes) != 0 || len(staging) != 0 {
		t.Errorf("after cancel: takes %v staging %v", takes, staging)
	}
	if !strings.Contains(sn.Jobs[0].Message, "nothing was saved") {
		t.Errorf("message %q", sn.Jobs[0].Message)
	}
}

func TestCancelQueued(t *testing.T) {
	hold := make(chan struct{})
	e := newEnv(t, fakeengine.Options{Hold: hold}, true)
	e.tiny()
	a, _ := e.s.Queue().Generate()
	b, _ := e.s.Queue().Generate()
	e.s.Queue().Cancel(b)
	e.s.Queue().Cancel(a)
	sn := e.settle(func(sn studio.Snapshot) bool { return sn.Running == nil && !e.s.Queue().Busy() })
	for _, j := range sn.Jobs {
		if j.State != studio.JobCancelled {
			t.Errorf("job %d is %s", j.ID, j.State)
		}
	}
	if e.eng.Gen.Runs > 1 {
		t.Errorf("the cancelled queued job ran")
	}
}

type fullDisk struct{ n int }

func (f *fullDisk) Write(p []byte) (int, error) {
	if f.n+len(p) > 1000 {
		return 0, &os.PathError{Op: "write", Path: "x", Err: syscall.ENOSPC}
	}
	f.n += len(p)
	return len(p), nil
}
func (f *fullDisk) Close() error { return nil }

func TestDiskFullKeepsLibrary(t *testing.T) {
	e := newEnv(t, fakeengine.Options{}, false)
	e.tiny()
	e.s.Queue().Generate()
	e.settle(func(sn studio.Snapshot) bool { return len(sn.Jobs) == 1 && sn.Jobs[0].State == studio.JobDone })
	before, _ := takeDirs(t, e.lib)
	restore := studio.SetCreateFile(func(string) (io.WriteCloser, error) { return &fullDisk{}, nil })
	defer restore()
	e.s.Compose().SetSeed(9)
	e.s.Queue().Generate()
	sn := e.settle(func(sn studio.Snapshot) bool { return sn.Jobs[0].State == studio.JobFailed })
	if !strings.HasPrefix(sn.Jobs[0].Message, "The disk is full, so the take could not be saved. Nothing in the library was changed") {
		t.Errorf("message %q", sn.Jobs[0].Message)
	}
	after, staging := takeDirs(t, e.lib)
	if len(after) != len(before) || after[0] != before[0] || len(staging) != 0 {
		t.Errorf("library changed: %v → %v (staging %v)", before, after, staging)
	}
	var failed bool
	for _, n := range sn.Notices {
		failed = failed || (n.Level == studio.Fail && strings.Contains(n.Text, "disk is full"))
	}
	if !failed {
		t.Errorf("no notice: %+v", sn.Notices)
	}
}

// TestExports drives File ▸ Export MP4…, Export Frames… and Export Audio…
// on a take of a build without an MP4 writer: the sound is copied byte for
// byte, the frames are written from the viewer frames (saying so), the
// missing MP4 is explained, and a full disk part-way through the frames
// leaves none of them behind.
func TestExports(t *testing.T) {
	e := newEnv(t, fakeengine.Options{}, false)
	e.tiny()
	e.s.Queue().Generate()
	sn := e.settle(func(sn studio.Snapshot) bool { return len(sn.Takes) == 1 })
	take := sn.Takes[0]
	out := t.TempDir()
	lastNotice := func() studio.Notice {
		t.Helper()
		var n studio.Notice
		e.settle(func(sn studio.Snapshot) bool {
			if len(sn.Notices) == 0 {
				return false
			}
			n = sn.Notices[len(sn.Notices)-1]
			return true
		})
		for _, x := range e.s.Snapshot().Notices {
			e.s.Dismiss(x.ID)
		}
		return n
	}
	for _, x := range sn.Notices {
		e.s.Dismiss(x.ID)
	}

	// Audio: the take's WAV, unchanged.
	wav := filepath.Join(out, "fox.wav")
	e.s.Takes().ExportAudio(take.ID, wav)
	if n := lastNotice(); n.Level != studio.Info || !strings.Contains(n.Text, "Exported fox.wav") {
		t.Errorf("audio export notice %+v", n)
	}
	got, err1 := os.ReadFile(wav)
	want, err2 := os.ReadFile(filepath.Join(take.Dir, studio.AudioFile))
	if err1 != nil || err2 != nil || !bytes.Equal(got, want) {
		t.Errorf("exported sound differs from the take's (%v, %v)", err1, err2)
	}

	// MP4: this take has none; the notice says why, and no file is left
	// (not even the empty one the save dialog creates).
	mp4 := filepath.Join(out, "fox.mp4")
	os.WriteFile(mp4, nil, 0o644)
	e.s.Takes().ExportMP4(take.ID, mp4)
	if n := lastNotice(); n.Level != studio.Fail || !strings.Contains(n.Text, "has no MP4") {
		t.Errorf("MP4 export notice %+v", n)
	}
	if _, err := os.Stat(mp4); err == nil {
		t.Error("an MP4 was written for a take without one")
	}

	// Frames: every frame as a PNG.
	frames := filepath.Join(out, "frames")
	e.s.Takes().ExportFrames(take.ID, frames)
	if n := lastNotice(); n.Level != studio.Info || !strings.Contains(n.Text, "Exported 22 frames") {
		t.Errorf("frames export notice %+v", n)
	}
	ents, _ := os.ReadDir(frames)
	if len(ents) != 22 || ents[0].Name() != "frame-00001.png" || ents[21].Name() != "frame-00022.png" {
		t.Fatalf("exported %d frames", len(ents))
	}
	f, _ := os.Open(filepath.Join(frames, "frame-00022.png"))
	img, err := png.Decode(f)
	f.Close()
	if err != nil || img.Bounds().Dx() != 256 {
		t.Errorf("frame 22: %v %v", err, img)
	}

	// Frames into a folder that already holds frames (the user's, or an
	// earlier export): refused, nothing replaced.
	mine := filepath.Join(out, "mine")
	os.MkdirAll(mine, 0o755)
	os.WriteFile(filepath.Join(mine, "frame-00001.png"), []byte("my drawing"), 0o644)
	e.s.Takes().ExportFrames(take.ID, mine)
	if n := lastNotice(); n.Level != studio.Fail || !strings.Contains(n.Text, "already holds 1 frame") {
		t.Errorf("export over frames: notice %+v", n)
	}
	if b, _ := os.ReadFile(filepath.Join(mine, "frame-00001.png")); string(b) != "my drawing" {
		t.Error("an export replaced a frame the user had")
	}
	if ents, _ := os.ReadDir(mine); len(ents) != 1 {
		t.Errorf("the refused export wrote %d files", len(ents)-1)
	}

	// Sound onto a full disk: the dialog's empty file goes, an earlier
	// export is kept.
	restore := studio.SetCreateFile(func(string) (io.WriteCloser, error) { return &fullDisk{}, nil })
	wav2 := filepath.Join(out, "fox2.wav")
	os.WriteFile(wav2, nil, 0o644)
	e.s.Takes().ExportAudio(take.ID, wav2)
	e.s.Takes().ExportAudio(take.ID, wav)
	if n := lastNotice(); n.Level != studio.Fail || !strings.Contains(n.Text, "disk is full") {
		t.Errorf("full-disk sound export notice %+v", n)
	}
	restore()
	if _, err := os.Stat(wav2); err == nil {
		t.Error("a failed export left an empty file")
	}
	if b, _ := os.ReadFile(wav); !bytes.Equal(b, want) {
		t.Error("a failed export damaged the file it was to replace")
	}

	// Frames onto a full disk: the export fails, says so, and takes back
	// the frames it wrote.
	full := filepath.Join(out, "full")
	n := 0
	restore = studio.SetCreateFile(func(p string) (io.WriteCloser, error) {
		n++
		if n > 5 {
			return &fullDisk{}, nil
		}
		return os.Create(p)
	})
	e.s.Takes().ExportFrames(take.ID, full)
	notice := lastNotice()
	restore()
	if notice.Level != studio.Fail || !strings.Contains(notice.Text, "disk is full") {
		t.Errorf("full-disk notice %+v", notice)
	}
	if ents, _ := os.ReadDir(full); len(ents) != 0 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("a failed export left %v behind", names)
	}
	// The library is untouched.
	if takes, staging := takeDirs(t, e.lib); len(takes) != 1 || len(staging) != 0 {
		t.Errorf("library %v, staging %v", takes, staging)
	}
}

func TestEngineFailure(t *testing.T) {
	e := newEnv(t, fakeengine.Options{FailAt: engine.PhaseVideoDecode}, false)
	e.tiny()
	e.s.Queue().Generate()
	sn := e.settle(func(sn studio.Snapshot) bool { return sn.Jobs[0].State == studio.JobFailed })
	if !strings.Contains(sn.Jobs[0].Message, "simulated failure") {
		t.Errorf("message %q", sn.Jobs[0].Message)
	}
	if takes, staging := takeDirs(t, e.lib); len(takes)+len(staging) != 0 {
		t.Errorf("library %v %v", takes, staging)
	}
}

func TestChainRerunAndUndo(t *testing.T) {
	e := newEnv(t, fakeengine.Options{}, false)
	e.tiny()
	e.s.Queue().Generate()
	sn := e.settle(func(sn studio.Snapshot) bool { return len(sn.Takes) == 1 })
	take := sn.Takes[0]
	e.s.Compose().AddReferences([]string{e.png("a.png", color.RGBA{200, 0, 0, 255})})
	e.settle(func(sn studio.Snapshot) bool { return len(sn.Draft.References) == 1 })

	e.s.Takes().Chain(take.ID)
	sn = e.settle(func(sn studio.Snapshot) bool { return sn.Draft.First.State == studio.MediaReady })
	if sn.Draft.First.Path != filepath.Join(take.Dir, studio.LastFile) || len(sn.Draft.References) != 0 || sn.Task != engine.TaskFL2VA || !sn.CanUndo {
		t.Fatalf("chained draft %+v", sn.Draft)
	}
	// The keyframe alignment line follows the new first frame once the
	// prompt is in the base format.
	e.s.Compose().ApplyTemplate("base")
	sn = e.settle(func(sn studio.Snapshot) bool { return strings.HasPrefix(sn.Draft.Prompt, "For the target video") })
	e.s.Compose().Undo()
	e.s.Compose().Undo()
	sn = e.s.Snapshot()

	// Same seed again: identical frames; a new seed: different frames.
	e.s.Takes().Rerun(take.ID, false)
	e.s.Takes().Rerun(take.ID, true)
	sn = e.settle(func(sn studio.Snapshot) bool { return len(sn.Takes) == 3 })
	read := func(t0 studio.Take) []byte {
		b, _ := os.ReadFile(filepath.Join(t0.Dir, studio.ViewerFile))
		return b
	}
	var same, other studio.Take
	for _, t0 := range sn.Takes[:2] {
		if t0.Meta.Seed == take.Meta.Seed {
			same = t0
		} else {
			other = t0
		}
	}
	if same.ID == "" || other.ID == "" {
		t.Fatalf("reruns: %+v", sn.Takes)
	}
	if !bytes.Equal(read(same), read(take)) {
		t.Error("same seed gave different frames")
	}
	if bytes.Equal(read(other), read(take)) {
		t.Error("new seed gave the same frames")
	}
}

func TestReferencesRelabelPrompt(t *testing.T) {
	e := newEnv(t, fakeengine.Options{}, false)
	a := e.png("a.png", color.RGBA{255, 0, 0, 255})
	b := e.png("b.png", color.RGBA{0, 255, 0, 255})
	s := e.wav("voice.wav", 3)
	e.s.Compose().ApplyTemplate("ref2va")
	e.s.Compose().AddReferences([]string{a, b, s})
	sn := e.settle(func(sn studio.Snapshot) bool {
		return len(sn.Draft.References) == 3 && sn.Draft.References[2].Media.State == studio.MediaReady
	})
	if got := strings.Join(sn.Labels, ","); got != "Picture 1,Picture 2,Audio 1" {
		t.Fatalf("labels %s", got)
	}
	if !strings.Contains(sn.Draft.Prompt, "<Audio 1>: reference -") || !strings.Contains(sn.Draft.Prompt, "<Picture 2> is") {
		t.Fatalf("label lines missing:\n%s", sn.Draft.Prompt)
	}
	if sn.Draft.References[2].Media.Info.Duration != 3*time.Second || len(sn.Draft.References[2].Media.Peaks) == 0 {
		t.Errorf("sound not read: %+v", sn.Draft.References[2].Media)
	}
	// Describe picture 1, then move it after picture 2.
	p := strings.Replace(sn.Draft.Prompt, "<Picture 1> is", "<Picture 1> is the red card.", 1)
	e.s.Compose().SetPrompt(p)
	e.s.Compose().MoveReference(sn.Draft.References[0].ID, 1)
	sn = e.settle(func(sn studio.Snapshot) bool { return sn.Draft.References[0].Media.Path == b })
	if !strings.Contains(sn.Draft.Prompt, "<Picture 1> is \n<Picture 2> is the red card.") {
		t.Errorf("reorder did not renumber:\n%s", sn.Draft.Prompt)
	}
	// Removing the red card drops its bare lines and renumbers; the
	// description the user wrote stays, its label marked.
	e.s.Compose().RemoveReference(sn.Draft.References[1].ID)
	sn = e.settle(func(sn studio.Snapshot) bool { return len(sn.Draft.References) == 2 })
	if !strings.Contains(sn.Draft.Prompt, "[removed: a.png] is the red card.") || strings.Contains(sn.Draft.Prompt, "<Picture 2>") ||
		strings.Contains(sn.Draft.Prompt, "[removed: a.png]: fully_preserved") {
		t.Errorf("removal:\n%s", sn.Draft.Prompt)
	}
	if sn.Task != engine.TaskRef2VA {
		t.Errorf("task %s", sn.Task)
	}
}

func TestDropBadInput(t *testing.T) {
	e := newEnv(t, fakeengine.Options{}, false)
	folder := filepath.Join(e.in, "shots")
	os.Mkdir(folder, 0o755)
	txt := filepath.Join(e.in, "notes.txt")
	os.WriteFile(txt, []byte("just words, not media at all"), 0o644)
	broken := filepath.Join(e.in, "broken.png")
	os.WriteFile(broken, []byte("\x89PNG\r\n\x1a\nthis is not really a png"), 0o644)
	fake := filepath.Join(e.in, "photo.jpg")
	wavBytes, _ := os.ReadFile(e.wav("sound.wav", 0.1))
	os.WriteFile(fake, wavBytes, 0o644) // a sound file named like a picture
	refused := e.s.Compose().Drop([]string{folder, filepath.Join(e.in, "gone.png")}, studio.DropReferences)
	if len(refused) != 2 || !strings.Contains(refused[0], "is a folder") || !strings.Contains(refused[1], "can't be opened") {
		t.Errorf("refused %q", refused)
	}
	e.s.Compose().Drop([]string{txt, broken, fake}, studio.DropReferences)
	sn := e.settle(func(sn studio.Snapshot) bool {
		for _, r := range sn.Draft.References {
			if r.Media.State == studio.MediaProbing {
				return false
			}
		}
		return true
	})
	want := map[string]string{"notes.txt": "not a picture, video or sound file", "broken.png": "not a picture this app can read", "photo.jpg": "not a picture this app can read"}
	for _, r := range sn.Draft.References {
		if r.Media.State != studio.MediaBroken || !strings.Contains(r.Media.Note, want[r.Media.Name()]) {
			t.Errorf("%s: state %d note %q", r.Media.Name(), r.Media.State, r.Media.Note)
		}
	}
	if sn.CanGenerate {
		t.Error("broken references do not block Generate")
	}
	var texts []string
	for _, n := range sn.Notices {
		texts = append(texts, n.Text)
	}
	all := strings.Join(texts, "\n")
	for _, w := range []string{"shots is a folder", "gone.png can't be opened", "notes.txt is not a picture, video or sound file"} {
		if !strings.Contains(all, w) {
			t.Errorf("notices lack %q:\n%s", w, all)
		}
	}
	// A picture onto a frame slot, with references present: the rule shows
	// on both.
	e.s.Compose().Drop([]string{e.png("f.png", color.RGBA{1, 2, 3, 255})}, studio.DropFirst)
	sn = e.settle(func(sn studio.Snapshot) bool { return sn.Draft.First.State == studio.MediaReady })
	var onFirst bool
	for _, p := range sn.Problems {
		onFirst = onFirst || (p.Where == studio.AtFirst && strings.Contains(p.Message, "can't be combined"))
	}
	if !onFirst {
		t.Errorf("no inline rule on the first frame: %+v", sn.Problems)
	}
}

type refusingGen struct{ studio.Generator }

func (refusingGen) Plan(engine.Request) (engine.Plan, error) {
	return engine.Plan{}, errors.New("engine: rule X: the prompt is too long (at most 1024 tokens)")
}

type refusingEngine struct{ *fakeengine.Engine }

func (e refusingEngine) Open(string) (studio.Generator, error) { return refusingGen{e.Gen}, nil }

func TestPlanErrorShown(t *testing.T) {
	dir := t.TempDir()
	lib, _ := studio.OpenLibrary(filepath.Join(dir, "lib"), nil)
	x := &uitest.Queue{}
	s, err := studio.New(studio.Options{Engine: refusingEngine{fakeengine.New(fakeengine.Options{})}, Library: lib, Go: x.Go})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Model().Use(dir)
	s.Compose().SetPrompt("x")
	x.Drain()
	sn := s.Snapshot()
	if sn.CanGenerate || !strings.Contains(sn.Why, "rule X") {
		t.Errorf("CanGenerate %v, why %q, problems %+v", sn.CanGenerate, sn.Why, sn.Problems)
	}
	if _, err := s.Queue().Generate(); !errors.Is(err, studio.ErrNotReady) {
		t.Errorf("Generate: %v", err)
	}
}

func TestMemoryFitWarning(t *testing.T) {
	dir := t.TempDir()
	lib, _ := studio.OpenLibrary(filepath.Join(dir, "lib"), nil)
	x := &uitest.Queue{}
	s, err := studio.New(studio.Options{Engine: fakeengine.New(fakeengine.Options{}), Library: lib, Go: x.Go, MemoryBytes: 2 << 30})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Model().Use(dir)
	s.Compose().SetPrompt("A fox.")
	x.Drain()
	sn := s.Snapshot()
	var warn *studio.Problem
	for i, p := range sn.Problems {
		if p.Severity == studio.Warning && strings.Contains(p.Message, "this machine has 2 GB") {
			warn = &sn.Problems[i]
		}
	}
	if warn == nil || !strings.Contains(warn.Fix, "Streaming") || !sn.CanGenerate {
		t.Errorf("fit warning %+v (can generate %v): %+v", warn, sn.CanGenerate, sn.Problems)
	}
}

// TestRestoreDraft: the draft a user leaves (prompt, keyframes,
// references with their options) comes back in a new studio from its
// saved form, files read again, labels unchanged, nothing to undo; a file
// deleted meanwhile is marked, not dropped.
func TestRestoreDraft(t *testing.T) {
	e := newEnv(t, fakeengine.Options{}, false)
	a := e.png("a.png", color.RGBA{255, 0, 0, 255})
	b := e.png("b.png", color.RGBA{0, 255, 0, 255})
	voice := e.wav("voice.wav", 3)
	e.s.Compose().ApplyTemplate("ref2va")
	e.s.Compose().AddReferences([]string{a, voice, b})
	sn := e.settle(func(sn studio.Snapshot) bool {
		return len(sn.Draft.References) == 3 && sn.Draft.References[2].Media.State == studio.MediaReady
	})
	e.s.Compose().SetPrompt(strings.Replace(sn.Draft.Prompt, "<Picture 2> is", "<Picture 2> is the green card.", 1))
	e.s.Compose().SetKeepLabels(false)
	sn = e.settle(func(sn studio.Snapshot) bool { return !sn.Draft.KeepLabels })
	saved := sn.Draft.Saved()
	blob, err := json.Marshal(saved)
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(b) // deleted between runs

	f := newEnv(t, fakeengine.Options{}, false)
	var back studio.SavedDraft
	if err := json.Unmarshal(blob, &back); err != nil {
		t.Fatal(err)
	}
	f.s.Compose().Restore(back)
	got := f.settle(func(sn studio.Snapshot) bool {
		return len(sn.Draft.References) == 3 && sn.Draft.References[1].Media.State == studio.MediaReady &&
			sn.Draft.References[2].Media.State != studio.MediaProbing
	})
	if got.Draft.Prompt != sn.Draft.Prompt || got.Draft.KeepLabels || strings.Join(got.Labels, ",") != "Picture 1,Audio 1,Picture 2" {
		t.Errorf("restored prompt/labels differ:\n%s\n%v", got.Draft.Prompt, got.Labels)
	}
	if got.Draft.References[2].Media.State != studio.MediaMissing || got.CanUndo {
		t.Errorf("deleted file %+v, undo %v", got.Draft.References[2].Media, got.CanUndo)
	}
	if (studio.SavedDraft{}).Empty() != true || saved.Empty() {
		t.Error("Empty")
	}
}

// TestProbesAreBounded: a drop of many files reads at most two at a time
// (each may decode a large picture), and every one is read in the end.
func TestProbesAreBounded(t *testing.T) {
	dir := t.TempDir()
	lib, _ := studio.OpenLibrary(filepath.Join(dir, "lib"), nil)
	var mu sync.Mutex
	active, most := 0, 0
	opener := func(path string) (media.Source, error) {
		mu.Lock()
		active++
		most = max(most, active)
		mu.Unlock()
		time.Sleep(20 * time.Millisecond)
		mu.Lock()
		active--
		mu.Unlock()
		return nil, errors.ErrUnsupported // the portable readers take over
	}
	s, err := studio.New(studio.Options{Engine: fakeengine.New(fakeengine.Options{}), Library: lib, Opener: opener})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	e := &env{t: t, in: dir}
	var paths []string
	for i := 0; i < 12; i++ {
		paths = append(paths, e.png(fmt.Sprintf("p%02d.png", i), color.RGBA{uint8(i * 20), 0, 0, 255}))
	}
	wake := testkit.NewWake()
	s.Subscribe(wake.Signal)
	s.Compose().AddReferences(paths)
	ready := func() int {
		n := 0
		for _, r := range s.Snapshot().Draft.References {
			if r.Media.State == studio.MediaReady {
				n++
			}
		}
		return n
	}
	if !testkit.Until(wake, func() bool { return ready() == len(paths) }) {
		t.Fatalf("%d of %d files read", ready(), len(paths))
	}
	if most > 2 || most == 0 {
		t.Errorf("%d files were read at once, want at most 2", most)
	}
}

// TestInfoNoticesFade: an Info notice leaves by itself after a while;
// warnings, failures and notices offering Undo stay until dismissed.
func TestInfoNoticesFade(t *testing.T) {
	dir := t.TempDir()
	lib, _ := studio.OpenLibrary(filepath.Join(dir, "lib"), nil)
	s, err := studio.New(studio.Options{Engine: fakeengine.New(fakeengine.Options{}), Library: lib, InfoNoticeLife: 30 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Notify(studio.Info, "Exported fox.wav.")
	s.Notify(studio.Warn, "No sound output.")
	s.Compose().ApplyExample(0) // an Info notice with Undo
	if n := len(s.Snapshot().Notices); n != 3 {
		t.Fatalf("%d notices", n)
	}
	wake := testkit.NewWake()
	s.Subscribe(wake.Signal)
	two := func() bool { return len(s.Snapshot().Notices) == 2 }
	if testkit.Until(wake, two) && !testkit.Holds(100*time.Millisecond, wake, two) {
		t.Error("a notice that stays until dismissed left")
	}
	var left []string
	for _, n := range s.Snapshot().Notices {
		left = append(left, n.Text)
	}
	if len(left) != 2 || left[0] != "No sound output." || !strings.Contains(left[1], "example") {
		t.Errorf("notices left: %q", left)
	}
}

// auditNotices checks every notice s shows while the test runs (every test
// on an env contributes its notices): each is one finished text — it ends
// a sentence, holds no doubled stop, no unformatted value and no empty
// cause. Reported after the test, when the studio is closed.
func auditNotices(t *testing.T, s *studio.Studio) {
	var mu sync.Mutex
	bad := map[string]string{}
	s.Subscribe(func() {
		for _, n := range s.Snapshot().Notices {
			if why := unfinishedNotice(n.Text); why != "" {
				mu.Lock()
				bad[n.Text] = why
				mu.Unlock()
			}
		}
	})
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for text, why := range bad {
			t.Errorf("notice %q: %s", text, why)
		}
	})
}

// doubledStop is two full stops that are not a path's "../", or a stop
// after a space.
var doubledStop = regexp.MustCompile(`\.\.([^/]|$)| \.( |$)`)

// emptyCause is a colon with nothing after it but a stop.
var emptyCause = regexp.MustCompile(`: ?\.( |$)`)

// unfinishedNotice says what is wrong with a notice's text ("" if nothing).
func unfinishedNotice(text string) string {
	trimmed := strings.TrimRight(text, "”)\"'")
	switch {
	case strings.TrimSpace(text) != text || text == "":
		return "empty, or space at an end"
	case !strings.ContainsAny(trimmed[len(trimmed)-1:], ".!?…"):
		return "does not end a sentence"
	case doubledStop.MatchString(text), strings.Contains(text, "  "):
		return "a doubled stop or space"
	case strings.Contains(text, "%!"), strings.Contains(text, "<nil>"), strings.Contains(text, "%v"), strings.Contains(text, "%s"):
		return "an unformatted value"
	case emptyCause.MatchString(text), strings.Contains(text, "()"), strings.Contains(text, "“”"):
		return "an empty cause or name"
	}
	return ""
}
