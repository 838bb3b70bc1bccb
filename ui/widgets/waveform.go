package widgets

import (
	"image"
	"image/color"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// Waveform draws a sound's envelope (peaks in 0..1) as mirrored bars; the
// part before the playhead is drawn in the accent colour. With no peaks it
// draws a flat line (a silent clip).
type Waveform struct {
	widget.BaseWidget
	OnSeek func(fraction float64)

	peaks    []float32
	progress float64
	ras      *canvas.Raster
	height   float32
}

// NewWaveform returns an empty waveform of the given minimum height.
func NewWaveform(height float32) *Waveform {
	w := &Waveform{height: height}
	w.ExtendBaseWidget(w)
	return w
}

// SetPeaks sets the envelope.
func (w *Waveform) SetPeaks(p []float32) {
	w.peaks, w.progress = p, 0
	w.Refresh()
}

// SetProgress moves the playhead (0..1).
func (w *Waveform) SetProgress(f float64) {
	if f == w.progress {
		return
	}
	w.progress = f
	if w.ras != nil {
		w.ras.Refresh()
	}
}

// Tapped seeks to the tapped position.
func (w *Waveform) Tapped(e *fyne.PointEvent) {
	if w.OnSeek != nil && w.Size().Width > 0 {
		w.OnSeek(float64(e.Position.X / w.Size().Width))
	}
}

// Draw renders the waveform into a w×h image (exported for goldens).
func (w *Waveform) Draw(width, height int) image.Image {
	img := image.NewNRGBA(image.Rect(0, 0, width, height))
	if width <= 0 || height <= 0 {
		return img
	}
	played := toNRGBA(theme.Color(theme.ColorNamePrimary))
	rest := toNRGBA(theme.Color(theme.ColorNameDisabled))
	mid := height / 2
	cut := int(w.progress * float64(width))
	for x := 0; x < width; x++ {
		var v float32
		if n := len(w.peaks); n > 0 {
			a, b := x*n/width, (x+1)*n/width
			for i := a; i < max(b, a+1) && i < n; i++ {
				v = max(v, w.peaks[i])
			}
		}
		half := int(v * float32(mid-1))
		c := rest
		if x < cut {
			c = played
		}
		for y := mid - half; y <= mid+half; y++ {
			img.SetNRGBA(x, y, c)
		}
	}
	return img
}

func toNRGBA(c color.Color) color.NRGBA {
	return color.NRGBAModel.Convert(c).(color.NRGBA)
}

// CreateRenderer implements fyne.Widget.
func (w *Waveform) CreateRenderer() fyne.WidgetRenderer {
	w.ras = canvas.NewRaster(w.Draw)
	w.ras.ScaleMode = canvas.ImageScalePixels
	r := widget.NewSimpleRenderer(w.ras)
	return &minRenderer{WidgetRenderer: r, min: fyne.NewSize(100, w.height)}
}

// minRenderer gives a simple renderer a minimum size.
type minRenderer struct {
	fyne.WidgetRenderer
	min fyne.Size
}

func (r *minRenderer) MinSize() fyne.Size { return r.min }
