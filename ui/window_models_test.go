package ui

import (
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"h3studio/engine/hfhub"
	"h3studio/engine/hfhub/fakehub"
	"h3studio/engine/media"
	"h3studio/engine/snapshot/snapshottest"
	"h3studio/ui/studio"
	"h3studio/ui/studio/fakeengine"
)

// The Models window of a fresh user: it offers the downloads with their
// sizes; Download fetches in the background and the studio switches to
// the verified snapshot.
func TestModelsWindowDownloads(t *testing.T) {
	a := test.NewTempApp(t)
	a.Settings().SetTheme(NewTheme())
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
	hub := fakehub.New(hfhub.Repo, "89abcdef0123456789abcdef0123456789abcdef", files)
	t.Cleanup(hub.Close)
	home := t.TempDir()
	env := hfhub.EnvFrom(func(k string) string { return map[string]string{"HF_HOME": home, "HF_ENDPOINT": hub.Endpoint()}[k] })
	lib, err := studio.OpenLibrary(filepath.Join(t.TempDir(), "Library"), nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := studio.New(studio.Options{Engine: fakeengine.New(fakeengine.Options{}), Library: lib, Opener: media.Open})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	used := make(chan string, 1)
	m := studio.NewModels(studio.ModelsOptions{Env: env, UseModel: func(dir string) { used <- dir }, KeepAwake: func() func() { return func() {} }})
	ui := &queue{}
	win := test.NewTempWindow(t, nil)
	win.Resize(fyne.NewSize(1400, 860))
	w := New(win, s, Options{Do: ui.Go, Immediate: true, Version: "test", Models: m})
	t.Cleanup(w.Stop)
	w.ShowModels()
	mw := w.models
	settle := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			ui.drain()
			mw.apply()
			if cond() {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("never: %s (status %q)", what, mw.status.Text)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	settle("the choices", func() bool { return len(mw.choices.Options) > 0 && !mw.start.Disabled() })
	if !strings.Contains(mw.choices.Selected, "T2VA") || !strings.Contains(mw.free.Text, "free") {
		t.Fatalf("choice %q, free %q", mw.choices.Selected, mw.free.Text)
	}
	if !strings.Contains(strings.Join(allText(mw.installed), " "), "No MiniMax-H3 snapshot found") {
		t.Fatalf("installed list: %v", allText(mw.installed))
	}
	test.Tap(mw.start)
	var root string
	settle("the download", func() bool {
		select {
		case root = <-used:
		default:
		}
		return root != "" && strings.HasPrefix(mw.status.Text, "Done")
	})
	settle("the listing", func() bool { return strings.Contains(strings.Join(allText(mw.installed), " "), root) })
	if findButton(mw.installed, "Use") == nil || findButton(mw.installed, "Verify") == nil {
		t.Fatal("the snapshot row has no Use/Verify buttons")
	}
	// docs/models.md's picture: H3_DOC_SHOTS=DIR go test -run ModelsWindow ./ui
	if dir := os.Getenv("H3_DOC_SHOTS"); dir != "" {
		mw.win.Resize(fyne.NewSize(759, 619))
		mw.win.Resize(fyne.NewSize(760, 620))
		f, err := os.Create(filepath.Join(dir, "ui-models.png"))
		if err != nil {
			t.Fatal(err)
		}
		png.Encode(f, mw.win.Canvas().Capture())
		f.Close()
	}
}
