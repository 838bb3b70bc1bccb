package ui

import (
	"fmt"
	"image"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"h3studio/ui/studio"
	"h3studio/ui/studio/sequence"
	"h3studio/ui/widgets"
)

// timeline is the bottom panel: the open sequence's tracks (the Timeline
// widget in a horizontal scroll), its controls, and the export's progress.
// Space plays the whole sequence in the viewer when the timeline was the
// last thing touched (or View ▸ Play the Sequence).
type timeline struct {
	w       *Window
	tl      *studio.Timeline
	content fyne.CanvasObject

	track    *widgets.Timeline
	scroll   *container.Scroll
	names    *widget.Select
	info     *widget.Label
	undo     *widget.Button
	redo     *widget.Button
	fade     *widget.Select
	mute     *widget.Check
	extend   *widget.Button
	extRef   *widget.Check
	remove   *widget.Button
	progress *widget.ProgressBar
	cancel   *widget.Button
	expBox   *fyne.Container

	view     studio.TimelineView
	key      string // what the track shows, to rebuild only on change
	playKey  string // what the playback was built from
	active   bool   // the viewer plays the sequence
	updating bool
	seqPath  string // the sequence last shown and its edit count, to notice
	seqEdits uint64 // edits (the window's undo then walks the timeline)
}

var fadeChoices = []string{"Cut", "Crossfade ¼ s", "Crossfade ½ s", "Crossfade 1 s"}

func fadeChoice(c sequence.Clip) string {
	if c.Transition.Kind != sequence.Crossfade || c.FadeFrames() == 0 {
		return fadeChoices[0]
	}
	switch f := c.FadeFrames(); {
	case f <= 6:
		return fadeChoices[1]
	case f <= 12:
		return fadeChoices[2]
	}
	return fadeChoices[3]
}

func newTimeline(w *Window) *timeline {
	t := &timeline{w: w, tl: studio.NewTimeline(w.s)}
	t.track = widgets.NewTimeline()
	t.track.OnSeek = func(f int) { t.activate(); t.w.viewer.player.Pause(); t.w.viewer.player.Seek(f) }
	t.track.OnSelect = func(int) { t.applyControls() }
	t.track.OnMove = func(from, to int) { t.tl.Move(from, to); t.track.Select(to) }
	t.track.OnTrim = func(i, in, out int) { t.tl.Trim(i, sequence.Seconds(in), sequence.Seconds(out)) }
	t.scroll = container.NewHScroll(t.track)
	t.scroll.SetMinSize(fyne.NewSize(400, t.track.MinSize().Height))

	t.names = widget.NewSelect(nil, func(n string) {
		if t.updating {
			return
		}
		if n == "New Sequence" {
			t.tl.New()
			return
		}
		t.tl.Open(n)
	})
	t.info = subtle("")
	t.info.Wrapping = fyne.TextWrapOff
	low := func(b *widget.Button) *widget.Button { b.Importance = widget.LowImportance; return b }
	play := low(widget.NewButtonWithIcon("", theme.MediaPlayIcon(), t.togglePlay))
	t.undo = low(widget.NewButtonWithIcon("", theme.ContentUndoIcon(), t.tl.Undo))
	t.redo = low(widget.NewButtonWithIcon("", theme.ContentRedoIcon(), t.tl.Redo))
	zoomOut := low(widget.NewButtonWithIcon("", theme.ZoomOutIcon(), func() { t.zoom(0.5) }))
	zoomIn := low(widget.NewButtonWithIcon("", theme.ZoomInIcon(), func() { t.zoom(2) }))
	t.fade = widget.NewSelect(fadeChoices, func(s string) {
		i := t.track.Selected()
		if t.updating || i < 0 {
			return
		}
		secs := map[string]float64{fadeChoices[1]: 0.25, fadeChoices[2]: 0.5, fadeChoices[3]: 1}[s]
		kind := sequence.Crossfade
		if secs == 0 {
			kind = sequence.Cut
		}
		t.tl.SetTransition(i, kind, secs)
	})
	t.mute = widget.NewCheck("Mute", func(on bool) {
		if i := t.track.Selected(); !t.updating && i >= 0 {
			t.tl.SetMute(i, on)
		}
	})
	t.extend = widget.NewButtonWithIcon("Extend →", chainIcon, t.doExtend)
	t.extRef = widget.NewCheck("as reference", nil)
	t.remove = low(widget.NewButtonWithIcon("", theme.DeleteIcon(), func() {
		if i := t.track.Selected(); i >= 0 {
			t.tl.Remove(i)
			t.track.Select(-1)
		}
	}))
	sound := low(widget.NewButtonWithIcon("Sound…", theme.VolumeUpIcon(), t.chooseSound))
	export := widget.NewButtonWithIcon("Export…", theme.DownloadIcon(), w.exportSequence)
	t.progress = widget.NewProgressBar()
	t.cancel = low(widget.NewButtonWithIcon("", theme.CancelIcon(), t.tl.CancelExport))
	t.expBox = container.NewBorder(nil, nil, nil, t.cancel, t.progress)
	t.expBox.Hide()
	// two rows, so the panel is no wider than the viewer above it
	bar := container.NewHBox(heading("Timeline"), t.names, t.info, spacer(), play, t.undo, t.redo, zoomOut, zoomIn)
	clipBar := container.NewHBox(t.fade, t.mute, t.extend, t.extRef, t.remove, spacer(), sound, export)
	t.content = panel(container.NewBorder(container.NewVBox(bar, clipBar, t.expBox), nil, nil, nil, t.scroll))
	prev := w.viewer.player.OnChange
	w.viewer.player.OnChange = func() {
		if prev != nil {
			prev()
		}
		t.playerMoved()
	}
	t.apply()
	return t
}

func (t *timeline) zoom(f float32) {
	t.track.SetZoom(t.track.Zoom() * f)
	t.scroll.Refresh()
}

// activate makes the viewer play the sequence.
func (t *timeline) activate() {
	if !t.active {
		t.active = true
		t.playKey = ""
	}
	t.applyPlayback()
}

func (t *timeline) togglePlay() {
	t.activate()
	t.w.viewer.player.Toggle()
}

func (t *timeline) doExtend() {
	i := t.track.Selected()
	if i < 0 || i >= len(t.view.Spans) {
		t.w.s.Notify(studio.Warn, "Choose a clip on the timeline first.")
		return
	}
	// the frame at the playhead when it is on the clip, else its out point
	f := -1
	sp := t.view.Spans[i]
	if p := t.track.Playhead(); t.active && p >= sp.Start && p < sp.Start+sp.Frames {
		f = t.view.Seq.Clips[i].InFrame() + p - sp.Start
	}
	t.tl.Extend(i, f, t.extRef.Checked)
}

func (t *timeline) chooseSound() {
	t.w.chooseFile("Sound track under the clips", []string{".wav", ".m4a", ".aac", ".mp3", ".aif", ".aiff"}, func(p string) {
		t.tl.SetSound(p, 0)
	})
}

// key is the track's content identity.
func trackKey(v studio.TimelineView) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s|%d|", v.Path, v.Total)
	for i, c := range v.Seq.Clips {
		it := v.Items[i]
		fmt.Fprintf(&b, "%s,%d,%d,%d,%v,%s,%p;", c.Source, c.InFrame(), c.OutFrame(), c.FadeFrames(), c.Mute, it.Missing, it.Clip)
	}
	if a := v.Seq.Audio; a != nil {
		fmt.Fprintf(&b, "a:%s,%g", a.Source, a.GainDB)
	}
	return b.String()
}

func (t *timeline) apply() {
	v := t.tl.Snapshot()
	t.view = v
	if v.Path == t.seqPath && v.Edits != t.seqEdits {
		t.w.undoTimeline = true
	}
	t.seqPath, t.seqEdits = v.Path, v.Edits
	t.updating = true
	defer func() { t.updating = false }()
	opts := append(append([]string(nil), v.Names...), "New Sequence")
	if !contains(v.Names, v.Name) {
		opts = append([]string{v.Name}, opts...)
	}
	t.names.Options = opts
	t.names.SetSelected(v.Name)
	if k := trackKey(v); k != t.key {
		t.key = k
		clips := make([]widgets.TimelineClip, len(v.Items))
		for i, it := range v.Items {
			c := v.Seq.Clips[i]
			tc := widgets.TimelineClip{Title: it.Title, Start: v.Spans[i].Start, Frames: v.Spans[i].Frames, In: c.InFrame(),
				Fade: v.Spans[i].Fade, Mute: c.Mute, Missing: it.Missing, SourceFrames: t.tl.Editor().Length(c.Source)}
			if it.Clip != nil {
				for _, th := range it.Clip.Strip() {
					tc.Thumbs = append(tc.Thumbs, th)
				}
				tc.Peaks = it.Clip.Peaks
				tc.SourceFrames = it.Clip.Len()
			}
			if it.Missing != "" {
				tc.Title = it.Title + " (" + it.Missing + ")"
			}
			clips[i] = tc
		}
		t.track.SetClips(clips, v.Total)
		t.scroll.Refresh()
	}
	t.info.SetText(fmt.Sprintf("%d clips · %s", len(v.Items), widgets.FormatTime(secondsDur(v.Total))))
	setEnabled(t.undo, v.CanUndo)
	setEnabled(t.redo, v.CanRedo)
	if e := v.Export; e != nil {
		t.expBox.Show()
		if e.Total > 0 {
			t.progress.SetValue(float64(e.Done) / float64(e.Total))
		}
	} else {
		t.expBox.Hide()
	}
	t.applyControls()
	if t.active {
		t.applyPlayback()
	}
}

func (t *timeline) applyControls() {
	i := t.track.Selected()
	on := i >= 0 && i < len(t.view.Seq.Clips)
	t.updating = true
	defer func() { t.updating = false }()
	for _, o := range []fyne.Disableable{t.fade, t.mute, t.extend, t.extRef, t.remove} {
		if on {
			o.Enable()
		} else {
			o.Disable()
		}
	}
	if on {
		c := t.view.Seq.Clips[i]
		t.fade.SetSelected(fadeChoice(c))
		t.mute.SetChecked(c.Mute)
	}
}

// applyPlayback puts the sequence into the viewer's player (rebuilt only
// when the sequence or its clips changed), keeping the playhead.
func (t *timeline) applyPlayback() {
	extra := t.tl.ExtraSound()
	k := t.key + fmt.Sprintf("|%d", extra.Frames())
	if k == t.playKey {
		return
	}
	t.playKey = k
	p := t.view.Playback(extra)
	t.w.viewer.playSequence(p, "Sequence · "+t.view.Name, t.track.Playhead())
}

// handleKey applies the timeline's transport keys while the viewer plays
// the sequence: J one second back, K pause, L play.
func (t *timeline) handleKey(k fyne.KeyName) bool {
	if !t.active {
		return false
	}
	p := t.w.viewer.player
	switch k {
	case fyne.KeyJ:
		p.Step(-24)
	case fyne.KeyK:
		p.Pause()
	case fyne.KeyL:
		p.Play()
	default:
		return false
	}
	return true
}

// playerMoved follows the player's frame with the playhead.
func (t *timeline) playerMoved() {
	if t.active {
		t.track.SetPosition(t.w.viewer.player.Frame())
	}
}

// deactivate returns the viewer to takes (a take was chosen).
func (t *timeline) deactivate() { t.active = false }

func secondsDur(frames int) time.Duration {
	return time.Duration(sequence.Seconds(frames) * float64(time.Second))
}

// dropTake puts a library take (dragged from its row) on the timeline at
// the point pos of the window, when pos is over the track.
func (t *timeline) dropTake(id string, pos fyne.Position) bool {
	at, ok := t.insertAt(pos)
	t.track.SetDropMarker(-1)
	if !ok {
		return false
	}
	t.tl.AddTake(id, at)
	return true
}

// dropFiles puts dropped video files (or take folders) on the timeline.
func (t *timeline) dropFiles(paths []string, pos fyne.Position) bool {
	at, ok := t.insertAt(pos)
	if !ok {
		return false
	}
	for k, p := range paths {
		t.tl.AddFile(p, at+k)
	}
	return true
}

// dragOver shows where a take dragged from the library would land.
func (t *timeline) dragOver(pos fyne.Position) {
	if at, ok := t.insertAt(pos); ok {
		t.track.SetDropMarker(at)
	} else {
		t.track.SetDropMarker(-1)
	}
}

func (t *timeline) insertAt(pos fyne.Position) (int, bool) {
	if !t.w.hit(t.scroll, pos) {
		return 0, false
	}
	p := fyne.CurrentApp().Driver().AbsolutePositionForObject(t.track)
	return t.track.InsertIndex(pos.X - p.X), true
}

// TimelineDropPoint is a window point over the timeline's track at frame
// f (tests and scripted drops).
func (w *Window) TimelineDropPoint(f int) fyne.Position {
	p := fyne.CurrentApp().Driver().AbsolutePositionForObject(w.timeline.track)
	return p.Add(w.timeline.track.TrackPoint(f))
}

// exportSequence is File ▸ Export Sequence…: choose the MP4, then export
// in the background with progress in the timeline panel.
func (w *Window) exportSequence() {
	v := w.timeline.view
	if len(v.Items) == 0 {
		w.s.Notify(studio.Warn, "The timeline is empty: drag takes from the library onto it first.")
		return
	}
	for _, it := range v.Items {
		if it.Missing != "" {
			w.s.Notify(studio.Warn, "“"+it.Title+"” is missing ("+it.Missing+"): put it back or take it off the timeline before exporting.")
			return
		}
	}
	w.saveDialog("Export Sequence", v.Name+".mp4", []string{".mp4"}, func(p string) { w.timeline.tl.Export(p) })
}

// Timeline is the window's timeline state (tests).
func (w *Window) Timeline() *studio.Timeline { return w.timeline.tl }

// playSequence shows the sequence in the viewer: the player plays its
// frames with its mixed sound from frame at.
func (v *viewer) playSequence(p *studio.Playback, title string, at int) {
	playing := v.player.Playing()
	if v.seq == nil {
		v.takeLoop = v.player.Loop
	}
	v.seq = p
	v.player.SetFrames(p)
	v.player.Loop = false
	thumbs := make([]image.Image, 0, 16)
	for k := 0; k < 16 && p.Len() > 0; k++ {
		if f := p.Frame((2*k + 1) * p.Len() / 32); f != nil {
			thumbs = append(thumbs, studio.Scale(f, 120, 120))
		}
	}
	v.strip.SetClip(thumbs, p.Len())
	v.wave.SetPeaks(studio.Peaks(p.Audio, studio.PeakBuckets))
	if s := v.w.opts.Sound; s != nil {
		s.SetAudio(p.Audio)
	}
	v.player.SetCaption(title)
	v.player.Seek(at)
	if playing {
		v.player.Play()
	}
	v.transport()
}

func setEnabled(b *widget.Button, on bool) {
	if on {
		b.Enable()
	} else {
		b.Disable()
	}
}

// takeDrag lies over a library row: dragging it carries the row's take
// onto the timeline (a marker shows where it lands; a drop elsewhere does
// nothing). Taps pass through to the list.
type takeDrag struct {
	widget.BaseWidget
	w    *Window
	id   string
	last fyne.Position // absolute pointer position
	on   bool
}

func newTakeDrag(w *Window) *takeDrag {
	d := &takeDrag{w: w}
	d.ExtendBaseWidget(d)
	return d
}

// Dragged follows the pointer over the window.
func (d *takeDrag) Dragged(e *fyne.DragEvent) {
	if d.id == "" {
		return
	}
	d.on, d.last = true, e.AbsolutePosition
	d.w.timeline.dragOver(e.AbsolutePosition)
}

// DragEnd drops the take where the pointer is.
func (d *takeDrag) DragEnd() {
	if !d.on {
		return
	}
	d.on = false
	d.w.timeline.dropTake(d.id, d.last)
}

// CreateRenderer implements fyne.Widget: nothing is drawn.
func (d *takeDrag) CreateRenderer() fyne.WidgetRenderer {
	return widget.NewSimpleRenderer(container.NewWithoutLayout())
}
