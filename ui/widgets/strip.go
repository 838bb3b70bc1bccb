package widgets

import (
	"image"
	"image/color"
	"math"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// Strip is the scrub bar: a row of frame thumbnails with a playhead. Tap or
// drag to scrub; OnSeek receives the frame under the pointer.
type Strip struct {
	widget.BaseWidget
	OnSeek func(frame int)

	thumbs []image.Image
	frames int
	pos    int

	imgs []*canvas.Image
	bg   *canvas.Rectangle
	dim  *canvas.Rectangle
	head *canvas.Rectangle
	knob *canvas.Circle
}

// NewStrip returns an empty scrub bar.
func NewStrip() *Strip {
	s := &Strip{}
	s.ExtendBaseWidget(s)
	return s
}

// SetClip sets the thumbnails and the clip's frame count.
func (s *Strip) SetClip(thumbs []image.Image, frames int) {
	s.thumbs, s.frames, s.pos = thumbs, frames, 0
	s.Refresh()
}

// SetPosition moves the playhead.
func (s *Strip) SetPosition(frame int) {
	if frame == s.pos {
		return
	}
	s.pos = frame
	if s.head != nil {
		s.layoutHead(s.Size())
		canvas.Refresh(s.head)
		canvas.Refresh(s.knob)
		canvas.Refresh(s.dim)
	}
}

// FrameAt is the frame under x.
func (s *Strip) FrameAt(x float32) int {
	w := s.Size().Width
	if s.frames <= 0 || w <= 0 {
		return 0
	}
	i := int(math.Floor(float64(x) / float64(w) * float64(s.frames)))
	return max(0, min(i, s.frames-1))
}

func (s *Strip) seek(x float32) {
	f := s.FrameAt(x)
	s.SetPosition(f)
	if s.OnSeek != nil {
		s.OnSeek(f)
	}
}

// Tapped scrubs to the tapped frame.
func (s *Strip) Tapped(e *fyne.PointEvent) { s.seek(e.Position.X) }

// Dragged scrubs to the pointer while dragging.
func (s *Strip) Dragged(e *fyne.DragEvent) { s.seek(e.Position.X) }

// DragEnd ends scrubbing.
func (s *Strip) DragEnd() {}

// CreateRenderer implements fyne.Widget.
func (s *Strip) CreateRenderer() fyne.WidgetRenderer {
	s.bg = canvas.NewRectangle(color.NRGBA{0x1a, 0x1a, 0x20, 0xff})
	s.bg.CornerRadius = 6
	s.dim = canvas.NewRectangle(color.NRGBA{0, 0, 0, 0x50})
	s.head = canvas.NewRectangle(theme.Color(theme.ColorNamePrimary))
	s.knob = canvas.NewCircle(theme.Color(theme.ColorNamePrimary))
	return &stripRenderer{s: s}
}

func (s *Strip) layoutHead(size fyne.Size) {
	x := float32(0)
	if s.frames > 1 {
		x = float32(s.pos) / float32(s.frames-1) * (size.Width - 2)
	}
	s.head.Move(fyne.NewPos(x, 0))
	s.head.Resize(fyne.NewSize(2, size.Height))
	s.knob.Move(fyne.NewPos(x-4, -3))
	s.knob.Resize(fyne.NewSize(10, 10))
	s.dim.Move(fyne.NewPos(x+2, 0))
	s.dim.Resize(fyne.NewSize(max(0, size.Width-x-2), size.Height))
}

type stripRenderer struct{ s *Strip }

func (r *stripRenderer) Layout(size fyne.Size) {
	s := r.s
	s.bg.Resize(size)
	n := len(s.imgs)
	if n > 0 {
		cw := size.Width / float32(n)
		for i, img := range s.imgs {
			img.Move(fyne.NewPos(float32(i)*cw, 2))
			img.Resize(fyne.NewSize(cw, size.Height-4))
		}
	}
	s.layoutHead(size)
}

func (r *stripRenderer) MinSize() fyne.Size { return fyne.NewSize(200, 44) }

func (r *stripRenderer) Refresh() {
	s := r.s
	if len(s.imgs) != len(s.thumbs) {
		s.imgs = make([]*canvas.Image, len(s.thumbs))
		for i := range s.imgs {
			s.imgs[i] = canvas.NewImageFromImage(nil)
			s.imgs[i].FillMode = canvas.ImageFillCover
			s.imgs[i].ScaleMode = canvas.ImageScaleFastest
		}
	}
	for i, img := range s.imgs {
		img.Image = s.thumbs[i]
		img.Refresh()
	}
	s.head.FillColor = theme.Color(theme.ColorNamePrimary)
	s.knob.FillColor = s.head.FillColor
	s.head.Hidden = s.frames == 0
	s.knob.Hidden = s.head.Hidden
	s.dim.Hidden = s.head.Hidden
	r.Layout(s.Size())
	canvas.Refresh(s)
}

func (r *stripRenderer) Objects() []fyne.CanvasObject {
	s := r.s
	o := []fyne.CanvasObject{s.bg}
	for _, img := range s.imgs {
		o = append(o, img)
	}
	return append(o, s.dim, s.head, s.knob)
}

func (r *stripRenderer) Destroy() {}
