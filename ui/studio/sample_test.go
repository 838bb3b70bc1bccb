package studio_test

import (
	"bytes"
	"image"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"testing"
	"time"

	"h3studio/engine/media"
	"h3studio/engine/testkit"
	"h3studio/ui/internal/uitest"
	"h3studio/ui/studio"
	"h3studio/ui/studio/fakeengine"
)

func TestSampleClip(t *testing.T) {
	c := studio.SampleClip()
	if c.Len() != 48 || c.Audio.Frames() != 2*32000 || len(c.Peaks) == 0 {
		t.Fatalf("sample: %d frames, %d sound frames", c.Len(), c.Audio.Frames())
	}
	img := c.Frame(10)
	colours := map[uint32]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			colours[r>>8<<16|g>>8<<8|bl>>8] = true
		}
	}
	if len(colours) < 1000 {
		t.Errorf("sample frame has only %d colours", len(colours))
	}
	if p := os.Getenv("H3_SAMPLE_PNG"); p != "" { // look at it: H3_SAMPLE_PNG=sample.png go test -run Sample
		f, _ := os.Create(p)
		png.Encode(f, img)
		f.Close()
	}
}

// firstStart makes a studio on the fake engine's demo folder with an empty
// library and the drawn placeholder, as app/gui.go does on a first start,
// and asks for the sample take.
func firstStart(t *testing.T, o fakeengine.Options, async bool, takes int) (*studio.Studio, *uitest.Queue, string, testkit.Wake) {
	t.Helper()
	dir := t.TempDir()
	libDir := filepath.Join(dir, "Library")
	lib, err := studio.OpenLibrary(libDir, nil)
	if err != nil {
		t.Fatal(err)
	}
	eng := fakeengine.New(o)
	eng.DemoDir = filepath.Join(dir, "demo")
	x := &uitest.Queue{}
	opts := studio.Options{Engine: eng, Library: lib, AppVersion: "test", Go: x.Go, Sample: func() *studio.Clip { return tinyClip(t, 4) }}
	if async {
		opts.Go = nil
	}
	// An earlier take in the library, when asked for.
	for i := 0; i < takes; i++ {
		s, err := studio.New(studio.Options{Engine: eng, Library: lib, AppVersion: "test", Go: x.Go})
		if err != nil {
			t.Fatal(err)
		}
		s.Model().UseDemo()
		s.Compose().SetPrompt("An earlier take.")
		s.Compose().SetSettings(studio.DemoSettings())
		waitState(t, "the awaited state", s, x, nil, func(sn studio.Snapshot) bool { return sn.CanGenerate })
		if _, err := s.Queue().Generate(); err != nil {
			t.Fatal(err)
		}
		waitState(t, "the awaited state", s, x, nil, func(sn studio.Snapshot) bool { return len(sn.Takes) == 1 })
		s.Close()
	}
	s, err := studio.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	wake := testkit.NewWake()
	s.Subscribe(wake.Signal)
	s.Model().UseDemo()
	s.Queue().RenderSampleTake()
	return s, x, libDir, wake
}

func tinyClip(t *testing.T, n int) *studio.Clip {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 8, 8))
	var jpegs [][]byte
	for i := 0; i < n; i++ {
		var b bytes.Buffer
		if err := jpeg.Encode(&b, img, nil); err != nil {
			t.Fatal(err)
		}
		jpegs = append(jpegs, b.Bytes())
	}
	return studio.NewClip(8, 8, jpegs, media.Audio{})
}

// TestSampleTakeOnFirstStart: the placeholder shows at once; the sample
// take is rendered through the job queue, lands in the library with a
// take.json that says what made it, and replaces the placeholder in the
// viewer; it is rendered once.
func TestSampleTakeOnFirstStart(t *testing.T) {
	s, x, libDir, _ := firstStart(t, fakeengine.Options{}, false, 0)
	sn := waitState(t, "the awaited state", s, x, nil, func(sn studio.Snapshot) bool { return len(sn.Takes) == 1 })
	if len(sn.Jobs) != 1 || sn.Jobs[0].Title != studio.SampleTakeTitle || sn.Jobs[0].State != studio.JobDone {
		t.Fatalf("jobs %+v", sn.Jobs)
	}
	tk := sn.Takes[0]
	m := tk.Meta
	if !m.Sample || m.Title != studio.SampleTakeTitle || m.Frames != 22 || m.Width != 256 || m.Seed != 42 || m.Settings.Steps != 4 ||
		m.Model.Engine != fakeengine.Name || len(m.Notes) == 0 || m.Notes[len(m.Notes)-1] != studio.SampleTakeNote {
		t.Errorf("take.json %+v", m)
	}
	if _, err := os.Stat(filepath.Join(libDir, tk.ID, studio.TakeMetaFile)); err != nil {
		t.Error(err)
	}
	if sn.Viewer.TakeID != tk.ID || sn.Viewer.Sample || sn.Viewer.Clip == nil || sn.Viewer.Clip.Len() != 22 {
		t.Errorf("viewer %+v", sn.Viewer)
	}
	if sn.Draft.Prompt != "" {
		t.Errorf("the sample changed the user's draft: %q", sn.Draft.Prompt)
	}
	// Once only, and never over an existing library.
	s.Queue().RenderSampleTake()
	sn = waitState(t, "the awaited state", s, x, nil, func(studio.Snapshot) bool { return true })
	if len(sn.Jobs) != 1 {
		t.Errorf("a second sample: %+v", sn.Jobs)
	}
}

// TestNoSampleOverALibrary: with takes in the library nothing is rendered
// and the newest take is shown.
func TestNoSampleOverALibrary(t *testing.T) {
	s, x, _, _ := firstStart(t, fakeengine.Options{}, false, 1)
	sn := waitState(t, "the awaited state", s, x, nil, func(sn studio.Snapshot) bool { return sn.Model.Ready && sn.LibraryLoaded && sn.Viewer.Clip != nil })
	if len(sn.Jobs) != 0 || len(sn.Takes) != 1 || sn.Viewer.TakeID != sn.Takes[0].ID {
		t.Errorf("jobs %+v, takes %d, viewer %+v", sn.Jobs, len(sn.Takes), sn.Viewer)
	}
}

// TestSampleCancelledOnClose: the placeholder stays while the sample
// renders (no live preview takes over), the sample does not count as the
// user's work (Generating), and Close cancels it leaving nothing.
func TestSampleCancelledOnClose(t *testing.T) {
	hold := make(chan struct{})
	s, x, libDir, wake := firstStart(t, fakeengine.Options{Hold: hold}, true, 0)
	sn := waitState(t, "the sample starting", s, x, wake, func(sn studio.Snapshot) bool { return sn.Running != nil })
	if !sn.Viewer.Sample || sn.Viewer.Follow {
		t.Errorf("viewer while the sample renders: %+v", sn.Viewer)
	}
	deadline := time.After(20 * time.Second)
	hold <- struct{}{}
	if !s.Queue().Busy() || s.Queue().Generating() {
		t.Errorf("Busy %v, Generating %v while only the sample renders", s.Queue().Busy(), s.Queue().Generating())
	}
	s.Close()
	for s.Queue().Busy() {
		select {
		case hold <- struct{}{}:
		case <-wake:
		case <-deadline:
			t.Fatal("the sample did not stop on Close")
		}
	}
	ents, _ := os.ReadDir(libDir)
	for _, e := range ents {
		t.Errorf("left in the library: %s", e.Name())
	}
}
