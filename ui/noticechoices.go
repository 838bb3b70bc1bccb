package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"h3studio/ui/studio"
)

// choiceRow is a row of buttons under a notice's text, one per choice
// (studio.Offer); the studio runs what a choice does, off the UI thread.
func (n *notices) choiceRow(x studio.Notice) *fyne.Container {
	row := container.NewHBox()
	for i, c := range x.Choices {
		b := widget.NewButton(c.Label, func() {
			if !c.AsksFolder {
				n.w.s.Choose(x.ID, i, "")
				return
			}
			askFolder(n.w, c.Label, func(dir string) { n.w.s.Choose(x.ID, i, dir) })
		})
		if i == 0 {
			b.Importance = widget.HighImportance
		}
		row.Add(b)
	}
	return row
}

// askFolder asks for a folder with the file dialog and passes its path to
// done (not called when the user cancels). Tests replace it.
var askFolder = func(w *Window, title string, done func(dir string)) {
	d := dialog.NewFolderOpen(func(u fyne.ListableURI, err error) {
		if err != nil || u == nil {
			return
		}
		done(u.Path())
	}, w.win)
	d.SetTitleText(title)
	if h := homeURI(); h != nil {
		d.SetLocation(h)
	}
	d.Resize(w.dialogSize())
	d.Show()
}
