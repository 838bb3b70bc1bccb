package ui

import (
	"fmt"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"

	"h3studio/engine/media"

	"h3studio/ui/internal/uitest"
	"h3studio/ui/studio"
	"h3studio/ui/studio/fakeengine"
	"h3studio/ui/studio/sequence"
)

// timelineHarness is a window with three takes in the library.
func timelineHarness(t *testing.T) *harness {
	h := newHarness(t, fakeengine.Options{}, false)
	h.s.Compose().SetSettings(studio.DemoSettings())
	for i := 0; i < 3; i++ {
		h.s.Compose().SetPrompt(fmt.Sprintf("Take %d: waves on a beach at dusk.", i+1))
		h.settle(func(sn studio.Snapshot) bool { return sn.CanGenerate })
		if _, err := h.s.Queue().Generate(); err != nil {
			t.Fatal(err)
		}
		n := i + 1
		h.settle(func(sn studio.Snapshot) bool { return len(sn.Takes) == n })
	}
	return h
}

// settleTimeline runs work until the timeline's view satisfies cond.
func (h *harness) settleTimeline(what string, cond func(studio.TimelineView) bool) studio.TimelineView {
	h.t.Helper()
	var v studio.TimelineView
	h.settle(func(studio.Snapshot) bool {
		v = h.w.Timeline().View()
		return cond(v)
	})
	return v
}

// dragTake drags library take id's row onto the window point pos.
func (h *harness) dragTake(id string, pos fyne.Position) {
	h.t.Helper()
	l := h.w.library
	for i, it := range l.items {
		if it.header != "" || it.take.ID != id {
			continue
		}
		row := l.newRow()
		l.updateRow(i, row)
		d := row.(*fyne.Container).Objects[2].(*takeDrag)
		d.Dragged(&fyne.DragEvent{PointEvent: fyne.PointEvent{AbsolutePosition: pos.Subtract(fyne.NewPos(50, 0))}, Dragged: fyne.NewDelta(1, 0)})
		d.Dragged(&fyne.DragEvent{PointEvent: fyne.PointEvent{AbsolutePosition: pos}, Dragged: fyne.NewDelta(50, 0)})
		d.DragEnd()
		return
	}
	h.t.Fatalf("take %s is not in the library list", id)
}

// dragTrack drags on the timeline track from local point from by dx.
func dragTrack(tr interface {
	Dragged(*fyne.DragEvent)
	DragEnd()
}, from fyne.Position, dx float32) {
	steps := 4
	for k := 1; k <= steps; k++ {
		d := fyne.NewDelta(dx/float32(steps), 0)
		tr.Dragged(&fyne.DragEvent{PointEvent: fyne.PointEvent{Position: from.Add(fyne.NewPos(dx*float32(k)/float32(steps), 0))}, Dragged: d})
	}
	tr.DragEnd()
}

func clipTitles(v studio.TimelineView) string {
	var s []string
	for _, it := range v.Items {
		s = append(s, it.Title)
	}
	return strings.Join(s, ",")
}

// TestTimelineDragFromLibrary drags takes from the library rows onto the
// timeline: a drop past the last clip appends, a drop over the first
// clip's left half inserts before it; a drop outside does nothing.
func TestTimelineDragFromLibrary(t *testing.T) {
	h := timelineHarness(t)
	sn := h.w.Snapshot()
	t1, t2, t3 := sn.Takes[2], sn.Takes[1], sn.Takes[0] // oldest first
	h.dragTake(t1.ID, h.w.TimelineDropPoint(0))
	v := h.settleTimeline("one clip", func(v studio.TimelineView) bool { return len(v.Items) == 1 && v.Items[0].Clip != nil })
	h.dragTake(t2.ID, h.w.TimelineDropPoint(v.Total+20))
	v = h.settleTimeline("two clips", func(v studio.TimelineView) bool { return len(v.Items) == 2 && v.Items[1].Clip != nil })
	h.dragTake(t3.ID, h.w.TimelineDropPoint(2)) // left half of the first clip
	v = h.settleTimeline("three clips", func(v studio.TimelineView) bool { return len(v.Items) == 3 && v.Items[0].Clip != nil })
	want := strings.Join([]string{t3.Meta.Title, t1.Meta.Title, t2.Meta.Title}, ",")
	if got := clipTitles(v); got != want {
		t.Fatalf("order %s, want %s", got, want)
	}
	if v.Total != t1.Meta.Frames+t2.Meta.Frames+t3.Meta.Frames {
		t.Errorf("total %d frames", v.Total)
	}
	// the strips are as long as the clips
	tr := h.w.timeline.track
	if cs := tr.Clips(); len(cs) != 3 || cs[1].Start != t3.Meta.Frames || len(cs[1].Thumbs) == 0 || len(cs[1].Peaks) == 0 {
		t.Errorf("track clips %+v", cs)
	}
	// a drop on the viewer is not a timeline drop
	h.dragTake(t1.ID, fyne.NewPos(700, 200))
	h.settle(func(studio.Snapshot) bool { return true })
	if n := len(h.w.Timeline().View().Items); n != 3 {
		t.Errorf("a drop outside the timeline added a clip: %d", n)
	}
}

// TestTimelineReorderTrimScrub drags a clip past the next one, trims the
// first clip's edges by whole frames, scrubs on the ruler (the viewer
// plays the sequence there), plays with Space, and undoes with ⌘Z.
func TestTimelineReorderTrimScrub(t *testing.T) {
	h := timelineHarness(t)
	sn := h.w.Snapshot()
	tl := h.w.Timeline()
	for i := 2; i >= 0; i-- {
		tl.AddTake(sn.Takes[i].ID, -1)
	}
	v := h.settleTimeline("three loaded clips", func(v studio.TimelineView) bool {
		return len(v.Items) == 3 && v.Items[0].Clip != nil && v.Items[1].Clip != nil && v.Items[2].Clip != nil
	})
	a, b, c := v.Items[0].Title, v.Items[1].Title, v.Items[2].Title
	tr := h.w.timeline.track
	n := v.Spans[0].Frames // 22 frames each with the demo settings

	// reorder: drag clip 0 by its middle past the middle of clip 1
	dragTrack(tr, tr.ClipPoint(0, 0.5), tr.X(n)+tr.X(2))
	v = h.settleTimeline("reordered", func(v studio.TimelineView) bool { return clipTitles(v) == b+","+a+","+c })

	// trim clip 0's in edge 5 frames right, its out edge 3 frames left
	dragTrack(tr, tr.ClipPoint(0, 0).Add(fyne.NewPos(2, 0)), tr.X(5))
	v = h.settleTimeline("trimmed in", func(v studio.TimelineView) bool { return v.Seq.Clips[0].InFrame() == 5 })
	dragTrack(tr, tr.ClipPoint(0, 1).Subtract(fyne.NewPos(2, 0)), -tr.X(3))
	v = h.settleTimeline("trimmed out", func(v studio.TimelineView) bool { return v.Seq.Clips[0].OutFrame() == n-3 })
	if v.Seq.Clips[0].In != 5.0/24 || v.Total != 3*n-8 || v.Spans[1].Start != n-8 {
		t.Errorf("after trims: clip %+v, total %d, spans %v", v.Seq.Clips[0], v.Total, v.Spans)
	}
	// an out edge dragged past the source's end stops there
	dragTrack(tr, tr.ClipPoint(0, 1).Subtract(fyne.NewPos(2, 0)), tr.X(40))
	v = h.settleTimeline("out at the end", func(v studio.TimelineView) bool { return v.Seq.Clips[0].OutFrame() == n })

	// scrub: a tap on the ruler shows that frame of the sequence in the viewer
	p := h.w.Player()
	tr.Tapped(&fyne.PointEvent{Position: tr.RulerPoint(30)})
	h.settle(func(studio.Snapshot) bool { return true })
	if p.Len() != v.Total || p.Frame() != 30 || tr.Playhead() != 30 {
		t.Fatalf("after a tap at frame 30: player %d/%d, playhead %d", p.Frame(), p.Len(), tr.Playhead())
	}
	dragTrack(tr, tr.RulerPoint(30), tr.X(10))
	if p.Frame() != 40 {
		t.Errorf("scrubbed to %d, want 40", p.Frame())
	}
	// the sequence's sound is the player's: as long as the frames
	if seq := h.w.viewer.seq; seq == nil || seq.Audio.Frames() != v.Total*32000/24 {
		t.Errorf("sequence sound: %v", seq)
	}
	// ← → step frames, Space plays the whole sequence, K pauses, J goes back 1 s
	h.w.typedKey(&fyne.KeyEvent{Name: fyne.KeyRight})
	if p.Frame() != 41 {
		t.Errorf("→: frame %d", p.Frame())
	}
	h.w.typedKey(&fyne.KeyEvent{Name: fyne.KeySpace})
	if !p.Playing() || p.Len() != v.Total {
		t.Error("Space did not play the sequence")
	}
	h.w.typedKey(&fyne.KeyEvent{Name: fyne.KeyK})
	h.w.typedKey(&fyne.KeyEvent{Name: fyne.KeyJ})
	if p.Playing() || p.Frame() != 41-24 {
		t.Errorf("K, J: playing %v frame %d", p.Playing(), p.Frame())
	}
	// undo (Edit ▸ Undo, ⌘Z) the last trims and the reorder, then redo one;
	// with the prompt focused, ⌘Z is the prompt's
	h.w.Fyne().Canvas().Focus(h.w.compose.prompt)
	h.w.undoEdit()
	if v := h.w.Timeline().View(); v.Seq.Clips[0].OutFrame() != n {
		t.Error("⌘Z in the prompt undid a timeline edit")
	}
	h.w.Fyne().Canvas().Unfocus()
	h.w.undoEdit()
	h.w.undoEdit()
	tl.Undo()
	v = h.settleTimeline("undone", func(v studio.TimelineView) bool {
		return v.Seq.Clips[0].InFrame() == 0 && clipTitles(v) == b+","+a+","+c
	})
	tl.Undo()
	h.settleTimeline("reorder undone", func(v studio.TimelineView) bool { return clipTitles(v) == a+","+b+","+c })
	tl.Redo()
	h.settleTimeline("redone", func(v studio.TimelineView) bool { return clipTitles(v) == b+","+a+","+c })
	// choosing a take in the library returns the viewer to takes
	h.s.Takes().Show(sn.Takes[0].ID)
	h.settle(func(sn studio.Snapshot) bool { return sn.Viewer.Clip != nil && h.w.viewer.seq == nil })
}

// TestDocShotsTimeline renders the timeline for docs/ui.md (see
// TestDocShots): H3_DOC_SHOTS=DIR go test -run DocShotsTimeline ./ui
func TestDocShotsTimeline(t *testing.T) {
	dir := os.Getenv("H3_DOC_SHOTS")
	if dir == "" {
		t.Skip("docs: set H3_DOC_SHOTS=DIR to render the documentation screenshots")
	}
	h := timelineHarness(t)
	sn := h.w.Snapshot()
	tl := h.w.Timeline()
	for i := 2; i >= 0; i-- {
		tl.AddTake(sn.Takes[i].ID, -1)
	}
	h.settleTimeline("three loaded clips", func(v studio.TimelineView) bool {
		return len(v.Items) == 3 && v.Items[0].Clip != nil && v.Items[1].Clip != nil && v.Items[2].Clip != nil
	})
	tl.Trim(0, 2.0/24, 20.0/24)
	tl.SetTransition(0, sequence.Crossfade, 0.25)
	tl.SetMute(2, true)
	h.settleTimeline("edited", func(v studio.TimelineView) bool { return v.Seq.Clips[2].Mute })
	tr := h.w.timeline.track
	tr.SetZoom(8)
	tr.Select(1)
	h.w.timeline.applyControls()
	tr.Tapped(&fyne.PointEvent{Position: tr.RulerPoint(16)})
	h.settle(func(studio.Snapshot) bool { return true })
	win := h.w.Fyne()
	win.Resize(fyne.NewSize(1399, 859))
	win.Resize(fyne.NewSize(1400, 860))
	f, err := os.Create(filepath.Join(dir, "timeline.png"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := png.Encode(f, win.Canvas().Capture()); err != nil {
		t.Fatal(err)
	}
}

// fakeSound records what the sound output was given.
type fakeSound struct {
	audio   media.Audio
	starts  int
	playing bool
}

func (f *fakeSound) Start(time.Duration)             { f.starts++; f.playing = true }
func (f *fakeSound) Stop()                           { f.playing = false }
func (f *fakeSound) Position() (time.Duration, bool) { return 0, false }
func (f *fakeSound) SetAudio(a media.Audio)          { f.audio = a }
func (f *fakeSound) Notice() string                  { return "" }

// TestSeedGridAndAB generates three seeds through the window: the grid's
// cells fill as the takes finish, play the same frame in step, and put
// their take on the timeline; the A/B view shows A left of the line and B
// right of it and plays the sound of the side under the pointer.
func TestSeedGridAndAB(t *testing.T) {
	h := newHarness(t, fakeengine.Options{}, false)
	snd := &fakeSound{}
	h.w.opts.Sound = snd
	h.s.Compose().SetSettings(studio.DemoSettings())
	h.s.Compose().SetPrompt("Waves on a beach at dusk.")
	h.settle(func(sn studio.Snapshot) bool { return sn.CanGenerate })
	g := h.w.GenerateSeeds(3)
	if g == nil {
		t.Fatal("no grid")
	}
	h.settle(func(sn studio.Snapshot) bool {
		for _, c := range g.cells {
			if c.clip == nil {
				return false
			}
		}
		return true
	})
	if got := g.status.Text; got != "3 of 3 takes ready" {
		t.Errorf("status %q", got)
	}
	seeds := map[string]bool{}
	for _, c := range g.cells {
		seeds[c.label.Text] = true
	}
	if len(seeds) != 3 {
		t.Errorf("cells do not show three seeds: %v", seeds)
	}
	// one clock: every cell on the same frame
	g.toggle()
	g.Tick(g.start.Add(500 * time.Millisecond))
	for k, c := range g.cells {
		if c.player.Frame() != 12 {
			t.Errorf("cell %d at frame %d, want 12", k, c.player.Frame())
		}
	}
	g.stop()
	g.cells[1].use.OnTapped()
	v := h.settleTimeline("the chosen take on the timeline", func(v studio.TimelineView) bool { return len(v.Items) == 1 })
	if v.Seq.Clips[0].Source != "../../"+g.cells[1].take {
		t.Errorf("timeline has %s, chose %s", v.Seq.Clips[0].Source, g.cells[1].take)
	}

	// A/B of cells 0 and 2
	a, b := g.cells[0], g.cells[2]
	ab := h.w.showAB(a.take, a.clip, b.take, b.clip)
	ab.player.Seek(5)
	img := ab.wipe.Draw(100, 50)
	fa, fb := a.clip.Frame(5), b.clip.Frame(5)
	ra, rb := fa.Bounds(), fb.Bounds()
	if img.At(10, 25) != fa.At(ra.Min.X+10*ra.Dx()/100, ra.Min.Y+25*ra.Dy()/50) || img.At(90, 25) != fb.At(rb.Min.X+90*rb.Dx()/100, rb.Min.Y+25*rb.Dy()/50) {
		t.Error("the wipe does not show A left and B right of the line")
	}
	if snd.audio.Frames() != a.clip.Audio.Frames() || &snd.audio.Samples[0] != &a.clip.Audio.Samples[0] {
		t.Error("the A/B view does not start with A's sound")
	}
	ab.wipe.Resize(fyne.NewSize(400, 200))
	ab.player.Play()
	ab.wipe.MouseMoved(&desktop.MouseEvent{PointEvent: fyne.PointEvent{Position: fyne.NewPos(350, 100)}})
	if &snd.audio.Samples[0] != &b.clip.Audio.Samples[0] || !snd.playing {
		t.Error("the pointer on B's side does not play B's sound")
	}
	ab.wipe.Dragged(&fyne.DragEvent{PointEvent: fyne.PointEvent{Position: fyne.NewPos(100, 100)}})
	if s := ab.wipe.Split(); s != 0.25 {
		t.Errorf("split %v after a drag to a quarter", s)
	}
	ab.wipe.MouseMoved(&desktop.MouseEvent{PointEvent: fyne.PointEvent{Position: fyne.NewPos(50, 100)}})
	if &snd.audio.Samples[0] != &a.clip.Audio.Samples[0] {
		t.Error("the pointer back on A's side does not play A's sound")
	}
	ab.player.Pause()
}

// TestTimelineDropVideo drops a real MP4 from the Finder onto the
// timeline: it becomes a clip of its whole length, with thumbnails and
// its sound's waveform, and the reference list is left alone.
func TestTimelineDropVideo(t *testing.T) {
	uitest.NeedTools(t, "ffmpeg")
	h := newHarness(t, fakeengine.Options{}, false)
	clip := filepath.Join(h.dir, "walk.mp4")
	writeMP4(t, clip, 60) // 2.5 s
	h.w.HandleDrop(h.w.TimelineDropPoint(0), uris(clip))
	v := h.settleTimeline("the dropped video", func(v studio.TimelineView) bool { return len(v.Items) == 1 && v.Items[0].Clip != nil })
	if v.Total != 60 || v.Seq.Clips[0].Title != "walk" || !filepath.IsAbs(v.Seq.Clips[0].Source) && !strings.HasSuffix(v.Seq.Clips[0].Source, "walk.mp4") {
		t.Errorf("clip %+v, total %d", v.Seq.Clips[0], v.Total)
	}
	if cs := h.w.timeline.track.Clips(); len(cs[0].Thumbs) == 0 || len(cs[0].Peaks) == 0 {
		t.Error("the dropped video has no strip or waveform")
	}
	if n := len(h.w.Snapshot().Draft.References); n != 0 {
		t.Errorf("a drop on the timeline added %d references", n)
	}
}

// press delivers a shortcut as the desktop driver does: a main-menu item
// with that shortcut first, else the focused field, else the window.
func (h *harness) press(sc fyne.Shortcut) {
	h.t.Helper()
	var inMenu func(items []*fyne.MenuItem) bool
	inMenu = func(items []*fyne.MenuItem) bool {
		for _, it := range items {
			if it.Shortcut != nil && it.Shortcut.ShortcutName() == sc.ShortcutName() && it.Action != nil {
				it.Action()
				return true
			}
			if it.ChildMenu != nil && inMenu(it.ChildMenu.Items) {
				return true
			}
		}
		return false
	}
	if m := h.w.Fyne().MainMenu(); m != nil {
		for _, menu := range m.Items {
			if inMenu(menu.Items) {
				return
			}
		}
	}
	if f, ok := h.w.Fyne().Canvas().Focused().(fyne.Shortcutable); ok {
		f.TypedShortcut(sc)
		return
	}
	c, ok := h.w.Fyne().Canvas().(fyne.Shortcutable)
	if !ok {
		h.t.Fatal("the window's canvas takes no shortcuts")
	}
	c.TypedShortcut(sc)
}

// TestUndoKeysWalkTheLastEditedHistory: with no text field focused, ⌘Z and
// ⇧⌘Z (Edit ▸ Undo and Redo) step the history edited last: a reference
// removed with its × comes back with ⌘Z, then a timeline edit is undone by
// the next ⌘Z without touching the draft, and a draft change after it is
// again what ⌘Z undoes.
func TestUndoKeysWalkTheLastEditedHistory(t *testing.T) {
	h := timelineHarness(t)
	undo, redo := &fyne.ShortcutUndo{}, &desktop.CustomShortcut{KeyName: fyne.KeyZ, Modifier: fyne.KeyModifierShortcutDefault | fyne.KeyModifierShift}
	refs := func(n int) func(studio.Snapshot) bool {
		return func(sn studio.Snapshot) bool { return len(sn.Draft.References) == n }
	}
	tl := h.w.Timeline()
	tl.AddTake(h.w.Snapshot().Takes[0].ID, -1)
	h.settleTimeline("one clip", func(v studio.TimelineView) bool { return len(v.Items) == 1 })

	h.s.Compose().AddReferences([]string{h.file("a.png", pngBytes(color.RGBA{200, 0, 0, 255}))})
	sn := h.settle(refs(1))
	h.s.Compose().RemoveReference(sn.Draft.References[0].ID) // the reference's ×
	h.settle(refs(0))
	h.w.Fyne().Canvas().Unfocus()
	h.press(undo)
	h.settle(refs(1))
	h.press(redo)
	h.settle(refs(0))
	if n := len(tl.View().Items); n != 1 {
		t.Fatalf("⌘Z/⇧⌘Z on the draft changed the timeline: %d clips", n)
	}

	tl.AddTake(h.w.Snapshot().Takes[1].ID, -1)
	h.settleTimeline("two clips", func(v studio.TimelineView) bool { return len(v.Items) == 2 })
	h.press(undo)
	h.settleTimeline("the timeline's edit undone", func(v studio.TimelineView) bool { return len(v.Items) == 1 })
	if n := len(h.w.Snapshot().Draft.References); n != 0 {
		t.Errorf("⌘Z after a timeline edit changed the draft: %d references", n)
	}
	h.press(redo)
	h.settleTimeline("the timeline's edit redone", func(v studio.TimelineView) bool { return len(v.Items) == 2 })

	h.s.Compose().SetSeed(4242)
	h.settle(func(sn studio.Snapshot) bool { return sn.Draft.Settings.Seed == 4242 })
	h.press(undo)
	h.settle(func(sn studio.Snapshot) bool { return sn.Draft.Settings.Seed != 4242 })
	if n := len(tl.View().Items); n != 2 {
		t.Errorf("⌘Z after a draft change undid the timeline: %d clips", n)
	}
}
