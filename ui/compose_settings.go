package ui

import (
	"fmt"
	"strconv"
	"strings"

	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"h3studio/engine"
	"h3studio/ui/studio"
)

// The compose panel's settings: canvas, length, quality, seed, memory,
// reference size and the Advanced speed controls.

// memoryMode is one choice of the Memory select.
type memoryMode struct {
	mode  engine.MemoryMode
	label string
}

var memoryModes = []memoryMode{
	{engine.MemoryAuto, "Automatic"},
	{engine.MemoryResident, "Resident — fastest, most memory"},
	{engine.MemoryResidentInt8, "Resident, 8-bit weights"},
	{engine.MemoryResidentInt4, "Resident, 4-bit weights — least resident memory"},
	{engine.MemoryStreaming, "Streaming — least memory"},
	{engine.MemoryStreamingInt8, "Streaming, 8-bit weights"},
	{engine.MemoryStreamingInt4, "Streaming, 4-bit weights — least read per step"},
}

// newSettings makes the settings and the Advanced section and returns the
// settings form.
func (c *compose) newSettings() *widget.Form {
	w, s := c.w, c.w.s
	c.canvasSel = choiceSelect(c, studio.Canvases, func(cv studio.Canvas) string { return cv.Label }, func(cv studio.Canvas) { s.Compose().SetCanvas(cv.ID) })
	var lengths []string
	for _, n := range studio.Lengths() {
		lengths = append(lengths, studio.FormatLength(n))
	}
	// The length offers the legal lengths and accepts a typed one: "5",
	// "5 s" or "120 frames" become the next legal length, shown as
	// "5.17 s (124 frames)".
	c.lengthSel = widget.NewSelectEntry(lengths)
	c.lengthSel.SetPlaceHolder("seconds, or frames")
	setLength := func(t string) {
		if c.updating {
			return
		}
		if n, ok := parseLength(t); ok {
			s.Compose().SetFrames(n)
			if t != studio.FormatLength(n) {
				c.lengthSel.SetText(studio.FormatLength(n))
			}
		}
	}
	c.lengthSel.OnSubmitted = setLength
	c.lengthSel.OnChanged = func(t string) {
		if strings.HasSuffix(t, " frames)") { // picked from the list
			setLength(t)
		}
	}
	c.qualitySel = choiceSelect(c, studio.Qualities, func(q studio.Quality) string { return q.Name }, func(q studio.Quality) { s.Compose().SetQuality(q.Preset) })
	c.qualityNote = subtle("")
	c.seed = widget.NewEntry()
	c.seed.OnChanged = func(t string) {
		if c.updating {
			return
		}
		if v, err := strconv.ParseUint(strings.TrimSpace(t), 10, 64); err == nil {
			s.Compose().SetSeed(v)
		}
	}
	c.dice = widget.NewButtonWithIcon("", diceIcon, func() { s.Compose().RollSeed() })
	c.dice.Importance = widget.LowImportance
	c.memorySel = choiceSelect(c, memoryModes, func(m memoryMode) string { return m.label }, func(m memoryMode) { s.Compose().SetMemory(m.mode) })
	c.memQualitySel = choiceSelect(c, studio.MemoryQualities, func(q studio.MemoryQuality) string { return q.Label }, func(q studio.MemoryQuality) { s.Compose().SetMemoryQuality(q.Floor) })
	c.memoryNote = subtle("")

	// Advanced.
	c.steps = widget.NewEntry()
	c.steps.OnChanged = c.speedSetter(func(sp *studio.Speed, v int) { sp.Steps = v })
	c.reuse = widget.NewSelect(rangeOptions(studio.ReuseRange), c.speedSetter(func(sp *studio.Speed, v int) { sp.Reuse = v }))
	c.layers = widget.NewSelect(rangeOptions(studio.LayersRange), c.speedSetter(func(sp *studio.Speed, v int) { sp.Layers = v }))
	c.coreReuse = widget.NewSelect(rangeOptions(studio.CoreReuseRange), c.speedSetter(func(sp *studio.Speed, v int) { sp.CoreReuse = v }))
	c.tokenRed = widget.NewCheck("Token reduction", func(on bool) {
		if !c.updating {
			sp := w.snap.Draft.Settings.Speed
			sp.TokenReduction = on
			s.Compose().SetSpeed(sp)
		}
	})
	c.render = widget.NewSelect(nil, func(l string) {
		if c.updating {
			return
		}
		var rw, rh int
		if _, err := fmt.Sscanf(l, "%d×%d", &rw, &rh); err != nil || (rw == w.snap.Draft.Settings.Width && rh == w.snap.Draft.Settings.Height) {
			rw, rh = 0, 0
			sp := w.snap.Draft.Settings.Speed
			sp.RenderScale = 1
			s.Compose().SetSpeed(sp)
		}
		s.Compose().SetRenderSize(rw, rh)
	})
	c.previews = widget.NewCheck("Show a preview frame after every step", func(on bool) {
		if !c.updating {
			s.Compose().SetPreviewFrames(on)
		}
	})
	c.advNote = subtle("")
	reset := widget.NewButton("Reset to preset", func() { s.Compose().SetQuality(w.snap.Draft.Settings.Quality) })
	reset.Importance = widget.LowImportance
	adv := widget.NewForm(
		widget.NewFormItem("Steps", c.steps),
		widget.NewFormItem("Reuse", c.reuse),
		widget.NewFormItem("Layers", c.layers),
		widget.NewFormItem("Core reuse", c.coreReuse),
		widget.NewFormItem("Render size", c.render),
		widget.NewFormItem("", c.tokenRed),
		widget.NewFormItem("", c.previews),
	)
	c.advanced = widget.NewAccordion(widget.NewAccordionItem("Advanced", container.NewVBox(adv, c.advNote, container.NewHBox(spacer(), reset))))
	c.settingsMsgs = container.NewVBox()
	c.refSize = newRefSizeControl(c)

	return widget.NewForm(
		widget.NewFormItem("Canvas", c.canvasSel),
		widget.NewFormItem("Length", c.lengthSel),
		widget.NewFormItem("Quality", container.NewVBox(c.qualitySel, c.qualityNote)),
		widget.NewFormItem("Turbo", container.NewVBox(c.loras.turbo, c.loras.turboNote)),
		widget.NewFormItem("Seed", container.NewBorder(nil, nil, nil, c.dice, c.seed)),
		widget.NewFormItem("Memory", container.NewVBox(c.memorySel, c.memQualitySel, c.memoryNote)),
		widget.NewFormItem("References", container.NewVBox(c.refSize.sel, c.refSize.cost)),
	)
}

// choiceSelect is a select offering the labels of items; picking one
// calls set with it, except while the panel applies the state.
func choiceSelect[T any](c *compose, items []T, label func(T) string, set func(T)) *widget.Select {
	var labels []string
	for _, it := range items {
		labels = append(labels, label(it))
	}
	return widget.NewSelect(labels, func(l string) {
		if c.updating {
			return
		}
		for _, it := range items {
			if label(it) == l {
				set(it)
			}
		}
	})
}

// applySettings shows the draft's settings and their problems (the
// model's among them).
func (c *compose) applySettings(sn studio.Snapshot) {
	settingsProblems := append(filter(sn.Problems, studio.AtSettings), filter(sn.Problems, studio.AtModel)...)
	for i := range settingsProblems {
		settingsProblems[i].Where = studio.AtSettings
	}
	problemLabels(c.settingsMsgs, settingsProblems, studio.AtSettings, -1)

	st := sn.Draft.Settings
	c.canvasSel.SetSelected(studio.CanvasFor(st.Width, st.Height).Label)
	// A field being typed in is left alone (a take running sends changes
	// many times a second): the length until it is submitted or left, the
	// numbers unless the state moved away from what they say (the dice).
	focused := c.w.win.Canvas().Focused()
	if n, ok := parseLength(c.lengthSel.Text); (!ok || n != st.Frames) && focused != c.lengthSel {
		c.lengthSel.SetText(studio.FormatLength(st.Frames))
	}
	c.loras.apply(sn)
	q := studio.QualityOf(st.Quality)
	c.qualitySel.SetSelected(q.Name)
	c.qualityNote.SetText(qualityNote(sn, q))
	if v, err := strconv.ParseUint(strings.TrimSpace(c.seed.Text), 10, 64); (err != nil && focused != c.seed) || (err == nil && v != st.Seed) {
		c.seed.SetText(strconv.FormatUint(st.Seed, 10))
	}
	for _, m := range memoryModes {
		if m.mode == st.Memory {
			c.memorySel.SetSelected(m.label)
		}
	}
	c.memQualitySel.SetSelected(studio.MemoryQualityOf(st.MemoryQuality).Label)
	if st.Memory == engine.MemoryAuto {
		c.memQualitySel.Enable()
	} else {
		c.memQualitySel.Disable()
	}
	if sn.Plan != nil {
		c.memoryNote.SetText(studio.MemoryLine(sn.Plan, st))
	} else {
		c.memoryNote.SetText(studio.MemoryQualityOf(st.MemoryQuality).Note)
	}
	c.refSize.refresh(st)
	if v, err := strconv.Atoi(strings.TrimSpace(c.steps.Text)); (err != nil && focused != c.steps) || (err == nil && v != st.Speed.Steps) {
		c.steps.SetText(strconv.Itoa(st.Speed.Steps))
	}
	c.reuse.SetSelected(strconv.Itoa(st.Speed.Reuse))
	c.layers.SetSelected(strconv.Itoa(st.Speed.Layers))
	c.coreReuse.SetSelected(strconv.Itoa(st.Speed.CoreReuse))
	c.tokenRed.SetChecked(st.Speed.TokenReduction)
	c.previews.SetChecked(st.Preview)
	rw, rh := st.Render()
	var renders []string
	renders = append(renders, fmt.Sprintf("%d×%d (the canvas)", st.Width, st.Height))
	for _, f := range []float64{0.875, 0.75, 0.625, 0.5} {
		w, h := studio.RenderSize(st.Width, st.Height, f)
		if (w != st.Width || h != st.Height) && !contains(renders, fmt.Sprintf("%d×%d", w, h)) {
			renders = append(renders, fmt.Sprintf("%d×%d", w, h))
		}
	}
	c.render.Options = renders
	if rw == st.Width && rh == st.Height {
		c.render.SetSelected(renders[0])
	} else {
		c.render.SetSelected(fmt.Sprintf("%d×%d", rw, rh))
	}
	note := fmt.Sprintf("Steps %d–%d · reuse %d–%d · layers %d–%d · core reuse %d–%d (not with reuse above 1) · render size: same aspect, at most the canvas.",
		studio.StepsRange.Min, studio.StepsRange.Max, studio.ReuseRange.Min, studio.ReuseRange.Max,
		studio.LayersRange.Min, studio.LayersRange.Max, studio.CoreReuseRange.Min, studio.CoreReuseRange.Max)
	if st.Custom() {
		note = "Custom settings (" + studio.SpeedNote(studio.RelativeCost(st.Speed)) + " than Default). " + note
	}
	c.advNote.SetText(note)
}

// parseLength reads a typed length: "5.17 s (124 frames)", "5", "5 s",
// "5.5s", "124 frames", "124f". Seconds and frames are rounded up to the
// next legal length.
func parseLength(t string) (int, bool) {
	t = strings.ToLower(strings.TrimSpace(t))
	if i := strings.Index(t, "("); i >= 0 {
		if n, err := strconv.Atoi(strings.Fields(t[i+1:])[0]); err == nil {
			return studio.AlignFrames(n), true
		}
	}
	for _, suf := range []string{"frames", "frame", "f"} {
		if strings.HasSuffix(t, suf) {
			if n, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(t, suf))); err == nil && n > 0 {
				return studio.AlignFrames(n), true
			}
			break
		}
	}
	t = strings.TrimSpace(strings.TrimSuffix(strings.TrimSuffix(t, "seconds"), "s"))
	if v, err := strconv.ParseFloat(strings.ReplaceAll(t, ",", "."), 64); err == nil && v > 0 {
		return studio.FramesForSeconds(v), true
	}
	return 0, false
}

func rangeOptions(r studio.Range) []string {
	var o []string
	for v := r.Min; v <= r.Max; v++ {
		o = append(o, strconv.Itoa(v))
	}
	return o
}

// speedSetter is the change handler of a speed control (an entry or a
// select of numbers): a whole number sets the field set writes, anything
// else (a number half typed) is left alone.
func (c *compose) speedSetter(set func(*studio.Speed, int)) func(string) {
	return func(l string) {
		if c.updating {
			return
		}
		if v, err := strconv.Atoi(strings.TrimSpace(l)); err == nil {
			sp := c.w.snap.Draft.Settings.Speed
			set(&sp, v)
			c.w.s.Compose().SetSpeed(sp)
		}
	}
}

func qualityNote(sn studio.Snapshot, q studio.Quality) string {
	if st := sn.Draft.Settings; st.Custom() {
		// The preset's own figures would describe settings the draft no
		// longer has: describe the draft (the same plan as Generate's note).
		rel := studio.RelativeCost(st.Speed)
		def, hasDef := sn.Estimates[engine.PresetDefault]
		if sn.Plan != nil && sn.Plan.Estimate > 0 && hasDef && def > 0 {
			rel = float64(sn.Plan.Estimate) / float64(def)
		}
		note := "customised under Advanced"
		if sp := studio.SpeedNote(rel); sp != "" && sp != "the usual speed" {
			note += " — " + sp + " than Default"
		}
		if sn.Plan != nil && sn.Plan.Estimate > 0 {
			note += " · about " + fmtDuration(sn.Plan.Estimate) + " here"
		}
		return note
	}
	note := q.Summary()
	if est, ok := sn.Estimates[q.Preset]; ok && est > 0 {
		if def, ok := sn.Estimates[engine.PresetDefault]; ok && def > 0 && q.Preset != engine.PresetDefault {
			note = studio.SpeedNote(float64(est) / float64(def))
			if q.Note != "" {
				note += " — " + q.Note
			}
		}
		note += " · about " + fmtDuration(est) + " here"
	}
	return note
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if strings.HasPrefix(x, s) {
			return true
		}
	}
	return false
}
