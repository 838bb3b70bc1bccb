package main

import (
	"io"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/app"
	"fyne.io/fyne/v2/widget"
)

// runGUI opens the studio window. (Placeholder window until the studio
// lands: see ui/.)
func runGUI(args []string, stdout, stderr io.Writer) int {
	a := app.NewWithID("studio.h3.H3Studio")
	w := a.NewWindow("H3 Studio")
	w.SetContent(widget.NewLabel("H3 Studio"))
	w.Resize(fyne.NewSize(1280, 800))
	w.ShowAndRun()
	return 0
}
