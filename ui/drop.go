package ui

import (
	"fyne.io/fyne/v2"

	"h3studio/ui/studio"
)

// HandleDrop receives files dropped on the window (Finder drags): a drop on
// the First or Last slot fills that slot; a drop on the reference list
// inserts the files, in the order given, between the rows around the drop
// point; a drop on the timeline puts videos there between the clips around
// the drop point; anywhere else adds them at the end of the list.
func (w *Window) HandleDrop(pos fyne.Position, uris []fyne.URI) {
	var paths []string
	for _, u := range uris {
		if u.Scheme() != "file" {
			w.s.Notify(studio.Warn, u.String()+" is not a file on this Mac; drop files from Finder.")
			continue
		}
		paths = append(paths, u.Path())
	}
	if len(paths) == 0 {
		return
	}
	if w.timeline.dropFiles(paths, pos) {
		return
	}
	switch {
	case w.hit(w.compose.first, pos):
		w.s.Compose().Drop(paths, studio.DropFirst)
	case w.hit(w.compose.last, pos):
		w.s.Compose().Drop(paths, studio.DropLast)
	default:
		if at, ok := w.compose.insertIndex(pos); ok {
			w.s.Compose().DropReferencesAt(paths, at)
		} else {
			w.s.Compose().Drop(paths, studio.DropReferences)
		}
	}
}

// insertIndex is where files dropped at pos join the reference list: after
// every row whose middle lies above it. ok is false when pos is not on the
// rows (the band from the top of the first to the bottom of the last),
// where a drop appends.
func (c *compose) insertIndex(pos fyne.Position) (at int, ok bool) {
	d := fyne.CurrentApp().Driver()
	var top, bottom float32
	for _, r := range c.refRows {
		if !r.box.Visible() {
			continue
		}
		p, s := d.AbsolutePositionForObject(r.box), r.box.Size()
		if pos.X < p.X || pos.X >= p.X+s.Width {
			return 0, false
		}
		if !ok || p.Y < top {
			top = p.Y
		}
		if !ok || p.Y+s.Height > bottom {
			bottom = p.Y + s.Height
		}
		ok = true
		if p.Y+s.Height/2 < pos.Y {
			at = max(at, r.index+1)
		}
	}
	if !ok || pos.Y < top || pos.Y >= bottom {
		return 0, false
	}
	return at, true
}

// ReferenceDropPoint is a point on reference row i (in list order), in its
// upper half when above is true, else in its lower half: where a drop
// inserts before or after that row. It is for tests and scripted drops; ok
// is false when there is no such row.
func (w *Window) ReferenceDropPoint(i int, above bool) (pos fyne.Position, ok bool) {
	for _, r := range w.compose.refRows {
		if r.index != i {
			continue
		}
		p := fyne.CurrentApp().Driver().AbsolutePositionForObject(r.box)
		s := r.box.Size()
		dy := s.Height * 3 / 4
		if above {
			dy = s.Height / 4
		}
		return p.Add(fyne.NewPos(s.Width/2, dy)), true
	}
	return fyne.Position{}, false
}

// hit reports whether a canvas position lies on an object.
func (w *Window) hit(o fyne.CanvasObject, pos fyne.Position) bool {
	if !o.Visible() {
		return false
	}
	p := fyne.CurrentApp().Driver().AbsolutePositionForObject(o)
	s := o.Size()
	return pos.X >= p.X && pos.Y >= p.Y && pos.X < p.X+s.Width && pos.Y < p.Y+s.Height
}

// DropPoint is the centre of a slot, for tests and scripted drops.
func (w *Window) DropPoint(slot studio.Slot) fyne.Position {
	o := w.compose.first
	if slot == studio.LastSlot {
		o = w.compose.last
	}
	p := fyne.CurrentApp().Driver().AbsolutePositionForObject(o)
	return p.Add(fyne.NewPos(o.Size().Width/2, o.Size().Height/2))
}
