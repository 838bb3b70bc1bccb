package ui

import (
	"image/color"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"h3studio/engine/media"
	"h3studio/engine/testkit"
	"h3studio/ui/internal/uitest"
	"h3studio/ui/studio"
	"h3studio/ui/studio/fakeengine"
)

type harness struct {
	t    *testing.T
	s    *studio.Studio
	w    *Window
	work *uitest.Queue // studio tasks (nil when the studio runs goroutines)
	ui   *uitest.Queue // functions crossing into the UI
	eng  *fakeengine.Engine
	lib  string
	dir  string
	quit bool
	wake testkit.Wake
	// revealed records the paths the window asked Finder to show.
	revealed []string
}

func newHarness(t *testing.T, o fakeengine.Options, async bool) *harness {
	t.Helper()
	a := test.NewTempApp(t)
	a.Settings().SetTheme(NewTheme())
	h := &harness{t: t, dir: t.TempDir(), ui: &uitest.Queue{}, wake: testkit.NewWake()}
	h.lib = filepath.Join(h.dir, "Library")
	lib, err := studio.OpenLibrary(h.lib, nil)
	if err != nil {
		t.Fatal(err)
	}
	h.eng = fakeengine.New(o)
	opts := studio.Options{Engine: h.eng, Library: lib, Device: "test device", AppVersion: "test", Sample: studio.SampleClip, Opener: media.Open}
	if !async {
		h.work = &uitest.Queue{}
		opts.Go = h.work.Go
	}
	h.s, err = studio.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.s.Close)
	h.s.Subscribe(h.wake.Signal)
	win := test.NewTempWindow(t, nil)
	win.Resize(fyne.NewSize(1400, 860))
	reveal := func(p string) error { h.revealed = append(h.revealed, p); return nil }
	h.w = New(win, h.s, Options{Do: h.ui.Go, Immediate: true, Version: "test", Quit: func() { h.quit = true }, Reveal: reveal})
	model := filepath.Join(h.dir, "model")
	os.Mkdir(model, 0o755)
	h.s.Model().Use(model)
	h.settle(func(sn studio.Snapshot) bool { return sn.Model.Ready && sn.LibraryLoaded && sn.Viewer.Clip != nil })
	return h
}

// settle runs background work and UI updates until cond holds; it waits on
// the studio's change notifications (never a fixed sleep).
func (h *harness) settle(cond func(studio.Snapshot) bool) studio.Snapshot {
	h.t.Helper()
	var sn studio.Snapshot
	if !testkit.Until(h.wake, func() bool {
		for { // until cond holds or a round finds no work left
			n := 0
			if h.work != nil {
				n += h.work.Drain()
			}
			n += h.ui.Drain()
			h.w.Sync()
			if sn = h.w.Snapshot(); cond(sn) {
				return true
			}
			if n == 0 {
				return false
			}
		}
	}) {
		sn := h.s.Snapshot()
		h.t.Fatalf("state never reached: model %+v, jobs %+v, notices %+v", sn.Model, sn.Jobs, sn.Notices)
	}
	return sn
}

func (h *harness) file(name string, b []byte) string {
	h.t.Helper()
	return uitest.WriteFile(h.t, h.dir, name, b)
}

// pngBytes is the window tests' 80×60 picture of one colour.
func pngBytes(c color.RGBA) []byte { return uitest.PNG(80, 60, c) }

func (h *harness) wav(name string, secs float64) string {
	h.t.Helper()
	return uitest.WAV(h.t, h.dir, name, secs, 0.3)
}

func TestFirstStartShowsSample(t *testing.T) {
	h := newHarness(t, fakeengine.Options{}, false)
	sn := h.w.Snapshot()
	if !sn.Viewer.Sample || h.w.Player().Len() != 48 {
		t.Fatalf("viewer %+v, player %d frames", sn.Viewer, h.w.Player().Len())
	}
	if h.w.Player().Frame() != 24 || h.w.Player().Playing() {
		t.Errorf("sample not shown as a still: frame %d playing %v", h.w.Player().Frame(), h.w.Player().Playing())
	}
	if got := h.w.viewer.frameL.Text; got != "frame 25 / 48" {
		t.Errorf("frame label %q", got)
	}
	if !h.w.compose.generate.Disabled() || !strings.Contains(h.w.compose.genNote.Text, "prompt is empty") {
		t.Errorf("generate enabled with an empty prompt (%q)", h.w.compose.genNote.Text)
	}
	if !strings.Contains(h.w.status.model.Text, fakeengine.Name) || h.w.status.state.Text != "ready · "+fakeengine.Name {
		t.Errorf("status %q / %q", h.w.status.model.Text, h.w.status.state.Text)
	}
	// Transport keys reach the player when no field has the focus.
	h.w.typedKey(&fyne.KeyEvent{Name: fyne.KeyRight})
	if h.w.Player().Frame() != 25 {
		t.Errorf("→ went to frame %d", h.w.Player().Frame())
	}
	h.w.typedKey(&fyne.KeyEvent{Name: fyne.KeySpace})
	if !h.w.Player().Playing() {
		t.Error("Space did not play")
	}
	h.w.typedKey(&fyne.KeyEvent{Name: fyne.KeySpace})
	// With the prompt focused, Space types a space.
	h.w.Fyne().Canvas().Focus(h.w.compose.prompt)
	h.w.typedKey(&fyne.KeyEvent{Name: fyne.KeyLeft})
	if h.w.Player().Frame() != 25 {
		t.Error("a key meant for the prompt moved the player")
	}
}

func TestDropRealFiles(t *testing.T) {
	h := newHarness(t, fakeengine.Options{}, false)
	first := h.file("first.png", pngBytes(color.RGBA{220, 90, 30, 255}))
	pic := h.file("face.png", pngBytes(color.RGBA{30, 90, 220, 255}))
	voice := h.wav("voice.wav", 3)
	folder := filepath.Join(h.dir, "shots")
	os.Mkdir(folder, 0o755)
	notes := h.file("notes.txt", []byte("not media"))
	broken := h.file("broken.png", []byte("\x89PNG\r\n\x1a\ntruncated"))
	uris := func(ps ...string) []fyne.URI {
		var u []fyne.URI
		for _, p := range ps {
			u = append(u, storage.NewFileURI(p))
		}
		return u
	}

	// A picture on the First slot fills it.
	h.w.HandleDrop(h.w.DropPoint(studio.FirstSlot), uris(first))
	sn := h.settle(func(sn studio.Snapshot) bool { return sn.Draft.First.State == studio.MediaReady })
	if sn.Draft.First.Path != first || sn.Task != "fl2va" || h.w.compose.first.Empty() {
		t.Fatalf("first slot %+v", sn.Draft.First)
	}
	// Files dropped elsewhere become references, in order, with labels;
	// the rule against mixing shows inline on the slot and the list.
	h.w.HandleDrop(fyne.NewPos(700, 300), uris(pic, voice))
	sn = h.settle(func(sn studio.Snapshot) bool {
		return len(sn.Draft.References) == 2 && sn.Draft.References[1].Media.State == studio.MediaReady
	})
	if strings.Join(sn.Labels, ",") != "Picture 1,Audio 1" || sn.Draft.References[0].Media.Path != pic {
		t.Errorf("labels %v", sn.Labels)
	}
	if rows := h.w.compose.refRows; len(rows) != 2 || rows[sn.Draft.References[0].ID].badge.Text != "Picture 1" {
		t.Errorf("reference rows %+v", rows)
	}
	if !labelsContain(h.w.compose.frameMsgs, "can't be combined") || !labelsContain(h.w.compose.refMsgs, "cannot be combined with a first or last frame") {
		t.Error("the mixing rule is not shown inline")
	}
	if !h.w.compose.generate.Disabled() {
		t.Error("Generate enabled despite the rule")
	}
	h.s.Compose().ClearFrame(studio.FirstSlot)
	// Bad input: a folder, an unsupported file and a broken picture.
	h.w.HandleDrop(fyne.NewPos(700, 300), uris(folder, notes, broken))
	sn = h.settle(func(sn studio.Snapshot) bool {
		return len(sn.Draft.References) == 4 && sn.Draft.References[3].Media.State == studio.MediaBroken
	})
	var texts []string
	for _, o := range h.w.notices.content.Objects {
		texts = append(texts, labelTexts(o, false)...)
	}
	all := strings.Join(texts, "\n") + "\n" + strings.Join(noticeTexts(sn), "\n")
	for _, want := range []string{"shots is a folder", "notes.txt is not a picture, video or sound file"} {
		if !strings.Contains(all, want) {
			t.Errorf("no notice %q in:\n%s", want, all)
		}
	}
	if !labelsContain(h.w.compose.refList, "broken.png can't be read") {
		t.Error("the broken picture is not marked in the list")
	}
	// Too many references: the count rule shows on the list.
	var many []string
	for i := 0; i < 10; i++ {
		many = append(many, pic)
	}
	h.s.Compose().AddReferences(many)
	h.settle(func(sn studio.Snapshot) bool { return len(sn.Draft.References) == 14 })
	if !labelsContain(h.w.compose.refMsgs, "At most 9 picture references") || !labelsContain(h.w.compose.refMsgs, "At most 12 reference files in all, got 14") {
		t.Error("too many references not reported")
	}
}

func noticeTexts(sn studio.Snapshot) []string {
	var t []string
	for _, n := range sn.Notices {
		t = append(t, n.Text)
	}
	return t
}

// labelTexts collects the text of the labels inside o, looking through
// containers and, with intoWidgets, into the objects widgets render.
func labelTexts(o fyne.CanvasObject, intoWidgets bool) []string {
	var out []string
	switch x := o.(type) {
	case *widget.Label:
		out = append(out, x.Text)
	case *fyne.Container:
		for _, c := range x.Objects {
			out = append(out, labelTexts(c, intoWidgets)...)
		}
	case fyne.Widget:
		if intoWidgets {
			for _, c := range test.WidgetRenderer(x).Objects() {
				out = append(out, labelTexts(c, intoWidgets)...)
			}
		}
	}
	return out
}

func labelsContain(c *fyne.Container, s string) bool {
	return strings.Contains(strings.Join(labelTexts(c, false), "\n"), s)
}

func TestGenerateThroughTheWindow(t *testing.T) {
	h := newHarness(t, fakeengine.Options{}, false)
	h.s.Compose().SetSettings(studio.DemoSettings())
	test.Type(h.w.compose.prompt, "A red fox walks through fresh snow.")
	h.settle(func(sn studio.Snapshot) bool { return sn.CanGenerate && sn.Plan != nil })
	if h.w.compose.generate.Disabled() || !strings.Contains(h.w.compose.genNote.Text, "256×256") {
		t.Fatalf("generate %v, note %q", h.w.compose.generate.Disabled(), h.w.compose.genNote.Text)
	}
	test.Tap(h.w.compose.generate)
	sn := h.settle(func(sn studio.Snapshot) bool {
		return len(sn.Takes) == 1 && sn.Viewer.Clip != nil && sn.Viewer.TakeID != ""
	})
	if h.w.Player().Len() != 22 {
		t.Errorf("player shows %d frames", h.w.Player().Len())
	}
	if h.w.library.count.Text != "1 take" || h.w.library.dTitle.Text != "A red fox walks through fresh snow" {
		t.Errorf("library %q / %q", h.w.library.count.Text, h.w.library.dTitle.Text)
	}
	if !strings.Contains(h.w.progress.last.Text, "saved to the library") {
		t.Errorf("progress %q", h.w.progress.last.Text)
	}
	// Chain → from the library puts the last frame in the First slot.
	h.w.library.sel = sn.Takes[0].ID
	h.s.Takes().Chain(sn.Takes[0].ID)
	sn = h.settle(func(sn studio.Snapshot) bool { return sn.Draft.First.State == studio.MediaReady })
	if !strings.HasSuffix(sn.Draft.First.Path, studio.LastFile) || h.w.compose.first.Empty() {
		t.Errorf("chained first frame %+v", sn.Draft.First)
	}
	var undo bool
	for _, n := range sn.Notices {
		undo = undo || n.Action == "Undo"
	}
	if !undo {
		t.Error("no Undo offered after chaining")
	}
}

func TestCloseWhileGeneratingAsksAndCancels(t *testing.T) {
	hold := make(chan struct{})
	h := newHarness(t, fakeengine.Options{Hold: hold}, true)
	h.s.Compose().SetSettings(studio.DemoSettings())
	h.s.Compose().SetPrompt("A fox.")
	h.settle(func(sn studio.Snapshot) bool { return sn.CanGenerate })
	if _, err := h.s.Queue().Generate(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 7; i++ {
		hold <- struct{}{}
	}
	h.settle(func(sn studio.Snapshot) bool { return sn.Running != nil })
	h.w.requestClose()
	if h.quit {
		t.Fatal("quit without asking")
	}
	h.tapInDialog("Cancel and Quit")
	h.settle(func(sn studio.Snapshot) bool { return h.quit })
	ents, _ := os.ReadDir(h.lib)
	if len(ents) != 0 {
		t.Errorf("the library holds %d entries after a cancelled take", len(ents))
	}
}

// topDialog is the window's topmost overlay (a dialog); the test stops
// when there is none.
func (h *harness) topDialog(what string) fyne.CanvasObject {
	h.t.Helper()
	top := h.w.Fyne().Canvas().Overlays().Top()
	if top == nil {
		h.t.Fatalf("no dialog: %s", what)
	}
	return top
}

// dialogText is every text of the topmost dialog, one per line.
func (h *harness) dialogText(what string) string {
	h.t.Helper()
	return strings.Join(labelTexts(h.topDialog(what), true), "\n")
}

// tapInDialog taps the topmost dialog's button labelled text.
func (h *harness) tapInDialog(text string) {
	h.t.Helper()
	b := findButton(h.topDialog("asking for "+text), text)
	if b == nil {
		h.t.Fatalf("the dialog has no %s button", text)
	}
	test.Tap(b)
}

// findObject finds the first object of type T in o that match accepts,
// looking through containers and into the objects widgets render.
func findObject[T fyne.CanvasObject](o fyne.CanvasObject, match func(T) bool) (T, bool) {
	if x, ok := o.(T); ok && match(x) {
		return x, true
	}
	var kids []fyne.CanvasObject
	switch x := o.(type) {
	case *fyne.Container:
		kids = x.Objects
	case fyne.Widget:
		kids = test.WidgetRenderer(x).Objects()
	}
	for _, c := range kids {
		if found, ok := findObject(c, match); ok {
			return found, true
		}
	}
	var none T
	return none, false
}

// findButton finds the button labelled text in o, or nil.
func findButton(o fyne.CanvasObject, text string) *widget.Button {
	b, _ := findObject(o, func(b *widget.Button) bool { return b.Text == text })
	return b
}

func TestParseLength(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
		ok   bool
	}{
		{"5", 124, true}, {"5 s", 124, true}, {"5s", 124, true}, {"5,5", 141, true}, {"4.45 seconds", 107, true},
		{"120 frames", 124, true}, {"22f", 22, true}, {"5.17 s (124 frames)", 124, true}, {"100", 362, true},
		{"", 0, false}, {"soon", 0, false}, {"-3", 0, false},
	} {
		got, ok := parseLength(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("parseLength(%q) = %d, %v; want %d, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

func TestTypedLengthSnaps(t *testing.T) {
	h := newHarness(t, fakeengine.Options{}, false)
	h.w.compose.lengthSel.SetText("5")
	h.w.compose.lengthSel.OnSubmitted("5")
	sn := h.settle(func(sn studio.Snapshot) bool { return sn.Draft.Settings.Frames == 124 })
	if got := h.w.compose.lengthSel.Text; got != "5.17 s (124 frames)" {
		t.Errorf("length shows %q", got)
	}
	_ = sn
}

// TestWindowNoticesKeepLayout: notices appearing and going move none of the
// window's controls (they float over the viewer's top), and they are shown.
func TestWindowNoticesKeepLayout(t *testing.T) {
	h := newHarness(t, fakeengine.Options{}, false)
	// Dismiss the start's notices, so the first layout has none.
	for _, n := range h.s.Snapshot().Notices {
		h.s.Dismiss(n.ID)
	}
	h.settle(func(sn studio.Snapshot) bool { return len(sn.Notices) == 0 })
	controls := map[string]fyne.CanvasObject{
		"prompt": h.w.compose.prompt, "generate": h.w.compose.generate, "first slot": h.w.compose.first,
		"player": h.w.viewer.player, "progress": h.w.progress.content, "timeline": h.w.timeline.content,
		"library list": h.w.library.list, "status bar": h.w.status.content,
	}
	type place struct{ pos, size fyne.Position }
	layout := func() map[string]place {
		d := fyne.CurrentApp().Driver()
		m := map[string]place{}
		for name, o := range controls {
			m[name] = place{d.AbsolutePositionForObject(o), fyne.NewPos(o.Size().Width, o.Size().Height)}
		}
		return m
	}
	same := func(when string, want, got map[string]place) {
		t.Helper()
		for name, w := range want {
			if got[name] != w {
				t.Errorf("%s: %s moved from %v to %v", when, name, w, got[name])
			}
		}
	}
	h.w.win.Content().Refresh()
	before := layout()
	long := strings.Repeat("A notice long enough to wrap over several lines of the notice area. ", 6)
	h.s.Notify(studio.Warn, long)
	h.s.Notify(studio.Fail, "A second notice.")
	sn := h.settle(func(sn studio.Snapshot) bool { return len(sn.Notices) == 2 })
	h.w.win.Content().Refresh()
	same("with two notices", before, layout())
	// The notices are on screen, over the viewer, with their full text.
	nc := h.w.notices.content
	if len(nc.Objects) != 2 || nc.Size().Height < 60 || !strings.Contains(strings.Join(labelTexts(nc, false), "\n"), "A second notice.") {
		t.Errorf("notices not shown: %d rows, %v tall, text %q", len(nc.Objects), nc.Size(), labelTexts(nc, false))
	}
	vp := fyne.CurrentApp().Driver().AbsolutePositionForObject(h.w.viewer.content)
	if np := fyne.CurrentApp().Driver().AbsolutePositionForObject(nc); np != vp {
		t.Errorf("notices at %v, the viewer at %v", np, vp)
	}
	for _, n := range sn.Notices {
		h.s.Dismiss(n.ID)
	}
	h.settle(func(sn studio.Snapshot) bool { return len(sn.Notices) == 0 })
	h.w.win.Content().Refresh()
	same("after the notices went", before, layout())
}
