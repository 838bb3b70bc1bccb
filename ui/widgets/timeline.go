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

// TimelineClip is one clip as the timeline draws it, in frames (24 fps).
type TimelineClip struct {
	Title         string
	Start, Frames int // place on the timeline
	In            int // first source frame shown
	SourceFrames  int // the source's length (0: unknown), bounds trims
	Fade          int // crossfade into the next clip
	// Thumbs are evenly spread over the whole source (the strip's
	// thumbnails); Peaks the whole source's sound envelope.
	Thumbs  []image.Image
	Peaks   []float32
	Mute    bool
	Missing string // a named gap when set
}

// Timeline lanes, in pixels.
const (
	rulerH = 22
	videoH = 54
	audioH = 28
	gapH   = 4
	edgeW  = 7 // the grab zone of a clip's edge
)

// Timeline is the sequence editor's track view: a frame-accurate ruler,
// each clip as a thumbnail strip as long as the clip, its sound's
// waveform under it, crossfades as overlaps, missing clips as named gaps,
// and a playhead. Tap or drag on the ruler (or empty track) to scrub; drag
// a clip to reorder, its edges to trim. Zoom sets the pixels per frame;
// put it in a horizontal scroll container. Every edit is reported through
// the callbacks when the drag ends (the drag itself only previews).
type Timeline struct {
	widget.BaseWidget

	OnSeek   func(frame int)
	OnSelect func(clip int)
	OnMove   func(from, to int)
	OnTrim   func(clip, in, out int) // new source in and out frames

	clips    []TimelineClip
	total    int
	pos      int
	selected int
	zoom     float32 // pixels per frame
	dropAt   int     // insertion marker for a drag from outside (−1: none)

	drag dragState

	r *timelineRenderer
}

type dragMode uint8

const (
	dragNone dragMode = iota
	dragScrub
	dragMove
	dragTrimIn
	dragTrimOut
)

type dragState struct {
	mode  dragMode
	clip  int
	start fyne.Position
	x     float32 // pointer now
	// the previewed trim, in source frames
	in, out int
}

// NewTimeline returns an empty timeline at 4 pixels per frame.
func NewTimeline() *Timeline {
	t := &Timeline{zoom: 4, selected: -1, dropAt: -1}
	t.ExtendBaseWidget(t)
	return t
}

// SetClips replaces the clips and the total length (frames).
func (t *Timeline) SetClips(clips []TimelineClip, total int) {
	t.clips, t.total = clips, total
	if t.selected >= len(clips) {
		t.selected = -1
	}
	t.Refresh()
}

// Clips is what the timeline shows.
func (t *Timeline) Clips() []TimelineClip { return t.clips }

// Select highlights clip i (−1: none).
func (t *Timeline) Select(i int) { t.selected = i; t.Refresh() }

// Selected is the highlighted clip (−1: none).
func (t *Timeline) Selected() int { return t.selected }

// SetPosition moves the playhead.
func (t *Timeline) SetPosition(frame int) {
	if frame == t.pos {
		return
	}
	t.pos = frame
	if t.r != nil {
		t.r.layoutHead(t.Size())
		canvas.Refresh(t.r.head)
	}
}

// Playhead is the playhead's frame.
func (t *Timeline) Playhead() int { return t.pos }

// SetZoom sets pixels per frame (clamped to 0.25…24).
func (t *Timeline) SetZoom(pxPerFrame float32) {
	t.zoom = max(0.25, min(pxPerFrame, 24))
	t.Refresh()
}

// Zoom is the pixels per frame.
func (t *Timeline) Zoom() float32 { return t.zoom }

// SetDropMarker shows where a dragged take would land (−1 hides it).
func (t *Timeline) SetDropMarker(at int) {
	if at != t.dropAt {
		t.dropAt = at
		t.Refresh()
	}
}

// X is frame f's position.
func (t *Timeline) X(f int) float32 { return float32(f) * t.zoom }

// FrameAt is the frame under x (clamped to the sequence).
func (t *Timeline) FrameAt(x float32) int {
	f := int(math.Floor(float64(x / t.zoom)))
	return max(0, min(f, t.total-1))
}

// ClipAt is the clip under a point of the video lane (−1: none); in a
// crossfade, the later clip.
func (t *Timeline) ClipAt(p fyne.Position) int {
	if p.Y < rulerH || p.Y >= rulerH+videoH+gapH+audioH {
		return -1
	}
	for i := len(t.clips) - 1; i >= 0; i-- {
		c := t.clips[i]
		if p.X >= t.X(c.Start) && p.X < t.X(c.Start+c.Frames) {
			return i
		}
	}
	return -1
}

// InsertIndex is where something dropped at x goes: after every clip whose
// middle lies left of x.
func (t *Timeline) InsertIndex(x float32) int {
	at := 0
	for i, c := range t.clips {
		if t.X(c.Start)+t.X(c.Frames)/2 < x {
			at = i + 1
		}
	}
	return at
}

// ClipPoint is a point on clip i: at fraction fx of its width, in the
// video lane (tests and scripted drags).
func (t *Timeline) ClipPoint(i int, fx float32) fyne.Position {
	c := t.clips[i]
	return fyne.NewPos(t.X(c.Start)+fx*t.X(c.Frames), rulerH+videoH/2)
}

// TrackPoint is the video lane's point over frame f.
func (t *Timeline) TrackPoint(f int) fyne.Position {
	return fyne.NewPos(t.X(f)+t.zoom/2, rulerH+videoH/2)
}

// RulerPoint is the ruler's point over frame f.
func (t *Timeline) RulerPoint(f int) fyne.Position {
	return fyne.NewPos(t.X(f)+t.zoom/2, rulerH/2)
}

func (t *Timeline) seek(x float32) {
	f := t.FrameAt(x)
	t.SetPosition(f)
	if t.OnSeek != nil {
		t.OnSeek(f)
	}
}

// Tapped selects the clip under the pointer and moves the playhead there.
func (t *Timeline) Tapped(e *fyne.PointEvent) {
	if i := t.ClipAt(e.Position); i >= 0 {
		t.selected = i
		t.Refresh()
		if t.OnSelect != nil {
			t.OnSelect(i)
		}
	}
	if t.total > 0 {
		t.seek(e.Position.X)
	}
}

// Dragged scrubs, moves a clip or trims an edge, by where the drag began.
func (t *Timeline) Dragged(e *fyne.DragEvent) {
	d := &t.drag
	if d.mode == dragNone {
		d.start = e.Position.Subtract(e.Dragged)
		d.mode, d.clip = dragScrub, -1
		if i := t.ClipAt(d.start); i >= 0 {
			c := t.clips[i]
			x0, x1 := t.X(c.Start), t.X(c.Start+c.Frames)
			d.clip, d.in, d.out = i, c.In, c.In+c.Frames
			switch {
			case d.start.X-x0 < edgeW && c.Missing == "":
				d.mode = dragTrimIn
			case x1-d.start.X < edgeW && c.Missing == "":
				d.mode = dragTrimOut
			default:
				d.mode = dragMove
			}
		}
	}
	d.x = e.Position.X
	switch d.mode {
	case dragScrub:
		t.seek(e.Position.X)
		return
	case dragTrimIn, dragTrimOut:
		c := t.clips[d.clip]
		df := int(math.Round(float64((d.x - d.start.X) / t.zoom)))
		if d.mode == dragTrimIn {
			d.in = max(0, min(c.In+df, c.In+c.Frames-1))
		} else {
			d.out = max(c.In+1, c.In+c.Frames+df)
			if c.SourceFrames > 0 {
				d.out = min(d.out, c.SourceFrames)
			}
		}
	}
	t.Refresh()
}

// DragEnd applies the drag.
func (t *Timeline) DragEnd() {
	d := t.drag
	t.drag = dragState{}
	switch d.mode {
	case dragMove:
		to := t.moveTarget(d)
		if to != d.clip && t.OnMove != nil {
			t.OnMove(d.clip, to)
		}
	case dragTrimIn, dragTrimOut:
		c := t.clips[d.clip]
		if (d.in != c.In || d.out != c.In+c.Frames) && t.OnTrim != nil {
			t.OnTrim(d.clip, d.in, d.out)
		}
	}
	t.Refresh()
}

// moveTarget is the index a moved clip lands at: among the other clips,
// after every one whose middle lies left of the moved clip's middle.
func (t *Timeline) moveTarget(d dragState) int {
	c := t.clips[d.clip]
	mid := t.X(c.Start) + t.X(c.Frames)/2 + (d.x - d.start.X)
	to := 0
	for i, o := range t.clips {
		if i == d.clip {
			continue
		}
		if t.X(o.Start)+t.X(o.Frames)/2 < mid {
			to++
		}
	}
	return to
}

// CreateRenderer implements fyne.Widget.
func (t *Timeline) CreateRenderer() fyne.WidgetRenderer {
	r := &timelineRenderer{t: t}
	r.bg = canvas.NewRectangle(color.NRGBA{0x14, 0x14, 0x19, 0xff})
	r.ruler = canvas.NewRaster(r.drawRuler)
	r.ruler.ScaleMode = canvas.ImageScalePixels
	r.head = canvas.NewRectangle(theme.Color(theme.ColorNamePrimary))
	r.marker = canvas.NewRectangle(color.NRGBA{0xff, 0xd0, 0x40, 0xff})
	t.r = r
	r.Refresh()
	return r
}

type timelineRenderer struct {
	t      *Timeline
	bg     *canvas.Rectangle
	ruler  *canvas.Raster
	head   *canvas.Rectangle
	marker *canvas.Rectangle
	objs   []fyne.CanvasObject // the clips' objects, rebuilt on Refresh
}

func (r *timelineRenderer) MinSize() fyne.Size {
	t := r.t
	return fyne.NewSize(max(t.X(t.total)+120, 400), rulerH+videoH+gapH+audioH+2)
}

func (r *timelineRenderer) layoutHead(s fyne.Size) {
	t := r.t
	x := t.X(t.pos)
	r.head.Move(fyne.NewPos(x, 0))
	r.head.Resize(fyne.NewSize(2, s.Height))
	r.head.Hidden = t.total == 0
}

func (r *timelineRenderer) Layout(s fyne.Size) {
	r.bg.Resize(s)
	r.ruler.Move(fyne.NewPos(0, 0))
	r.ruler.Resize(fyne.NewSize(s.Width, rulerH))
	r.layoutHead(s)
}

// drawRuler draws the time ruler: a tick per frame when frames are at
// least 4 px apart, longer ticks every 6 frames (¼ s) and second marks
// with their time.
func (r *timelineRenderer) drawRuler(w, h int) image.Image {
	t := r.t
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	tick := color.NRGBA{0x70, 0x70, 0x80, 0xff}
	major := color.NRGBA{0xc0, 0xc0, 0xd0, 0xff}
	scale := float32(w) / max(r.t.Size().Width, 1)
	zoom := t.zoom * scale
	n := int(float32(w)/zoom) + 1
	for f := 0; f <= n; f++ {
		x := int(float32(f) * zoom)
		if x >= w {
			break
		}
		var l int
		c := tick
		switch {
		case f%24 == 0:
			l, c = h, major
		case f%6 == 0 && zoom >= 1:
			l = h / 2
		case zoom >= 4:
			l = h / 4
		}
		for y := h - l; y < h; y++ {
			img.SetNRGBA(x, y, c)
		}
	}
	return img
}

func (r *timelineRenderer) Refresh() {
	t := r.t
	r.objs = r.objs[:0]
	y0 := float32(rulerH)
	var over []fyne.CanvasObject // drawn over every clip: the crossfades
	// a time mark every second (every 5 s when seconds are crowded)
	step := 24
	if t.X(24) < 40 {
		step = 120
	}
	for f := 0; f <= t.total+step; f += step {
		l := canvas.NewText(FormatTime(time.Duration(f) * time.Second / 24)[:5], color.NRGBA{0xa0, 0xa0, 0xb0, 0xff})
		l.TextSize = theme.Size(theme.SizeNameCaptionText) - 2
		l.Move(fyne.NewPos(t.X(f)+3, 0))
		r.objs = append(r.objs, l)
	}
	for i, c := range t.clips {
		x0, w := t.X(c.Start), t.X(c.Frames)
		in := c.In
		if d := t.drag; d.clip == i && (d.mode == dragTrimIn || d.mode == dragTrimOut) {
			x0 += t.X(d.in - c.In)
			w = t.X(d.out - d.in)
			in = d.in
		}
		if d := t.drag; d.clip == i && d.mode == dragMove {
			x0 += d.x - d.start.X
		}
		box := canvas.NewRectangle(color.NRGBA{0x2a, 0x2a, 0x34, 0xff})
		box.Move(fyne.NewPos(x0, y0))
		box.Resize(fyne.NewSize(w, videoH))
		r.objs = append(r.objs, box)
		if c.Missing != "" {
			box.FillColor = color.NRGBA{0x40, 0x18, 0x18, 0xff}
			box.StrokeColor = color.NRGBA{0xe0, 0x50, 0x50, 0xff}
			box.StrokeWidth = 1
			txt := canvas.NewText("missing: "+c.Title, color.NRGBA{0xff, 0xa0, 0xa0, 0xff})
			txt.TextSize = theme.Size(theme.SizeNameCaptionText)
			txt.Move(fyne.NewPos(x0+6, y0+6))
			r.objs = append(r.objs, txt)
			continue
		}
		// thumbnails, one per tile, each the source frame at its middle
		tileW := float32(videoH * 16 / 9)
		tiles := int(math.Ceil(float64(w / tileW)))
		for k := 0; k < tiles && len(c.Thumbs) > 0; k++ {
			tw := min(tileW, w-float32(k)*tileW)
			f := in + int((float32(k)*tileW+tw/2)/t.zoom)
			j := 0
			if c.SourceFrames > 0 {
				j = f * len(c.Thumbs) / c.SourceFrames
			}
			j = max(0, min(j, len(c.Thumbs)-1))
			img := canvas.NewImageFromImage(c.Thumbs[j])
			img.FillMode = canvas.ImageFillCover
			img.ScaleMode = canvas.ImageScaleFastest
			img.Move(fyne.NewPos(x0+float32(k)*tileW, y0+1))
			img.Resize(fyne.NewSize(tw, videoH-2))
			r.objs = append(r.objs, img)
		}
		// the sound under it
		peaks := c.Peaks
		wave := canvas.NewRaster(func(pw, ph int) image.Image {
			return drawPeaks(pw, ph, peaks, in, in+int(w/t.zoom), c.SourceFrames, c.Mute)
		})
		wave.Move(fyne.NewPos(x0, y0+videoH+gapH))
		wave.Resize(fyne.NewSize(w, audioH))
		r.objs = append(r.objs, wave)
		label := canvas.NewText(c.Title, color.White)
		label.TextSize = theme.Size(theme.SizeNameCaptionText)
		lb := canvas.NewRectangle(color.NRGBA{0, 0, 0, 0xa0})
		ls := label.MinSize()
		lb.Move(fyne.NewPos(x0+3, y0+3))
		lb.Resize(fyne.NewSize(min(ls.Width+8, max(w-6, 0)), ls.Height))
		label.Move(fyne.NewPos(x0+7, y0+3))
		r.objs = append(r.objs, lb, label)
		if i == t.selected {
			sel := canvas.NewRectangle(color.Transparent)
			sel.StrokeColor = theme.Color(theme.ColorNamePrimary)
			sel.StrokeWidth = 2
			sel.Move(fyne.NewPos(x0, y0))
			sel.Resize(fyne.NewSize(w, videoH+gapH+audioH))
			r.objs = append(r.objs, sel)
		}
		if c.Fade > 0 && i+1 < len(t.clips) {
			// the overlap, marked with a diagonal band
			fx := t.X(c.Start + c.Frames - c.Fade)
			band := canvas.NewRectangle(color.NRGBA{0xff, 0xd0, 0x40, 0x50})
			band.StrokeColor = color.NRGBA{0xff, 0xd0, 0x40, 0xff}
			band.StrokeWidth = 1
			band.Move(fyne.NewPos(fx, y0))
			band.Resize(fyne.NewSize(t.X(c.Fade), videoH+gapH+audioH))
			xl := canvas.NewText(fmt.Sprintf("✕ %.2fs", float64(c.Fade)/24), color.White)
			xl.TextSize = theme.Size(theme.SizeNameCaptionText) - 2
			xl.Move(fyne.NewPos(fx+2, y0+videoH-xl.MinSize().Height))
			over = append(over, band, xl)
		}
		if c.Mute {
			m := canvas.NewText("muted", color.NRGBA{0xff, 0xc0, 0x60, 0xff})
			m.TextSize = theme.Size(theme.SizeNameCaptionText) - 2
			m.Move(fyne.NewPos(x0+4, y0+videoH+gapH+2))
			r.objs = append(r.objs, m)
		}
	}
	r.objs = append(r.objs, over...)
	if t.dropAt >= 0 || t.drag.mode == dragMove {
		at := t.dropAt
		if t.drag.mode == dragMove {
			at = t.moveTarget(t.drag)
			if at > t.drag.clip {
				at++
			}
		}
		x := t.X(t.total)
		if at < len(t.clips) {
			x = t.X(t.clips[at].Start)
		}
		r.marker.Move(fyne.NewPos(x-1, rulerH))
		r.marker.Resize(fyne.NewSize(3, videoH+gapH+audioH))
		r.marker.Hidden = false
	} else {
		r.marker.Hidden = true
	}
	r.head.FillColor = theme.Color(theme.ColorNamePrimary)
	r.ruler.Refresh()
	r.Layout(t.Size())
	canvas.Refresh(t)
}

// drawPeaks draws the envelope of source frames [from, to) of a sound
// whose peaks span srcFrames frames.
func drawPeaks(w, h int, peaks []float32, from, to, srcFrames int, mute bool) image.Image {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	bg := color.NRGBA{0x1e, 0x24, 0x2a, 0xff}
	fg := color.NRGBA{0x14, 0xb8, 0xa6, 0xff}
	if mute {
		fg = color.NRGBA{0x55, 0x60, 0x66, 0xff}
	}
	for i := range img.Pix {
		img.Pix[i] = []uint8{bg.R, bg.G, bg.B, bg.A}[i%4]
	}
	n := len(peaks)
	if n == 0 || srcFrames <= 0 || to <= from {
		return img
	}
	mid := h / 2
	for x := 0; x < w; x++ {
		f0 := from + (to-from)*x/w
		f1 := from + (to-from)*(x+1)/w
		a, b := f0*n/srcFrames, max(f1*n/srcFrames, f0*n/srcFrames+1)
		var v float32
		for i := a; i < b && i < n; i++ {
			v = max(v, peaks[i])
		}
		half := int(v * float32(mid-1))
		for y := mid - half; y <= mid+half; y++ {
			img.SetNRGBA(x, y, fg)
		}
	}
	return img
}

func (r *timelineRenderer) Objects() []fyne.CanvasObject {
	o := []fyne.CanvasObject{r.bg, r.ruler}
	o = append(o, r.objs...)
	return append(o, r.marker, r.head)
}

func (r *timelineRenderer) Destroy() {}
