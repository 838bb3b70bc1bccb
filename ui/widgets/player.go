package widgets

import (
	"fmt"
	"image"
	"image/color"
	"math"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// Frames is what the player shows: a clip's decoded frames.
type Frames interface {
	Len() int
	Frame(i int) image.Image
}

// Clock is an audio output the player follows while it plays: when it
// reports a position, frames follow the sound; otherwise the player keeps
// time itself.
type Clock interface {
	// Start plays from a position; it must not block.
	Start(from time.Duration)
	Stop()
	// Position is the sound's current position; ok is false when there is
	// no sound playing (no device, silent clip).
	Position() (pos time.Duration, ok bool)
}

// Player shows frames on a dark stage, fitted and centred, and plays them at
// FPS. Space plays and pauses, ← and → step one frame (when it has focus;
// package ui also forwards these keys from the window).
type Player struct {
	widget.BaseWidget

	FPS  int
	Loop bool
	// OnChange runs (on the UI goroutine) after the frame or the play state
	// changed.
	OnChange func()

	frames  Frames
	live    image.Image // shown instead of frames when set
	message string      // shown when there is nothing to show
	caption string      // small title in the top-left corner

	frame   int
	playing bool
	started time.Time
	startAt int
	clock   Clock
	anim    *fyne.Animation
	focused bool

	now func() time.Time

	img  *canvas.Image
	bg   *canvas.Rectangle
	msg  *canvas.Text
	cap  *canvas.Text
	capB *canvas.Rectangle
}

// NewPlayer returns an empty player at 24 fps.
func NewPlayer() *Player {
	p := &Player{FPS: 24, Loop: true, now: time.Now}
	p.ExtendBaseWidget(p)
	return p
}

// SetFrames shows a new clip from its first frame, paused.
func (p *Player) SetFrames(f Frames) {
	p.Pause()
	p.frames, p.frame = f, 0
	p.live = nil
	p.refreshPicture()
	p.changed()
}

// SetLive shows a single picture (the running job's preview) over the
// clip; nil returns to the clip.
func (p *Player) SetLive(img image.Image) {
	if img != nil {
		p.Pause()
	}
	p.live = img
	p.refreshPicture()
}

// SetMessage sets the text shown when there is no picture.
func (p *Player) SetMessage(s string) {
	p.message = s
	if p.msg != nil {
		p.msg.Text = s
		p.msg.Refresh()
	}
}

// SetCaption sets the small title in the stage's corner.
func (p *Player) SetCaption(s string) {
	p.caption = s
	p.Refresh()
}

// SetClock sets the audio clock the player follows ("" for none).
func (p *Player) SetClock(c Clock) {
	if p.playing && p.clock != nil {
		p.clock.Stop()
	}
	p.clock = c
}

// Len is the number of frames.
func (p *Player) Len() int {
	if p.frames == nil {
		return 0
	}
	return p.frames.Len()
}

// Frame is the current frame index.
func (p *Player) Frame() int { return p.frame }

// Playing reports whether the player is playing.
func (p *Player) Playing() bool { return p.playing }

// Time is the current frame's time.
func (p *Player) Time() time.Duration { return p.timeOf(p.frame) }

// Duration is the clip's length.
func (p *Player) Duration() time.Duration { return p.timeOf(p.Len()) }

func (p *Player) timeOf(i int) time.Duration {
	if p.FPS <= 0 {
		return 0
	}
	return time.Duration(i) * time.Second / time.Duration(p.FPS)
}

// Play starts playback from the current frame (from the start when at the
// end).
func (p *Player) Play() {
	if p.playing || p.Len() < 2 || p.live != nil {
		return
	}
	if p.frame >= p.Len()-1 {
		p.frame = 0
	}
	p.playing = true
	p.started, p.startAt = p.now(), p.frame
	if p.clock != nil {
		p.clock.Start(p.timeOf(p.frame))
	}
	if fyne.CurrentApp() != nil {
		p.anim = &fyne.Animation{Duration: time.Hour, RepeatCount: fyne.AnimationRepeatForever, Tick: func(float32) { p.Tick() }}
		p.anim.Start()
	}
	p.changed()
}

// Pause stops playback on the current frame.
func (p *Player) Pause() {
	if !p.playing {
		return
	}
	p.playing = false
	if p.anim != nil {
		p.anim.Stop()
		p.anim = nil
	}
	if p.clock != nil {
		p.clock.Stop()
	}
	p.changed()
}

// Toggle plays or pauses.
func (p *Player) Toggle() {
	if p.playing {
		p.Pause()
	} else {
		p.Play()
	}
}

// Step moves by n frames (pausing first).
func (p *Player) Step(n int) {
	p.Pause()
	p.Seek(p.frame + n)
}

// Seek shows frame i (clamped); while playing, playback continues from it.
func (p *Player) Seek(i int) {
	if p.Len() == 0 {
		return
	}
	i = max(0, min(i, p.Len()-1))
	if p.playing {
		p.started, p.startAt = p.now(), i
		if p.clock != nil {
			p.clock.Stop()
			p.clock.Start(p.timeOf(i))
		}
	}
	if i == p.frame {
		return
	}
	p.frame = i
	p.refreshPicture()
	p.changed()
}

// Tick advances playback to the current time; the animation calls it for
// every displayed frame, tests call it directly.
func (p *Player) Tick() {
	if !p.playing || p.Len() == 0 {
		return
	}
	var pos time.Duration
	if p.clock != nil {
		if cp, ok := p.clock.Position(); ok {
			pos = cp
		} else {
			pos = p.timeOf(p.startAt) + p.now().Sub(p.started)
		}
	} else {
		pos = p.timeOf(p.startAt) + p.now().Sub(p.started)
	}
	i := int(math.Floor(pos.Seconds()*float64(p.FPS) + 1e-6))
	if i >= p.Len() {
		if !p.Loop {
			p.frame = p.Len() - 1
			p.refreshPicture()
			p.Pause()
			return
		}
		// Loop: restart the clock from the top.
		i %= p.Len()
		p.started, p.startAt = p.now(), 0
		if p.clock != nil {
			p.clock.Stop()
			p.clock.Start(0)
		}
		i = 0
	}
	if i != p.frame {
		p.frame = i
		p.refreshPicture()
		p.changed()
	}
}

func (p *Player) changed() {
	if p.OnChange != nil {
		p.OnChange()
	}
}

func (p *Player) picture() image.Image {
	if p.live != nil {
		return p.live
	}
	if p.Len() == 0 {
		return nil
	}
	return p.frames.Frame(p.frame)
}

func (p *Player) refreshPicture() {
	if p.img == nil {
		return
	}
	img := p.picture()
	p.img.Image = img
	p.img.Hidden = img == nil
	p.msg.Hidden = img != nil
	p.img.Refresh()
	p.msg.Refresh()
}

// TypedKey implements fyne.Focusable: Space, ← and →.
func (p *Player) TypedKey(e *fyne.KeyEvent) { p.HandleKey(e.Name) }

// HandleKey applies a transport key; it reports whether the key was used.
func (p *Player) HandleKey(k fyne.KeyName) bool {
	switch k {
	case fyne.KeySpace:
		p.Toggle()
	case fyne.KeyLeft:
		p.Step(-1)
	case fyne.KeyRight:
		p.Step(1)
	case fyne.KeyHome:
		p.Pause()
		p.Seek(0)
	case fyne.KeyEnd:
		p.Pause()
		p.Seek(p.Len() - 1)
	default:
		return false
	}
	return true
}

// TypedRune implements fyne.Focusable.
func (p *Player) TypedRune(rune) {}

// FocusGained implements fyne.Focusable.
func (p *Player) FocusGained() { p.focused = true }

// FocusLost implements fyne.Focusable.
func (p *Player) FocusLost() { p.focused = false }

// Tapped focuses the player and toggles playback.
func (p *Player) Tapped(*fyne.PointEvent) {
	if c := fyne.CurrentApp().Driver().CanvasForObject(p); c != nil {
		c.Focus(p)
	}
	p.Toggle()
}

// CreateRenderer implements fyne.Widget.
func (p *Player) CreateRenderer() fyne.WidgetRenderer {
	p.bg = canvas.NewRectangle(stageColor)
	p.img = canvas.NewImageFromImage(nil)
	p.img.FillMode = canvas.ImageFillContain
	p.img.ScaleMode = canvas.ImageScaleSmooth
	p.msg = canvas.NewText(p.message, color.NRGBA{0xd0, 0xd0, 0xd8, 0xff})
	p.msg.Alignment = fyne.TextAlignCenter
	p.cap = canvas.NewText("", color.NRGBA{0xf0, 0xf0, 0xf4, 0xff})
	p.cap.TextSize = theme.Size(theme.SizeNameCaptionText)
	p.capB = canvas.NewRectangle(color.NRGBA{0, 0, 0, 0x90})
	p.capB.CornerRadius = 4
	r := &playerRenderer{p: p}
	p.refreshPicture()
	return r
}

var stageColor = color.NRGBA{0x0b, 0x0b, 0x0e, 0xff}

type playerRenderer struct{ p *Player }

func (r *playerRenderer) Layout(s fyne.Size) {
	p := r.p
	p.bg.Resize(s)
	p.img.Move(fyne.NewPos(0, 0))
	p.img.Resize(s)
	ms := p.msg.MinSize()
	p.msg.Move(fyne.NewPos(0, (s.Height-ms.Height)/2))
	p.msg.Resize(fyne.NewSize(s.Width, ms.Height))
	cs := p.cap.MinSize()
	p.capB.Move(fyne.NewPos(8, 8))
	p.capB.Resize(fyne.NewSize(cs.Width+12, cs.Height+4))
	p.cap.Move(fyne.NewPos(14, 10))
	p.cap.Resize(cs)
}

func (r *playerRenderer) MinSize() fyne.Size { return fyne.NewSize(320, 180) }

func (r *playerRenderer) Refresh() {
	p := r.p
	p.cap.Text = p.caption
	p.cap.Hidden = p.caption == ""
	p.capB.Hidden = p.cap.Hidden
	p.msg.Text = p.message
	p.cap.Refresh()
	r.Layout(p.Size())
	p.refreshPicture()
}

func (r *playerRenderer) Objects() []fyne.CanvasObject {
	p := r.p
	return []fyne.CanvasObject{p.bg, p.img, p.msg, p.capB, p.cap}
}

func (r *playerRenderer) Destroy() {}

// FormatTime writes a position as the transport shows it: "00:01.25".
func FormatTime(d time.Duration) string {
	cs := int(math.Round(d.Seconds() * 100))
	return fmt.Sprintf("%02d:%02d.%02d", cs/6000, cs/100%60, cs%100)
}
