package ui

import (
	"image/color"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"h3studio/engine"
	"h3studio/ui/studio"
)

// statusBar is the bottom line: model, device, memory mode, predicted peak,
// and the studio's state.
type statusBar struct {
	w       *Window
	content fyne.CanvasObject
	model   *widget.Label
	device  *widget.Label
	memory  *widget.Label
	peak    *widget.Label
	choose  *widget.Button
	dot     *canvas.Circle
	peakSep *widget.Label
	state   *widget.Label
}

func newStatusBar(w *Window) *statusBar {
	b := &statusBar{w: w}
	mk := func() *widget.Label {
		l := widget.NewLabel("")
		l.SizeName = theme.SizeNameCaptionText
		l.Truncation = fyne.TextTruncateEllipsis
		return l
	}
	b.model, b.device, b.memory, b.peak, b.state = mk(), mk(), mk(), mk(), mk()
	b.model.TextStyle.Bold = true
	b.model.Truncation = fyne.TextTruncateOff
	b.state.Truncation = fyne.TextTruncateOff
	b.peak.Truncation = fyne.TextTruncateOff
	b.device.Truncation = fyne.TextTruncateOff
	b.memory.Truncation = fyne.TextTruncateOff
	b.choose = widget.NewButtonWithIcon("Choose Model Folder…", theme.FolderOpenIcon(), w.chooseModel)
	b.choose.Importance = widget.LowImportance
	b.dot = canvas.NewCircle(color.NRGBA{0x88, 0x88, 0x88, 0xff})
	dot := container.NewGridWrap(fyne.NewSize(9, 9), b.dot)
	sep := func() *widget.Label {
		l := widget.NewLabel("·")
		l.Importance = widget.LowImportance
		return l
	}
	b.peakSep = sep()
	b.content = container.NewPadded(container.NewHBox(b.model, sep(), b.device, sep(), b.memory, b.peakSep, b.peak, spacer(), b.choose, container.NewCenter(dot), b.state))
	return b
}

func (b *statusBar) apply(sn studio.Snapshot) {
	m := sn.Model
	name := m.Info.Name
	if name == "" {
		name = "No model"
	}
	b.model.SetText("Model: " + name)
	b.device.SetText(sn.Device)
	mode := sn.Draft.Settings.Memory
	if sn.Plan != nil && sn.Plan.Memory != "" && mode == engine.MemoryAuto {
		b.memory.SetText("Memory mode: automatic (" + string(sn.Plan.Memory) + ")")
	} else if mode == engine.MemoryAuto {
		b.memory.SetText("Memory mode: automatic")
	} else {
		b.memory.SetText("Memory mode: " + string(mode))
	}
	if sn.Plan != nil && sn.Plan.PeakBytes > 0 {
		b.peak.SetText("Predicted peak " + fmtBytes(sn.Plan.PeakBytes))
		b.peakSep.Show()
	} else {
		b.peak.SetText("")
		b.peakSep.Hide()
	}
	if m.Info.Demo || !m.Ready {
		b.choose.Show()
	} else {
		b.choose.Hide()
	}
	var c color.Color
	var s string
	switch {
	case sn.Running != nil:
		c, s = theme.Color(theme.ColorNamePrimary), "generating"
		if sn.Queued > 0 {
			s += " · " + plural(sn.Queued, "queued")
		}
	case m.Loading:
		c, s = theme.Color(colorWarn), "checking the model"
	case m.Ready:
		c, s = theme.Color(theme.ColorNameSuccess), "ready"
	default:
		c, s = theme.Color(theme.ColorNameError), "no usable model"
	}
	if m.Info.Engine != "" {
		s += " · " + m.Info.Engine
	}
	b.dot.FillColor = c
	b.dot.Refresh()
	b.state.SetText(s)
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return itoa(n) + " " + what
}

func itoa(n int) string {
	return fmtInt(n)
}
