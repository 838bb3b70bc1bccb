package ui

import (
	"image/color"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/storage"

	"h3studio/ui/studio"
	"h3studio/ui/studio/fakeengine"
)

// TestDropBetweenReferences: files dropped on the reference list land
// between the rows around the drop point (the upper half of a row inserts
// before it, the lower half after it), in the order given, and the badges
// renumber; a drop elsewhere still appends.
func TestDropBetweenReferences(t *testing.T) {
	h := newHarness(t, fakeengine.Options{}, false)
	a := h.file("a.png", pngBytes(color.RGBA{220, 90, 30, 255}))
	voice := h.wav("voice.wav", 3)
	b := h.file("b.png", pngBytes(color.RGBA{30, 90, 220, 255}))
	c := h.file("c.png", pngBytes(color.RGBA{30, 220, 90, 255}))
	d := h.file("d.png", pngBytes(color.RGBA{90, 30, 220, 255}))
	uri := func(ps ...string) []fyne.URI {
		var u []fyne.URI
		for _, p := range ps {
			u = append(u, storage.NewFileURI(p))
		}
		return u
	}
	order := func(sn studio.Snapshot) []string {
		var got []string
		for _, r := range sn.Draft.References {
			got = append(got, r.Media.Path)
		}
		return got
	}
	ready := func(n int) func(studio.Snapshot) bool {
		return func(sn studio.Snapshot) bool {
			if len(sn.Draft.References) != n {
				return false
			}
			for _, r := range sn.Draft.References {
				if r.Media.State != studio.MediaReady {
					return false
				}
			}
			return len(h.w.compose.refRows) == n
		}
	}
	same := func(got, want []string) bool {
		if len(got) != len(want) {
			return false
		}
		for i := range got {
			if got[i] != want[i] {
				return false
			}
		}
		return true
	}

	h.w.HandleDrop(fyne.NewPos(700, 300), uri(a, voice))
	h.settle(ready(2))

	// The upper half of the first row: before it.
	pos, ok := h.w.ReferenceDropPoint(0, true)
	if !ok {
		t.Fatal("no first reference row")
	}
	h.w.HandleDrop(pos, uri(b))
	sn := h.settle(ready(3))
	if want := []string{b, a, voice}; !same(order(sn), want) {
		t.Fatalf("after a drop above row 1: %v, want %v", order(sn), want)
	}
	if got := h.w.compose.refRows[sn.Draft.References[0].ID].badge.Text; got != "Picture 1" {
		t.Errorf("the dropped picture's badge is %q, want Picture 1", got)
	}

	// The lower half of the second row: after it, two files in their order.
	pos, _ = h.w.ReferenceDropPoint(1, false)
	h.w.HandleDrop(pos, uri(c, d))
	sn = h.settle(ready(5))
	if want := []string{b, a, c, d, voice}; !same(order(sn), want) {
		t.Fatalf("after a drop below row 2: %v, want %v", order(sn), want)
	}
	if got := sn.Labels; len(got) != 5 || got[3] != "Picture 4" || got[4] != "Audio 1" {
		t.Errorf("labels %v", got)
	}
}
