package ui

import (
	"fmt"
	"slices"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"h3studio/ui/studio"
)

// loraPanel is Compose's LoRA library and Turbo toggle. Its state lives in
// studio (Settings.LoRAs, Settings.Turbo); this only draws it and forwards
// the user's changes.
type loraPanel struct {
	w         *Window
	turbo     *widget.Select
	turboNote *widget.Label
	list      *fyne.Container
	hint      *widget.Label
	add       *widget.Button
	shown     []studio.LoRAChoice // what the rows show, to rebuild only on change
	updating  bool
}

func turboLabel(n int) string {
	if n == 0 {
		return "Off"
	}
	return fmt.Sprintf("Turbo · %d passes", n)
}

func newLoRAPanel(w *Window) *loraPanel {
	p := &loraPanel{w: w, list: container.NewVBox()}
	var labels []string
	for _, n := range studio.TurboChoices {
		labels = append(labels, turboLabel(n))
	}
	p.turbo = widget.NewSelect(labels, func(l string) {
		if p.updating {
			return
		}
		for _, n := range studio.TurboChoices {
			if turboLabel(n) == l {
				w.s.Compose().SetTurbo(n)
			}
		}
	})
	p.turboNote = subtle("")
	p.hint = subtle("Drop a LoRA (.safetensors) here or anywhere in the window: style LoRAs and the distilled Turbo LoRAs for 4–8 passes.")
	p.add = widget.NewButtonWithIcon("Add…", theme.ContentAddIcon(), func() {
		w.chooseFile("Add a LoRA", []string{".safetensors"}, func(path string) { w.s.Compose().AddLoRAs([]string{path}) })
	})
	p.add.Importance = widget.LowImportance
	return p
}

// row draws one library entry: on/off, name, strength slider, remove.
func (p *loraPanel) row(l studio.LoRAChoice) fyne.CanvasObject {
	s := p.w.s
	on := widget.NewCheck(l.Name(), func(v bool) {
		if !p.updating {
			s.Compose().SetLoRAOn(l.Path, v)
		}
	})
	on.SetChecked(l.On)
	value := widget.NewLabel(fmt.Sprintf("%.2f", l.Strength))
	slider := widget.NewSlider(studio.MinLoRAStrength, studio.MaxLoRAStrength)
	slider.Step = 0.05
	slider.SetValue(l.Strength)
	slider.OnChanged = func(v float64) { value.SetText(fmt.Sprintf("%.2f", v)) }
	slider.OnChangeEnded = func(v float64) {
		if !p.updating {
			s.Compose().SetLoRAStrength(l.Path, v)
		}
	}
	remove := widget.NewButtonWithIcon("", theme.ContentRemoveIcon(), func() { s.Compose().RemoveLoRA(l.Path) })
	remove.Importance = widget.LowImportance
	detail := l.Summary
	if l.Problem != "" {
		detail = "can't be used: " + l.Problem
	}
	return container.NewVBox(
		container.NewBorder(nil, nil, on, container.NewHBox(value, remove), slider),
		subtle(detail),
	)
}

// apply shows the snapshot's library and Turbo setting.
func (p *loraPanel) apply(sn studio.Snapshot) {
	p.updating = true
	defer func() { p.updating = false }()
	st := sn.Draft.Settings
	p.turbo.SetSelected(turboLabel(st.Turbo))
	note := studio.TurboNote(st)
	if st.Turbo != 0 && sn.Plan != nil && sn.Plan.Estimate > 0 {
		note += " About " + fmtDuration(sn.Plan.Estimate) + " here, the LoRAs' extra work included."
	}
	p.turboNote.SetText(note)
	if slices.Equal(p.shown, st.LoRAs) {
		return
	}
	p.shown = append([]studio.LoRAChoice(nil), st.LoRAs...)
	p.list.RemoveAll()
	for _, l := range st.LoRAs {
		p.list.Add(p.row(l))
	}
	if len(st.LoRAs) == 0 {
		p.list.Add(p.hint)
	}
	p.list.Refresh()
}
