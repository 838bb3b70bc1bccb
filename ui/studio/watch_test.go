package studio_test

import (
	"image/color"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"h3studio/engine/testkit"
	"h3studio/ui/studio"
	"h3studio/ui/studio/fakeengine"
)

// gatedEngine reports a folder usable only once it holds a file named
// "complete" (a download that finishes).
type gatedEngine struct{ *fakeengine.Engine }

func (g gatedEngine) Inspect(dir string) studio.ModelInfo {
	info := g.Engine.Inspect(dir)
	if _, err := os.Stat(filepath.Join(dir, "FL2VA", "transformer", "complete")); err != nil {
		info.Usable, info.Problem = false, "the transformer is incomplete"
	}
	return info
}

func TestWatchInputsAndModel(t *testing.T) {
	dir := t.TempDir()
	lib, _ := studio.OpenLibrary(filepath.Join(dir, "lib"), nil)
	s, err := studio.New(studio.Options{Engine: gatedEngine{fakeengine.New(fakeengine.Options{})}, Library: lib, Watch: true, WatchDelay: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, wait := subscribe(t, s)
	e := &env{t: t, in: filepath.Join(dir, "in")}
	os.MkdirAll(e.in, 0o755)

	// An input file edited on disk is read again; deleted, it is marked.
	p := e.png("face.png", color.RGBA{10, 20, 30, 255})
	s.Compose().AddReferences([]string{p})
	sn := wait("read", func(sn studio.Snapshot) bool {
		return len(sn.Draft.References) == 1 && sn.Draft.References[0].Media.State == studio.MediaReady
	})
	gen := sn.Draft.References[0].Media.Gen
	e.png("face.png", color.RGBA{200, 20, 30, 255}) // the user edits it
	wait("reload", func(sn studio.Snapshot) bool { return sn.Draft.References[0].Media.Gen > gen })
	os.Remove(p)
	sn = wait("missing", func(sn studio.Snapshot) bool { return sn.Draft.References[0].Media.State == studio.MediaMissing })
	var warned bool
	for _, n := range sn.Notices {
		warned = warned || strings.Contains(n.Text, "face.png was moved or deleted")
	}
	if !warned {
		t.Errorf("no notice: %+v", sn.Notices)
	}
	e.png("face.png", color.RGBA{1, 1, 1, 255}) // put back
	wait("back", func(sn studio.Snapshot) bool { return sn.Draft.References[0].Media.State == studio.MediaReady })

	// A model folder that is still downloading becomes usable when its last
	// file arrives (after a burst of writes).
	model := filepath.Join(dir, "model")
	os.MkdirAll(model, 0o755)
	s.Model().Use(model)
	wait("incomplete", func(sn studio.Snapshot) bool { return !sn.Model.Loading && sn.Model.Info.Problem != "" })
	tr := filepath.Join(model, "FL2VA", "transformer")
	os.MkdirAll(tr, 0o755)
	f, _ := os.Create(filepath.Join(tr, "shard.safetensors"))
	for i := 0; i < 200; i++ {
		f.Write(make([]byte, 4096))
	}
	f.Close()
	os.WriteFile(filepath.Join(tr, "complete"), nil, 0o644)
	sn = wait("complete", func(sn studio.Snapshot) bool { return sn.Model.Ready })
	var told bool
	for _, n := range sn.Notices {
		told = told || strings.Contains(n.Text, "complete now")
	}
	if !told {
		t.Errorf("no notice for the completed model: %+v", sn.Notices)
	}
}

// TestVanishedTakesLeaveTheLibrary: a take folder moved away outside the
// app leaves the list by itself (the library is watched), is not brought
// back by a reload, and an action on it says what happened instead of
// blaming an MP4 writer or a missing last frame.
func TestVanishedTakesLeaveTheLibrary(t *testing.T) {
	dir := t.TempDir()
	lib, _ := studio.OpenLibrary(filepath.Join(dir, "lib"), nil)
	s, err := studio.New(studio.Options{Engine: fakeengine.New(fakeengine.Options{}), Library: lib, Watch: true, WatchDelay: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	wake, wait := subscribe(t, s)
	model := filepath.Join(dir, "model")
	os.MkdirAll(model, 0o755)
	s.Model().Use(model)
	wait("model", func(sn studio.Snapshot) bool { return sn.Model.Ready && sn.LibraryLoaded })
	s.Compose().SetSettings(studio.DemoSettings())
	s.Compose().SetPrompt("A red fox walks through fresh snow.")
	s.Queue().Generate()
	s.Queue().Generate()
	done := func(sn studio.Snapshot) (ids []string) {
		for _, j := range sn.Jobs {
			if j.TakeID != "" {
				ids = append(ids, j.TakeID)
			}
		}
		return ids
	}
	sn := wait("two takes", func(sn studio.Snapshot) bool { return len(done(sn)) == 2 && sn.Running == nil && sn.Queued == 0 })
	find := func(sn studio.Snapshot, id string) (studio.Take, bool) {
		for _, t := range sn.Takes {
			if t.ID == id {
				return t, true
			}
		}
		return studio.Take{}, false
	}
	ids := done(sn)
	gone, ok1 := find(sn, ids[0])
	kept, ok2 := find(sn, ids[1])
	if !ok1 || !ok2 {
		t.Fatalf("the takes are not in the list: %v", ids)
	}

	if err := os.Rename(gone.Dir, filepath.Join(dir, "moved-away")); err != nil {
		t.Fatal(err)
	}
	wait("the moved take leaves the list", func(sn studio.Snapshot) bool {
		_, has := find(sn, gone.ID)
		_, hasKept := find(sn, kept.ID)
		return !has && hasKept
	})
	s.Takes().Refresh()
	if !testkit.Holds(100*time.Millisecond, wake, func() bool { _, has := find(s.Snapshot(), gone.ID); return !has }) {
		t.Error("a reload brought the moved take back")
	}

	// Acting on a take whose folder went before the list caught up.
	if err := os.RemoveAll(kept.Dir); err != nil {
		t.Fatal(err)
	}
	s.Takes().ExportMP4(kept.ID, filepath.Join(dir, "out.mp4"))
	sn = wait("a true message", func(sn studio.Snapshot) bool {
		for _, n := range sn.Notices {
			if strings.Contains(n.Text, "no longer in the library") {
				return true
			}
		}
		return false
	})
	for _, n := range sn.Notices {
		if strings.Contains(n.Text, "MP4 writer") || strings.Contains(n.Text, "last frame") {
			t.Errorf("untrue notice: %s", n.Text)
		}
	}
	wait("the removed take leaves the list", func(sn studio.Snapshot) bool { _, has := find(sn, kept.ID); return !has })
}

// TestReloadModel: without a watcher (a folder on a volume that reports no
// changes), Reload checks the model folder again and picks up the file that
// completed it.
func TestReloadModel(t *testing.T) {
	dir := t.TempDir()
	lib, _ := studio.OpenLibrary(filepath.Join(dir, "lib"), nil)
	s, err := studio.New(studio.Options{Engine: gatedEngine{fakeengine.New(fakeengine.Options{})}, Library: lib})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, wait := subscribe(t, s)
	model := filepath.Join(dir, "model")
	tr := filepath.Join(model, "FL2VA", "transformer")
	os.MkdirAll(tr, 0o755)
	s.Model().Use(model)
	wait("incomplete", func(sn studio.Snapshot) bool { return !sn.Model.Loading && sn.Model.Info.Problem != "" })
	os.WriteFile(filepath.Join(tr, "complete"), nil, 0o644)
	s.Model().Reload()
	sn := wait("complete", func(sn studio.Snapshot) bool { return sn.Model.Ready })
	if sn.Model.Info.Problem != "" {
		t.Errorf("ready model keeps the problem %q", sn.Model.Info.Problem)
	}
}
