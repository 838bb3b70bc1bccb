package widgets

import (
	"image"
	"image/color"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/widget"
)

// Wipe shows two clips' same frame split by a vertical line: A left of it,
// B right. Drag to move the line; OnSide reports the side under the
// pointer (0: A, 1: B) whenever it changes, so the caller can play that
// side's sound.
type Wipe struct {
	widget.BaseWidget
	OnSide func(side int)

	a, b  Frames
	frame int
	split float32 // 0…1 of the width
	side  int

	ras *canvas.Raster
}

// NewWipe returns a wipe split in the middle.
func NewWipe(a, b Frames) *Wipe {
	w := &Wipe{a: a, b: b, split: 0.5, side: -1}
	w.ExtendBaseWidget(w)
	return w
}

// SetFrame shows frame i of both clips.
func (w *Wipe) SetFrame(i int) {
	if i == w.frame {
		return
	}
	w.frame = i
	if w.ras != nil {
		w.ras.Refresh()
	}
}

// Split is the line's position, 0…1 of the width.
func (w *Wipe) Split() float32 { return w.split }

// SetSplit moves the line.
func (w *Wipe) SetSplit(f float32) {
	w.split = max(0, min(f, 1))
	if w.ras != nil {
		w.ras.Refresh()
	}
}

// Dragged moves the line to the pointer.
func (w *Wipe) Dragged(e *fyne.DragEvent) {
	if s := w.Size().Width; s > 0 {
		w.SetSplit(e.Position.X / s)
	}
	w.pointer(e.Position.X)
}

// DragEnd implements fyne.Draggable.
func (w *Wipe) DragEnd() {}

// MouseIn, MouseMoved and MouseOut follow the pointer's side.
func (w *Wipe) MouseIn(e *desktop.MouseEvent)    { w.pointer(e.Position.X) }
func (w *Wipe) MouseMoved(e *desktop.MouseEvent) { w.pointer(e.Position.X) }
func (w *Wipe) MouseOut()                        {}

func (w *Wipe) pointer(x float32) {
	side := 0
	if x >= w.split*w.Size().Width {
		side = 1
	}
	if side != w.side {
		w.side = side
		if w.OnSide != nil {
			w.OnSide(side)
		}
	}
}

func frameOf(f Frames, i int) image.Image {
	if f == nil || f.Len() == 0 {
		return nil
	}
	return f.Frame(max(0, min(i, f.Len()-1)))
}

// Draw renders the wipe at width×height (nearest-neighbour sampling of
// both frames, fitted to the width; exported for tests).
func (w *Wipe) Draw(width, height int) image.Image {
	out := image.NewRGBA(image.Rect(0, 0, width, height))
	a, b := frameOf(w.a, w.frame), frameOf(w.b, w.frame)
	cut := int(w.split * float32(width))
	for _, side := range []struct {
		img    image.Image
		x0, x1 int
	}{{a, 0, cut}, {b, cut, width}} {
		if side.img == nil {
			continue
		}
		r := side.img.Bounds()
		for y := 0; y < height; y++ {
			sy := r.Min.Y + y*r.Dy()/height
			for x := side.x0; x < side.x1; x++ {
				sx := r.Min.X + x*r.Dx()/width
				out.Set(x, y, side.img.At(sx, sy))
			}
		}
	}
	for y := 0; y < height && cut < width; y++ {
		out.Set(cut, y, color.White)
	}
	return out
}

// CreateRenderer implements fyne.Widget.
func (w *Wipe) CreateRenderer() fyne.WidgetRenderer {
	w.ras = canvas.NewRaster(w.Draw)
	return &minRenderer{WidgetRenderer: widget.NewSimpleRenderer(w.ras), min: fyne.NewSize(480, 270)}
}
