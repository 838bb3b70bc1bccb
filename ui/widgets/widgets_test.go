package widgets

import (
	"image"
	"image/color"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
)

type solid struct{ n int }

func (s solid) Len() int { return s.n }
func (s solid) Frame(i int) image.Image {
	return image.NewUniform(color.RGBA{uint8(i * 20), 0, 0, 255})
}

type fakeTime struct{ t time.Time }

func (f *fakeTime) now() time.Time { return f.t }

type fakeClock struct {
	pos     time.Duration
	ok      bool
	started []time.Duration
	stops   int
}

func (c *fakeClock) Start(from time.Duration)        { c.started = append(c.started, from); c.pos = from }
func (c *fakeClock) Stop()                           { c.stops++ }
func (c *fakeClock) Position() (time.Duration, bool) { return c.pos, c.ok }

func TestPlayerTimingLoopAndKeys(t *testing.T) {
	test.NewTempApp(t)
	p := NewPlayer()
	w := test.NewTempWindow(t, p)
	w.Resize(fyne.NewSize(400, 300))
	ft := &fakeTime{t: time.Unix(1000, 0)}
	p.now = ft.now
	changes := 0
	p.OnChange = func() { changes++ }
	p.SetFrames(solid{10})
	if p.Len() != 10 || p.Frame() != 0 || p.Playing() {
		t.Fatalf("fresh player: len %d frame %d playing %v", p.Len(), p.Frame(), p.Playing())
	}
	p.HandleKey(fyne.KeySpace)
	if !p.Playing() {
		t.Fatal("Space did not play")
	}
	ft.t = ft.t.Add(250 * time.Millisecond) // 6 frames at 24 fps
	p.Tick()
	if p.Frame() != 6 {
		t.Errorf("after 250 ms: frame %d, want 6", p.Frame())
	}
	ft.t = ft.t.Add(200 * time.Millisecond) // past the end: loops
	p.Tick()
	if p.Frame() != 0 || !p.Playing() {
		t.Errorf("loop: frame %d playing %v", p.Frame(), p.Playing())
	}
	p.HandleKey(fyne.KeyRight)
	p.HandleKey(fyne.KeyRight)
	if p.Playing() || p.Frame() != 2 {
		t.Errorf("→→: frame %d playing %v", p.Frame(), p.Playing())
	}
	p.HandleKey(fyne.KeyLeft)
	if p.Frame() != 1 {
		t.Errorf("←: frame %d", p.Frame())
	}
	// Without loop, playback stops on the last frame.
	p.Loop = false
	p.Play()
	ft.t = ft.t.Add(time.Second)
	p.Tick()
	if p.Playing() || p.Frame() != 9 {
		t.Errorf("end: frame %d playing %v", p.Frame(), p.Playing())
	}
	if FormatTime(p.Time()) != "00:00.38" || FormatTime(p.Duration()) != "00:00.42" {
		t.Errorf("times %s / %s", FormatTime(p.Time()), FormatTime(p.Duration()))
	}
	if changes == 0 {
		t.Error("OnChange never ran")
	}
	// A live preview hides the clip and pauses.
	p.SetLive(image.NewUniform(color.White))
	p.Play()
	if p.Playing() {
		t.Error("played over a live preview")
	}
}

func TestPlayerFollowsAudioClock(t *testing.T) {
	test.NewTempApp(t)
	p := NewPlayer()
	ft := &fakeTime{t: time.Unix(0, 0)}
	p.now = ft.now
	c := &fakeClock{ok: true}
	p.SetClock(c)
	p.SetFrames(solid{48})
	p.Seek(12)
	p.Play()
	if len(c.started) != 1 || c.started[0] != 500*time.Millisecond {
		t.Fatalf("clock started at %v", c.started)
	}
	c.pos = time.Second // the sound is ahead of the wall clock
	p.Tick()
	if p.Frame() != 24 {
		t.Errorf("frame %d, want 24 (follows the sound)", p.Frame())
	}
	c.ok = false // the device stopped: fall back to the wall clock
	ft.t = ft.t.Add(100 * time.Millisecond)
	p.Tick()
	if p.Frame() != 14 {
		t.Errorf("frame %d, want 14 (wall clock from frame 12)", p.Frame())
	}
	p.Pause()
	if c.stops == 0 {
		t.Error("pause did not stop the sound")
	}
}

func TestStripSeeks(t *testing.T) {
	test.NewTempApp(t)
	s := NewStrip()
	w := test.NewTempWindow(t, s)
	w.SetPadded(false)
	w.Resize(fyne.NewSize(480, 44))
	s.Resize(fyne.NewSize(480, 44))
	s.SetClip(nil, 48)
	var got []int
	s.OnSeek = func(f int) { got = append(got, f) }
	test.TapAt(s, fyne.NewPos(240, 20))
	// The desktop driver reports the pointer's current position while
	// dragging (fyne's test.Drag reports the start), so drive it directly.
	s.Dragged(&fyne.DragEvent{PointEvent: fyne.PointEvent{Position: fyne.NewPos(360, 20)}, Dragged: fyne.NewDelta(120, 0)})
	s.DragEnd()
	if len(got) != 2 || got[0] != 24 || got[1] != 36 {
		t.Errorf("seeks %v, want [24 36]", got)
	}
	if s.FrameAt(-5) != 0 || s.FrameAt(1e4) != 47 {
		t.Error("FrameAt does not clamp")
	}
}

func TestWaveformDraw(t *testing.T) {
	test.NewTempApp(t)
	w := NewWaveform(40)
	w.SetPeaks([]float32{0, 0.5, 1, 0.5})
	w.SetProgress(0.5)
	img := w.Draw(40, 20).(*image.NRGBA)
	primary := toNRGBA(theme.Color(theme.ColorNamePrimary))
	if img.NRGBAAt(15, 10) != primary {
		t.Errorf("played bar colour %v, want %v", img.NRGBAAt(15, 10), primary)
	}
	if img.NRGBAAt(30, 10) == primary || img.NRGBAAt(30, 10).A == 0 {
		t.Errorf("unplayed bar colour %v", img.NRGBAAt(30, 10))
	}
	if img.NRGBAAt(5, 2).A != 0 {
		t.Error("silence drawn as sound")
	}
	if img.NRGBAAt(25, 1).A == 0 {
		t.Error("full peak not drawn to the top")
	}
}

func TestSlotRendering(t *testing.T) {
	test.NewTempApp(t)
	s := NewSlot("First frame", "Drop a picture")
	tapped, cleared := 0, 0
	s.OnTap = func() { tapped++ }
	s.OnClear = func() { cleared++ }
	w := test.NewTempWindow(t, s)
	w.Resize(fyne.NewSize(180, 120))
	test.AssertObjectRendersToMarkup(t, "slot_empty.xml", s)
	test.Tap(s)
	s.Set("fox.png", image.NewUniform(color.RGBA{200, 80, 20, 255}), "1344×768", false, false)
	test.AssertObjectRendersToMarkup(t, "slot_filled.xml", s)
	s.Set("fox.png", nil, "can't be read", true, false)
	test.AssertObjectRendersToMarkup(t, "slot_problem.xml", s)
	if tapped != 1 {
		t.Errorf("tapped %d", tapped)
	}
}

func TestBadgeAndBar(t *testing.T) {
	test.NewTempApp(t)
	b := NewBadge("Picture 1", PictureColor)
	bar := NewBar()
	bar.Set(0.5, true)
	w := test.NewTempWindow(t, b)
	w.Resize(fyne.NewSize(100, 30))
	test.AssertObjectRendersToImage(t, "badge.png", b)
	w.SetContent(bar)
	w.Resize(fyne.NewSize(100, 12))
	test.AssertObjectRendersToImage(t, "bar.png", bar)
	if bar.Value() != 0.5 {
		t.Errorf("bar value %v", bar.Value())
	}
}

func TestHandleReportsDistance(t *testing.T) {
	test.NewTempApp(t)
	h := NewHandle()
	var end float32
	h.OnDragEnd = func(dy float32) { end = dy }
	h.Dragged(&fyne.DragEvent{Dragged: fyne.NewDelta(0, 30)})
	h.Dragged(&fyne.DragEvent{Dragged: fyne.NewDelta(0, 25)})
	h.DragEnd()
	if end != 55 {
		t.Errorf("drag distance %v", end)
	}
}
