package widgets

import (
	"image"
	"image/color"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// Kind colours of type badges.
var (
	PictureColor = color.NRGBA{0x3b, 0x82, 0xf6, 0xff} // blue
	VideoColor   = color.NRGBA{0xa8, 0x55, 0xf7, 0xff} // violet
	AudioColor   = color.NRGBA{0x14, 0xb8, 0xa6, 0xff} // teal
)

// Badge is a small coloured pill with a word ("Picture 1", "FL2VA").
type Badge struct {
	widget.BaseWidget
	Text  string
	Color color.Color

	bg *canvas.Rectangle
	t  *canvas.Text
}

// NewBadge returns a badge.
func NewBadge(text string, c color.Color) *Badge {
	b := &Badge{Text: text, Color: c}
	b.ExtendBaseWidget(b)
	return b
}

// Set changes the badge's text and colour.
func (b *Badge) Set(text string, c color.Color) {
	b.Text, b.Color = text, c
	b.Refresh()
}

// CreateRenderer implements fyne.Widget.
func (b *Badge) CreateRenderer() fyne.WidgetRenderer {
	b.bg = canvas.NewRectangle(b.Color)
	b.bg.CornerRadius = 5
	b.t = canvas.NewText(b.Text, color.White)
	b.t.TextSize = theme.Size(theme.SizeNameCaptionText) - 1
	b.t.TextStyle.Bold = true
	return &badgeRenderer{b: b}
}

type badgeRenderer struct{ b *Badge }

func (r *badgeRenderer) Layout(s fyne.Size) {
	ts := r.b.t.MinSize()
	h := ts.Height + 4
	y := (s.Height - h) / 2
	r.b.bg.Move(fyne.NewPos(0, y))
	r.b.bg.Resize(fyne.NewSize(s.Width, h))
	r.b.t.Move(fyne.NewPos((s.Width-ts.Width)/2, y+2))
	r.b.t.Resize(ts)
}

func (r *badgeRenderer) MinSize() fyne.Size {
	ts := r.b.t.MinSize()
	return fyne.NewSize(ts.Width+14, ts.Height+6)
}

func (r *badgeRenderer) Refresh() {
	r.b.bg.FillColor = r.b.Color
	r.b.t.Text = r.b.Text
	r.Layout(r.b.Size())
	r.b.bg.Refresh()
	r.b.t.Refresh()
}

func (r *badgeRenderer) Objects() []fyne.CanvasObject { return []fyne.CanvasObject{r.b.bg, r.b.t} }
func (r *badgeRenderer) Destroy()                     {}

// Bar is a thin rounded progress bar.
type Bar struct {
	widget.BaseWidget
	value  float64
	active bool
	track  *canvas.Rectangle
	fill   *canvas.Rectangle
}

// NewBar returns an empty bar.
func NewBar() *Bar {
	b := &Bar{}
	b.ExtendBaseWidget(b)
	return b
}

// Set sets the completed fraction (0..1) and whether the phase is the
// current one (drawn in the accent colour; finished phases are drawn muted).
func (b *Bar) Set(v float64, active bool) {
	if v == b.value && active == b.active {
		return
	}
	b.value, b.active = max(0, min(1, v)), active
	b.Refresh()
}

// Value is the completed fraction.
func (b *Bar) Value() float64 { return b.value }

// CreateRenderer implements fyne.Widget.
func (b *Bar) CreateRenderer() fyne.WidgetRenderer {
	b.track = canvas.NewRectangle(theme.Color(theme.ColorNameInputBackground))
	b.track.CornerRadius = 3
	b.fill = canvas.NewRectangle(theme.Color(theme.ColorNamePrimary))
	b.fill.CornerRadius = 3
	return &barRenderer{b: b}
}

type barRenderer struct{ b *Bar }

func (r *barRenderer) Layout(s fyne.Size) {
	h := float32(6)
	y := (s.Height - h) / 2
	r.b.track.Move(fyne.NewPos(0, y))
	r.b.track.Resize(fyne.NewSize(s.Width, h))
	r.b.fill.Move(fyne.NewPos(0, y))
	r.b.fill.Resize(fyne.NewSize(s.Width*float32(r.b.value), h))
}

func (r *barRenderer) MinSize() fyne.Size { return fyne.NewSize(60, 10) }

func (r *barRenderer) Refresh() {
	r.b.track.FillColor = theme.Color(theme.ColorNameInputBackground)
	c := theme.Color(theme.ColorNamePrimary)
	if !r.b.active {
		c = theme.Color(theme.ColorNameDisabled)
		if r.b.value >= 1 {
			c = theme.Color(theme.ColorNameSuccess)
		}
	}
	r.b.fill.FillColor = c
	r.Layout(r.b.Size())
	r.b.track.Refresh()
	r.b.fill.Refresh()
}

func (r *barRenderer) Objects() []fyne.CanvasObject { return []fyne.CanvasObject{r.b.track, r.b.fill} }
func (r *barRenderer) Destroy()                     {}

// Thumb is a small square preview: a picture, a sound's envelope, or an
// icon while nothing is known.
type Thumb struct {
	widget.BaseWidget
	img   image.Image
	peaks []float32
	icon  fyne.Resource
	edge  float32
}

// NewThumb returns a thumbnail of the given edge length.
func NewThumb(edge float32) *Thumb {
	t := &Thumb{edge: edge}
	t.ExtendBaseWidget(t)
	return t
}

// Set shows a picture, or else an envelope, or else an icon.
func (t *Thumb) Set(img image.Image, peaks []float32, icon fyne.Resource) {
	t.img, t.peaks, t.icon = img, peaks, icon
	t.Refresh()
}

// CreateRenderer implements fyne.Widget.
func (t *Thumb) CreateRenderer() fyne.WidgetRenderer {
	bg := canvas.NewRectangle(theme.Color(theme.ColorNameInputBackground))
	bg.CornerRadius = 4
	img := canvas.NewImageFromImage(nil)
	img.FillMode = canvas.ImageFillCover
	img.ScaleMode = canvas.ImageScaleSmooth
	wave := NewWaveform(t.edge)
	ic := widget.NewIcon(nil)
	r := &thumbRenderer{t: t, bg: bg, img: img, wave: wave, icon: ic}
	r.Refresh()
	return r
}

type thumbRenderer struct {
	t    *Thumb
	bg   *canvas.Rectangle
	img  *canvas.Image
	wave *Waveform
	icon *widget.Icon
}

func (r *thumbRenderer) Layout(s fyne.Size) {
	r.bg.Resize(s)
	r.img.Resize(s)
	r.wave.Move(fyne.NewPos(2, 4))
	r.wave.Resize(fyne.NewSize(s.Width-4, s.Height-8))
	is := fyne.NewSize(s.Width*0.6, s.Height*0.6)
	r.icon.Move(fyne.NewPos((s.Width-is.Width)/2, (s.Height-is.Height)/2))
	r.icon.Resize(is)
}

func (r *thumbRenderer) MinSize() fyne.Size { return fyne.NewSize(r.t.edge, r.t.edge) }

func (r *thumbRenderer) Refresh() {
	t := r.t
	r.bg.FillColor = theme.Color(theme.ColorNameInputBackground)
	r.img.Image = t.img
	r.img.Hidden = t.img == nil
	r.wave.Hidden = t.img != nil || t.peaks == nil
	if !r.wave.Hidden {
		r.wave.SetPeaks(t.peaks)
		r.wave.SetProgress(1)
	}
	r.icon.Hidden = t.img != nil || t.peaks != nil || t.icon == nil
	r.icon.SetResource(t.icon)
	r.Layout(t.Size())
	r.bg.Refresh()
	r.img.Refresh()
}

func (r *thumbRenderer) Objects() []fyne.CanvasObject {
	return []fyne.CanvasObject{r.bg, r.img, r.wave, r.icon}
}
func (r *thumbRenderer) Destroy() {}

// Handle is a drag handle (≡) for reordering rows: it reports the vertical
// distance dragged and the end of the drag.
type Handle struct {
	widget.Icon
	OnDrag    func(dy float32)
	OnDragEnd func(dy float32)
	dy        float32
}

// NewHandle returns a drag handle.
func NewHandle() *Handle {
	h := &Handle{}
	h.SetResource(theme.MenuIcon())
	h.ExtendBaseWidget(h)
	return h
}

// Dragged accumulates the drag.
func (h *Handle) Dragged(e *fyne.DragEvent) {
	h.dy += e.Dragged.DY
	if h.OnDrag != nil {
		h.OnDrag(h.dy)
	}
}

// DragEnd reports the total distance.
func (h *Handle) DragEnd() {
	dy := h.dy
	h.dy = 0
	if h.OnDragEnd != nil {
		h.OnDragEnd(dy)
	}
}

// Cursor shows a vertical-resize cursor (Fyne has no grab cursor): the row
// moves up or down.
func (h *Handle) Cursor() desktop.Cursor { return desktop.VResizeCursor }

// MinSize keeps the handle small.
func (h *Handle) MinSize() fyne.Size { return fyne.NewSize(20, 20) }
