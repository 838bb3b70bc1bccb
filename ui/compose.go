package ui

import (
	"fmt"
	"image/color"

	"fyne.io/fyne/v2/canvas"
	"math"
	"strconv"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"h3studio/engine"
	"h3studio/engine/media"
	"h3studio/ui/studio"
	"h3studio/ui/widgets"
)

// compose is the left panel: prompt, keyframe slots, references, settings
// and the Generate button.
type compose struct {
	w        *Window
	content  fyne.CanvasObject
	updating bool // applying state: widget callbacks must not write back

	task       *widgets.Badge
	prompt     *promptEntry
	builder    *widget.Button
	promptMsgs *fyne.Container

	first, last *widgets.Slot
	frameMsgs   *fyne.Container

	refList  *fyne.Container
	refRows  map[int]*refRow
	refHint  *widget.Label
	refZone  fyne.CanvasObject
	refMsgs  *fyne.Container
	refCount *widget.Label

	canvasSel, qualitySel, memorySel *widget.Select
	// memQualitySel is the automatic memory mode's quality floor and
	// memoryNote the plan's memory line (studio.MemoryLine).
	memQualitySel                    *widget.Select
	memoryNote                       *widget.Label
	refSize                          *refSizeControl
	lengthSel                        *widget.SelectEntry
	qualityNote                      *widget.Label
	loras                            *loraPanel
	seed                             *widget.Entry
	dice                             *widget.Button
	steps                            *widget.Entry
	reuse, layers, coreReuse, render *widget.Select
	tokenRed, previews               *widget.Check
	advNote                          *widget.Label
	advanced                         *widget.Accordion
	settingsMsgs                     *fyne.Container

	generate *widget.Button
	genNote  *widget.Label
}

var memoryModes = []struct {
	mode  engine.MemoryMode
	label string
}{
	{engine.MemoryAuto, "Automatic"},
	{engine.MemoryResident, "Resident — fastest, most memory"},
	{engine.MemoryResidentInt8, "Resident, 8-bit weights"},
	{engine.MemoryResidentInt4, "Resident, 4-bit weights — least resident memory"},
	{engine.MemoryStreaming, "Streaming — least memory"},
}

func newCompose(w *Window) *compose {
	c := &compose{w: w, refRows: map[int]*refRow{}}
	s := w.s

	c.task = widgets.NewBadge("T2VA", widgets.PictureColor)
	c.prompt = newPromptEntry(s.SetPrompt, s.Undo, s.Redo)
	c.prompt.SetMinRowsVisible(6)
	c.prompt.SetPlaceHolder("Describe the clip: who and what, where, what happens, the camera, the light, and the sound…")
	c.prompt.OnChanged = func(t string) {
		if !c.updating {
			s.SetPrompt(t)
		}
	}
	c.builder = widget.NewButtonWithIcon("Builder", theme.MenuDropDownIcon(), c.showBuilderMenu)
	c.builder.IconPlacement = widget.ButtonIconTrailingText
	c.builder.Importance = widget.LowImportance
	c.promptMsgs = container.NewVBox()

	c.first = widgets.NewSlot("First frame", "Drop a picture")
	c.first.OnTap = func() {
		w.chooseFile("Choose the first frame", pictureExts, func(p string) { s.SetFrame(studio.FirstSlot, p) })
	}
	c.first.OnClear = func() { s.ClearFrame(studio.FirstSlot) }
	c.last = widgets.NewSlot("Last frame", "Drop a picture")
	c.last.OnTap = func() {
		w.chooseFile("Choose the last frame", pictureExts, func(p string) { s.SetFrame(studio.LastSlot, p) })
	}
	c.last.OnClear = func() { s.ClearFrame(studio.LastSlot) }
	swap := widget.NewButton("Swap", s.SwapFrames)
	swap.Importance = widget.LowImportance
	c.frameMsgs = container.NewVBox()

	c.refList = container.NewVBox()
	c.refHint = subtle("Drop pictures, videos or sound here. They are numbered per kind in this order — Picture 1, Video 1, Audio 1 — and the prompt's label lines follow.")
	c.refHint.Alignment = fyne.TextAlignCenter
	c.refZone = dropZone(c.refHint)
	c.refMsgs = container.NewVBox()
	c.refCount = subtle("")
	c.refCount.Wrapping = fyne.TextWrapOff
	add := widget.NewButtonWithIcon("Add…", theme.ContentAddIcon(), func() {
		w.chooseFile("Add a reference", mediaExts, func(p string) { s.AddReferences([]string{p}) })
	})
	add.Importance = widget.LowImportance

	c.loras = newLoRAPanel(w)

	// Settings.
	var canvasLabels []string
	for _, cv := range studio.Canvases {
		canvasLabels = append(canvasLabels, cv.Label)
	}
	c.canvasSel = widget.NewSelect(canvasLabels, func(l string) {
		if c.updating {
			return
		}
		for _, cv := range studio.Canvases {
			if cv.Label == l {
				s.SetCanvas(cv.ID)
			}
		}
	})
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
			s.SetFrames(n)
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
	var qualities []string
	for _, q := range studio.Qualities {
		qualities = append(qualities, q.Name)
	}
	c.qualitySel = widget.NewSelect(qualities, func(l string) {
		if c.updating {
			return
		}
		for _, q := range studio.Qualities {
			if q.Name == l {
				s.SetQuality(q.Preset)
			}
		}
	})
	c.qualityNote = subtle("")
	c.seed = widget.NewEntry()
	c.seed.OnChanged = func(t string) {
		if c.updating {
			return
		}
		if v, err := strconv.ParseUint(strings.TrimSpace(t), 10, 64); err == nil {
			s.SetSeed(v)
		}
	}
	c.dice = widget.NewButtonWithIcon("", diceIcon, func() { s.RollSeed() })
	c.dice.Importance = widget.LowImportance
	var mems []string
	for _, m := range memoryModes {
		mems = append(mems, m.label)
	}
	c.memorySel = widget.NewSelect(mems, func(l string) {
		if c.updating {
			return
		}
		for _, m := range memoryModes {
			if m.label == l {
				s.SetMemory(m.mode)
			}
		}
	})

	var floors []string
	for _, q := range studio.MemoryQualities {
		floors = append(floors, q.Label)
	}
	c.memQualitySel = widget.NewSelect(floors, func(l string) {
		if c.updating {
			return
		}
		for _, q := range studio.MemoryQualities {
			if q.Label == l {
				s.SetMemoryQuality(q.Floor)
			}
		}
	})
	c.memoryNote = subtle("")

	// Advanced.
	c.steps = widget.NewEntry()
	c.steps.OnChanged = func(t string) {
		if c.updating {
			return
		}
		if v, err := strconv.Atoi(strings.TrimSpace(t)); err == nil {
			sp := w.snap.Draft.Settings.Speed
			sp.Steps = v
			s.SetSpeed(sp)
		}
	}
	c.reuse = widget.NewSelect(rangeOptions(studio.ReuseRange), c.speedSetter(func(sp *studio.Speed, v int) { sp.Reuse = v }))
	c.layers = widget.NewSelect(rangeOptions(studio.LayersRange), c.speedSetter(func(sp *studio.Speed, v int) { sp.Layers = v }))
	c.coreReuse = widget.NewSelect(rangeOptions(studio.CoreReuseRange), c.speedSetter(func(sp *studio.Speed, v int) { sp.CoreReuse = v }))
	c.tokenRed = widget.NewCheck("Token reduction", func(on bool) {
		if !c.updating {
			sp := w.snap.Draft.Settings.Speed
			sp.TokenReduction = on
			s.SetSpeed(sp)
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
			s.SetSpeed(sp)
		}
		s.SetRenderSize(rw, rh)
	})
	c.previews = widget.NewCheck("Show a preview frame after every step", func(on bool) {
		if !c.updating {
			s.SetPreviewFrames(on)
		}
	})
	c.advNote = subtle("")
	reset := widget.NewButton("Reset to preset", func() { s.SetQuality(w.snap.Draft.Settings.Quality) })
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

	settings := widget.NewForm(
		widget.NewFormItem("Canvas", c.canvasSel),
		widget.NewFormItem("Length", c.lengthSel),
		widget.NewFormItem("Quality", container.NewVBox(c.qualitySel, c.qualityNote)),
		widget.NewFormItem("Turbo", container.NewVBox(c.loras.turbo, c.loras.turboNote)),
		widget.NewFormItem("Seed", container.NewBorder(nil, nil, nil, c.dice, c.seed)),
		widget.NewFormItem("Memory", container.NewVBox(c.memorySel, c.memQualitySel, c.memoryNote)),
		widget.NewFormItem("References", container.NewVBox(c.refSize.sel, c.refSize.cost)),
	)

	c.generate = widget.NewButtonWithIcon("Generate", theme.MediaPlayIcon(), c.doGenerate)
	c.generate.Importance = widget.HighImportance
	c.genNote = subtle("")

	slots := container.NewGridWithColumns(2, c.first, c.last)
	vbox := container.NewVBox(
		container.NewHBox(heading("Compose"), spacer(), c.task),
		container.NewBorder(nil, nil, sectionLabel("Prompt"), c.builder),
		c.prompt,
		c.promptMsgs,
		container.NewBorder(nil, nil, sectionLabel("Frames"), swap),
		slots,
		c.frameMsgs,
		container.NewBorder(nil, nil, sectionLabel("References"), container.NewHBox(c.refCount, add)),
		c.refList,
		c.refZone,
		c.refMsgs,
		sectionLabel("Settings"),
		settings,
		container.NewBorder(nil, nil, sectionLabel("LoRAs"), c.loras.add),
		c.loras.list,
		c.advanced,
		c.settingsMsgs,
	)
	bottom := container.NewVBox(widget.NewSeparator(), c.generate, c.genNote)
	c.content = panel(container.NewBorder(nil, bottom, nil, nil, container.NewVScroll(vbox)))
	return c
}

// dropZone frames the empty reference list's hint like a drop target.
func dropZone(hint *widget.Label) fyne.CanvasObject {
	bg := canvas.NewRectangle(theme.Color(theme.ColorNameInputBackground))
	bg.CornerRadius = 8
	bg.StrokeColor = theme.Color(theme.ColorNameSeparator)
	bg.StrokeWidth = 1.5
	return container.NewStack(bg, container.NewPadded(hint))
}

func sectionLabel(t string) fyne.CanvasObject {
	l := widget.NewLabelWithStyle(t, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	l.SizeName = theme.SizeNameCaptionText
	return l
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

func (c *compose) speedSetter(set func(*studio.Speed, int)) func(string) {
	return func(l string) {
		if c.updating {
			return
		}
		if v, err := strconv.Atoi(l); err == nil {
			sp := c.w.snap.Draft.Settings.Speed
			set(&sp, v)
			c.w.s.SetSpeed(sp)
		}
	}
}

func (c *compose) doGenerate() {
	if _, err := c.w.s.Generate(); err != nil {
		c.w.s.Notify(studio.Warn, strings.TrimPrefix(err.Error(), "studio: not ready: "))
	}
}

func taskBadge(t engine.Task) (string, color.Color) {
	switch t {
	case engine.TaskFL2VA:
		return "First/last frame", widgets.VideoColor
	case engine.TaskRef2VA:
		return "References", widgets.AudioColor
	}
	return "Text to video", widgets.PictureColor
}

func kindColor(k media.Kind) color.Color {
	switch k {
	case media.KindVideo:
		return widgets.VideoColor
	case media.KindAudio:
		return widgets.AudioColor
	}
	return widgets.PictureColor
}

// problemLabels fills a box with the problems at one place.
func problemLabels(box *fyne.Container, ps []studio.Problem, where studio.Where, index int) {
	var objs []fyne.CanvasObject
	for _, p := range ps {
		if p.Where != where || (index >= -1 && p.Index != index && where == studio.AtReferences) {
			continue
		}
		l := widget.NewLabel(p.String())
		l.Wrapping = fyne.TextWrapWord
		l.SizeName = theme.SizeNameCaptionText
		l.Importance = widget.DangerImportance
		if p.Severity == studio.Warning {
			l.Importance = widget.WarningImportance
		}
		objs = append(objs, l)
	}
	if len(objs) == len(box.Objects) {
		same := true
		for i, o := range objs {
			if o.(*widget.Label).Text != box.Objects[i].(*widget.Label).Text {
				same = false
			}
		}
		if same {
			return
		}
	}
	box.Objects = objs
	box.Refresh()
}

func (c *compose) apply(sn studio.Snapshot) {
	c.updating = true
	defer func() { c.updating = false }()
	d := sn.Draft

	text, col := taskBadge(sn.Task)
	c.task.Set(text, col)
	if c.prompt.Text != d.Prompt {
		c.prompt.SetText(d.Prompt)
	}
	problemLabels(c.promptMsgs, sn.Problems, studio.AtPrompt, -1)
	// An empty prompt is where every draft starts, not a mistake: its hint
	// is shown quietly (Generate's note still says why it is disabled).
	for _, o := range c.promptMsgs.Objects {
		if l := o.(*widget.Label); strings.HasPrefix(l.Text, studio.EmptyPromptMessage) && l.Importance != widget.LowImportance {
			l.Importance = widget.LowImportance
			l.Refresh()
		}
	}

	c.applySlot(c.first, d.First)
	c.applySlot(c.last, d.Last)
	frameProblems := dedupe(append(filter(sn.Problems, studio.AtFirst), filter(sn.Problems, studio.AtLast)...))
	for i := range frameProblems {
		frameProblems[i].Where = studio.AtFirst
	}
	problemLabels(c.frameMsgs, frameProblems, studio.AtFirst, -1)

	c.applyRefs(sn)
	problemLabels(c.refMsgs, sn.Problems, studio.AtReferences, -1)
	settingsProblems := append(filter(sn.Problems, studio.AtSettings), filter(sn.Problems, studio.AtModel)...)
	for i := range settingsProblems {
		settingsProblems[i].Where = studio.AtSettings
	}
	problemLabels(c.settingsMsgs, settingsProblems, studio.AtSettings, -1)

	st := d.Settings
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

	switch {
	case sn.Running != nil && sn.CanGenerate:
		c.generate.SetText("Generate — add to the queue")
	default:
		c.generate.SetText("Generate")
	}
	if sn.CanGenerate {
		c.generate.Enable()
		hint := generateKey
		if sn.Plan != nil {
			hint = planSummary(*sn.Plan) + " · " + generateKey
		}
		c.genNote.SetText(hint)
		c.genNote.Importance = widget.LowImportance
	} else {
		c.generate.Disable()
		c.genNote.SetText(sn.Why)
		c.genNote.Importance = widget.WarningImportance
	}
	c.genNote.Refresh()
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if strings.HasPrefix(x, s) {
			return true
		}
	}
	return false
}

func filter(ps []studio.Problem, w studio.Where) []studio.Problem {
	var out []studio.Problem
	for _, p := range ps {
		if p.Where == w {
			out = append(out, p)
		}
	}
	return out
}

func dedupe(ps []studio.Problem) []studio.Problem {
	seen := map[string]bool{}
	var out []studio.Problem
	for _, p := range ps {
		if !seen[p.Message] {
			seen[p.Message] = true
			out = append(out, p)
		}
	}
	return out
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

func planSummary(p engine.Plan) string {
	s := fmt.Sprintf("%d×%d · %s", p.Request.Width, p.Request.Height, studio.FormatLength(p.Request.Frames))
	if p.Estimate > 0 {
		s += " · about " + fmtDuration(p.Estimate)
	}
	if p.PeakBytes > 0 {
		s += " · peak " + fmtBytes(p.PeakBytes)
	}
	return s
}

func fmtDuration(d time.Duration) string {
	s := int(math.Round(d.Seconds()))
	switch {
	case s < 60:
		return fmt.Sprintf("%d s", max(s, 1))
	case s < 3600:
		return fmt.Sprintf("%d:%02d", s/60, s%60)
	}
	return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
}

func fmtBytes(b int64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.1f GB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.0f MB", float64(b)/(1<<20))
	}
	return fmt.Sprintf("%d KB", b>>10)
}

func (c *compose) applySlot(sl *widgets.Slot, m studio.Media) {
	status := ""
	switch m.State {
	case studio.MediaReady:
		if m.Info.Width > 0 {
			status = fmt.Sprintf("%d×%d", m.Info.Width, m.Info.Height)
		}
	case studio.MediaBroken, studio.MediaMissing, studio.MediaLimited:
		status = m.Note
	}
	problem := m.State == studio.MediaBroken || m.State == studio.MediaMissing || (!m.Empty() && m.Kind != media.KindImage)
	sl.Set(name(m), m.Thumb, status, problem, m.State == studio.MediaProbing)
}

func name(m studio.Media) string {
	if m.Empty() {
		return ""
	}
	return m.Name()
}

// refRow is one reference in the list.
type refRow struct {
	id     int
	handle *widgets.Handle
	thumb  *widgets.Thumb
	badge  *widgets.Badge
	title  *widget.Label
	sub    *widget.Label
	more   *widget.Button
	remove *widget.Button
	box    fyne.CanvasObject
	ref    studio.Reference
	index  int
}

func (c *compose) newRefRow(id int) *refRow {
	s := c.w.s
	r := &refRow{id: id}
	r.handle = widgets.NewHandle()
	r.handle.OnDragEnd = func(dy float32) {
		if to := c.dropIndex(r, dy); to != r.index {
			s.MoveReference(r.id, to)
		}
	}
	r.thumb = widgets.NewThumb(40)
	r.badge = widgets.NewBadge("", widgets.PictureColor)
	r.title = widget.NewLabel("")
	r.title.Truncation = fyne.TextTruncateEllipsis
	r.sub = widget.NewLabel("")
	r.sub.SizeName = theme.SizeNameCaptionText
	r.sub.Importance = widget.LowImportance
	r.sub.Truncation = fyne.TextTruncateEllipsis
	r.more = widget.NewButtonWithIcon("", theme.MoreHorizontalIcon(), func() { c.refMenu(r) })
	r.more.Importance = widget.LowImportance
	r.remove = widget.NewButtonWithIcon("", theme.CancelIcon(), func() { s.RemoveReference(r.id) })
	r.remove.Importance = widget.LowImportance
	text := container.NewVBox(r.title, r.sub)
	left := container.NewHBox(r.handle, r.thumb, container.NewCenter(r.badge))
	r.box = container.NewBorder(nil, nil, left, container.NewHBox(r.more, r.remove), text)
	return r
}

// dropIndex is where a row dragged by dy lands: the place of the row its
// centre ends up over (rows may be followed by their inline problems, so
// the distance is measured against the rows, not counted in row heights).
func (c *compose) dropIndex(r *refRow, dy float32) int {
	d := fyne.CurrentApp().Driver()
	y := d.AbsolutePositionForObject(r.box).Y + r.box.Size().Height/2 + dy
	to := r.index
	best := float32(math.MaxFloat32)
	for _, o := range c.refRows {
		top := d.AbsolutePositionForObject(o.box).Y
		if dist := float32(math.Abs(float64(y - (top + o.box.Size().Height/2)))); dist < best {
			best, to = dist, o.index
		}
	}
	return to
}

func (c *compose) refMenu(r *refRow) {
	s := c.w.s
	var items []*fyne.MenuItem
	items = append(items, fyne.NewMenuItem("Replace…", func() {
		c.w.chooseFile("Replace the reference", mediaExts, func(p string) { s.ReplaceReference(r.id, p) })
	}))
	if r.ref.Media.Kind == media.KindVideo {
		sound := fyne.NewMenuItem("Use Its Sound", func() { s.SetSilent(r.id, !r.ref.Silent) })
		sound.Checked = !r.ref.Silent && r.ref.Sound.Empty()
		items = append(items, sound)
		if r.ref.Sound.Empty() {
			items = append(items, fyne.NewMenuItem("Pair with a Sound File…", func() {
				c.w.chooseFile("Choose the sound for "+r.ref.Media.Name(), soundExts, func(p string) { s.PairSound(r.id, p) })
			}))
		} else {
			items = append(items, fyne.NewMenuItem("Remove the Paired Sound", func() { s.PairSound(r.id, "") }))
		}
	}
	items = append(items, fyne.NewMenuItemSeparator(),
		fyne.NewMenuItem("Move Up", func() { s.MoveReference(r.id, r.index-1) }),
		fyne.NewMenuItem("Move Down", func() { s.MoveReference(r.id, r.index+1) }),
		fyne.NewMenuItemSeparator(),
		fyne.NewMenuItem("Remove", func() { s.RemoveReference(r.id) }))
	showMenuAt(c.w.win, r.more, fyne.NewMenu("", items...))
}

func (c *compose) applyRefs(sn studio.Snapshot) {
	refs := sn.Draft.References
	var objs []fyne.CanvasObject
	seen := map[int]bool{}
	for i, ref := range refs {
		r := c.refRows[ref.ID]
		if r == nil {
			r = c.newRefRow(ref.ID)
			c.refRows[ref.ID] = r
		}
		seen[ref.ID] = true
		r.ref, r.index = ref, i
		m := ref.Media
		var icon fyne.Resource
		switch m.Kind {
		case media.KindVideo:
			icon = theme.MediaVideoIcon()
		case media.KindAudio:
			icon = theme.MediaMusicIcon()
		default:
			icon = theme.MediaPhotoIcon()
		}
		r.thumb.Set(m.Thumb, m.Peaks, icon)
		r.badge.Set(sn.Labels[i], kindColor(m.Kind))
		r.title.SetText(m.Name())
		r.sub.SetText(refDetail(ref))
		r.sub.Importance = widget.LowImportance
		if m.State == studio.MediaBroken || m.State == studio.MediaMissing {
			r.sub.Importance = widget.DangerImportance
		}
		r.sub.Refresh()
		objs = append(objs, r.box)
		var msgs []studio.Problem
		for _, p := range sn.Problems {
			if p.Where == studio.AtReferences && p.Index == i {
				msgs = append(msgs, p)
			}
		}
		if len(msgs) > 0 {
			box := container.NewVBox()
			problemLabels(box, msgs, studio.AtReferences, i)
			objs = append(objs, box)
		}
	}
	for id := range c.refRows {
		if !seen[id] {
			delete(c.refRows, id)
		}
	}
	c.refList.Objects = objs
	c.refList.Refresh()
	if len(refs) == 0 {
		c.refZone.Show()
		c.refCount.SetText("")
	} else {
		c.refZone.Hide()
		c.refCount.SetText(fmt.Sprintf("%d of %d", len(refs), studio.MaxReferences))
	}
}

func refDetail(r studio.Reference) string {
	m := r.Media
	var parts []string
	switch m.State {
	case studio.MediaProbing:
		return "Reading…"
	case studio.MediaBroken, studio.MediaMissing:
		return m.Note
	case studio.MediaLimited:
		parts = append(parts, "no preview in this build")
	}
	if m.Info.Width > 0 {
		parts = append(parts, fmt.Sprintf("%d×%d", m.Info.Width, m.Info.Height))
	}
	if m.Info.Duration > 0 {
		parts = append(parts, fmt.Sprintf("%.1f s", m.Info.Duration.Seconds()))
	}
	if m.Kind == media.KindVideo {
		switch {
		case !r.Sound.Empty():
			parts = append(parts, "sound: "+r.Sound.Name())
		case r.Silent:
			parts = append(parts, "without its sound")
		default:
			parts = append(parts, "with its sound")
		}
	}
	return strings.Join(parts, " · ")
}

// showBuilderMenu opens the prompt builder's menu.
func (c *compose) showBuilderMenu() {
	s := c.w.s
	b := s.Builder()
	var examples []*fyne.MenuItem
	for i, e := range b.Examples {
		examples = append(examples, fyne.NewMenuItem(e.Title, func() { s.ApplyExample(i) }))
	}
	ex := fyne.NewMenuItem("Examples", nil)
	ex.ChildMenu = fyne.NewMenu("", examples...)
	keep := fyne.NewMenuItem("Keep Label Lines in Step", func() { s.SetKeepLabels(!c.w.snap.Draft.KeepLabels) })
	keep.Checked = c.w.snap.Draft.KeepLabels
	menu := fyne.NewMenu("",
		fyne.NewMenuItem("Edit Sections…", c.w.showBuilder),
		fyne.NewMenuItemSeparator(),
		fyne.NewMenuItem("Lay Out for Text or Frames", func() { s.ApplyTemplate("base") }),
		fyne.NewMenuItem("Lay Out for References", func() { s.ApplyTemplate("ref2va") }),
		fyne.NewMenuItemSeparator(),
		ex,
		fyne.NewMenuItemSeparator(),
		keep,
	)
	showMenuAt(c.w.win, c.builder, menu)
}

func showMenuAt(w fyne.Window, anchor fyne.CanvasObject, m *fyne.Menu) {
	pos := fyne.CurrentApp().Driver().AbsolutePositionForObject(anchor)
	widget.ShowPopUpMenuAtPosition(m, w.Canvas(), pos.Add(fyne.NewPos(0, anchor.Size().Height)))
}

var (
	pictureExts = []string{".png", ".jpg", ".jpeg", ".heic", ".heif", ".webp", ".tif", ".tiff", ".bmp", ".gif"}
	soundExts   = []string{".wav", ".aif", ".aiff", ".m4a", ".aac", ".mp3", ".caf"}
	mediaExts   = append(append(append([]string{}, pictureExts...), ".mp4", ".mov", ".m4v"), soundExts...)
)

var _ desktop.Hoverable = (*widgets.Slot)(nil)
