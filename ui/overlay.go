package ui

import "fyne.io/fyne/v2"

// topOverlay lays its objects over the top of the area it is given, as tall
// as they need (at most the whole area), and asks for no room of its own:
// stacked over a panel, what it shows covers the panel's top instead of
// pushing the panel down, so the controls around never move when a notice
// appears or goes.
type topOverlay struct{}

func (topOverlay) Layout(objs []fyne.CanvasObject, size fyne.Size) {
	for _, o := range objs {
		// A wrapped label's height depends on its width: size the width
		// first, then take the height it needs at that width.
		o.Resize(fyne.NewSize(size.Width, o.MinSize().Height))
		h := min(o.MinSize().Height, size.Height)
		o.Move(fyne.NewPos(0, 0))
		o.Resize(fyne.NewSize(size.Width, h))
	}
}

func (topOverlay) MinSize([]fyne.CanvasObject) fyne.Size { return fyne.NewSize(0, 0) }
