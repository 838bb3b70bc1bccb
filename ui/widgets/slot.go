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

// Slot is a keyframe drop target: a framed area with a title, a thumbnail
// (or a hint when empty), and a remove button when filled. Tapping it asks
// for a file (OnTap); the window's drop handler finds it by position.
type Slot struct {
	widget.BaseWidget
	Title   string
	Hint    string
	OnTap   func()
	OnClear func()

	thumb   image.Image
	name    string
	status  string // under the thumbnail: "1344×768", "can't be read"
	problem bool
	hover   bool
	busy    bool

	bg    *canvas.Rectangle
	img   *canvas.Image
	title *canvas.Text
	hint  *canvas.Text
	label *canvas.Text
	clear *widget.Button
}

// NewSlot returns an empty slot.
func NewSlot(title, hint string) *Slot {
	s := &Slot{Title: title, Hint: hint}
	s.ExtendBaseWidget(s)
	return s
}

// Set shows a file (thumb may be nil while it is read); name "" empties the
// slot.
func (s *Slot) Set(name string, thumb image.Image, status string, problem, busy bool) {
	s.name, s.thumb, s.status, s.problem, s.busy = name, thumb, status, problem, busy
	s.Refresh()
}

// Empty reports whether the slot holds nothing.
func (s *Slot) Empty() bool { return s.name == "" }

// Tapped asks for a file.
func (s *Slot) Tapped(*fyne.PointEvent) {
	if s.OnTap != nil {
		s.OnTap()
	}
}

// MouseIn highlights the slot.
func (s *Slot) MouseIn(*desktop.MouseEvent) { s.hover = true; s.Refresh() }

// MouseMoved implements desktop.Hoverable.
func (s *Slot) MouseMoved(*desktop.MouseEvent) {}

// MouseOut removes the highlight.
func (s *Slot) MouseOut() { s.hover = false; s.Refresh() }

// Cursor shows a pointing hand (it is clickable).
func (s *Slot) Cursor() desktop.Cursor { return desktop.PointerCursor }

// CreateRenderer implements fyne.Widget.
func (s *Slot) CreateRenderer() fyne.WidgetRenderer {
	s.bg = canvas.NewRectangle(color.Transparent)
	s.bg.CornerRadius = 8
	s.bg.StrokeWidth = 1.5
	s.img = canvas.NewImageFromImage(nil)
	s.img.FillMode = canvas.ImageFillContain
	s.img.ScaleMode = canvas.ImageScaleSmooth
	s.title = canvas.NewText(s.Title, theme.Color(theme.ColorNameForeground))
	s.title.TextSize = theme.Size(theme.SizeNameCaptionText)
	s.title.TextStyle.Bold = true
	s.hint = canvas.NewText(s.Hint, theme.Color(theme.ColorNamePlaceHolder))
	s.hint.TextSize = theme.Size(theme.SizeNameCaptionText)
	s.hint.Alignment = fyne.TextAlignCenter
	s.label = canvas.NewText("", theme.Color(theme.ColorNamePlaceHolder))
	s.label.TextSize = theme.Size(theme.SizeNameCaptionText) - 1
	s.clear = widget.NewButtonWithIcon("", theme.CancelIcon(), func() {
		if s.OnClear != nil {
			s.OnClear()
		}
	})
	s.clear.Importance = widget.LowImportance
	r := &slotRenderer{s: s}
	r.Refresh()
	return r
}

type slotRenderer struct{ s *Slot }

func (r *slotRenderer) Layout(size fyne.Size) {
	s := r.s
	s.bg.Resize(size)
	pad := float32(8)
	ts := s.title.MinSize()
	s.title.Move(fyne.NewPos(pad, pad-2))
	s.title.Resize(ts)
	cs := fyne.NewSize(24, 24)
	s.clear.Resize(cs)
	s.clear.Move(fyne.NewPos(size.Width-cs.Width-4, 2))
	ls := s.label.MinSize()
	top := pad + ts.Height
	bottom := size.Height - pad - ls.Height
	s.img.Move(fyne.NewPos(pad, top+2))
	s.img.Resize(fyne.NewSize(size.Width-2*pad, max(0, bottom-top-4)))
	s.label.Move(fyne.NewPos(pad, bottom))
	s.label.Resize(fyne.NewSize(size.Width-2*pad, ls.Height))
	hs := s.hint.MinSize()
	s.hint.Move(fyne.NewPos(0, top+(bottom-top-hs.Height)/2))
	s.hint.Resize(fyne.NewSize(size.Width, hs.Height))
}

func (r *slotRenderer) MinSize() fyne.Size { return fyne.NewSize(150, 112) }

func (r *slotRenderer) Refresh() {
	s := r.s
	fill := theme.Color(theme.ColorNameInputBackground)
	stroke := theme.Color(theme.ColorNameSeparator)
	switch {
	case s.problem:
		stroke = theme.Color(theme.ColorNameError)
	case s.hover:
		stroke = theme.Color(theme.ColorNamePrimary)
	}
	s.bg.FillColor, s.bg.StrokeColor = fill, stroke
	s.title.Text = s.Title
	s.title.Color = theme.Color(theme.ColorNameForeground)
	s.img.Image = s.thumb
	s.img.Hidden = s.thumb == nil
	switch {
	case s.name == "":
		s.hint.Text = s.Hint
	case s.busy:
		s.hint.Text = "Reading…"
	case s.thumb == nil:
		s.hint.Text = s.name
	default:
		s.hint.Text = ""
	}
	s.hint.Color = theme.Color(theme.ColorNamePlaceHolder)
	s.hint.Hidden = s.hint.Text == ""
	label := s.name
	if s.status != "" && label != "" {
		label += " · " + s.status
	}
	s.label.Text = ellipsize(label, 30)
	s.label.Color = theme.Color(theme.ColorNamePlaceHolder)
	if s.problem {
		s.label.Color = theme.Color(theme.ColorNameError)
	}
	if s.name == "" {
		s.clear.Hide()
	} else {
		s.clear.Show()
	}
	r.Layout(s.Size())
	for _, o := range r.Objects() {
		o.Refresh()
	}
}

func (r *slotRenderer) Objects() []fyne.CanvasObject {
	s := r.s
	return []fyne.CanvasObject{s.bg, s.img, s.title, s.hint, s.label, s.clear}
}

func (r *slotRenderer) Destroy() {}

func ellipsize(s string, n int) string {
	rs := []rune(s)
	if len(rs) <= n {
		return s
	}
	return string(rs[:n-1]) + "…"
}
