package ui

import (
	"fmt"
	"strconv"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"h3studio/ui/studio"
)

// notices is the slim message area above the panels (nothing modal): the
// newest two notices, each with its action and a close button.
type notices struct {
	w       *Window
	content *fyne.Container
	shown   string
}

func newNotices(w *Window) *notices {
	return &notices{w: w, content: container.NewVBox()}
}

func (n *notices) apply(sn studio.Snapshot) {
	ns := sn.Notices
	if len(ns) > 2 {
		ns = ns[len(ns)-2:]
	}
	key := ""
	for _, x := range ns {
		key += strconv.Itoa(x.ID) + ","
	}
	if key == n.shown {
		return
	}
	n.shown = key
	var objs []fyne.CanvasObject
	for i := len(ns) - 1; i >= 0; i-- {
		objs = append(objs, n.row(ns[i]))
	}
	n.content.Objects = objs
	n.content.Refresh()
}

func (n *notices) row(x studio.Notice) fyne.CanvasObject {
	var icon fyne.Resource
	var col fyne.ThemeColorName
	switch x.Level {
	case studio.Fail:
		icon, col = theme.ErrorIcon(), theme.ColorNameError
	case studio.Warn:
		icon, col = theme.WarningIcon(), colorWarn
	default:
		icon, col = theme.InfoIcon(), theme.ColorNamePrimary
	}
	bar := canvas.NewRectangle(theme.Color(col))
	bar.SetMinSize(fyne.NewSize(4, 10))
	bg := canvas.NewRectangle(theme.Color(colorPanel))
	bg.CornerRadius = 6
	text := widget.NewLabel(x.Text)
	text.Wrapping = fyne.TextWrapWord
	closeB := widget.NewButtonWithIcon("", theme.CancelIcon(), func() { n.w.s.Dismiss(x.ID) })
	closeB.Importance = widget.LowImportance
	right := container.NewHBox()
	if x.Action == "Undo" {
		undo := widget.NewButton("Undo", n.w.s.Compose().Undo)
		right.Add(undo)
	}
	right.Add(closeB)
	var center fyne.CanvasObject = text
	if len(x.Choices) > 0 {
		center = container.NewVBox(text, n.choiceRow(x))
	}
	row := container.NewBorder(nil, nil, container.NewHBox(bar, widget.NewIcon(icon)), right, center)
	return container.NewPadded(container.NewStack(bg, row))
}

func fmtInt(n int) string { return fmt.Sprint(n) }
