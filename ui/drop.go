package ui

import (
	"fyne.io/fyne/v2"

	"h3studio/ui/studio"
)

// HandleDrop receives files dropped on the window (Finder drags): a drop on
// the First or Last slot fills that slot, anywhere else adds references in
// the order given. The position can be stale on some platforms, so only the
// slots are hit-tested.
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
	target := studio.DropReferences
	switch {
	case w.hit(w.compose.first, pos):
		target = studio.DropFirst
	case w.hit(w.compose.last, pos):
		target = studio.DropLast
	}
	w.s.Drop(paths, target)
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
