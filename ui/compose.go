package ui

import (
	"fmt"
	"image/color"
	"math"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"h3studio/engine"
	"h3studio/ui/studio"
	"h3studio/ui/widgets"
)

// compose is the left panel: prompt, keyframe slots, references, settings
// and the Generate button.
// Each part is made and shown by its own file: compose_prompt.go,
// compose_media.go (frames and references) and compose_settings.go.
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

func newCompose(w *Window) *compose {
	c := &compose{w: w, refRows: map[int]*refRow{}}
	c.task = widgets.NewBadge("T2VA", widgets.PictureColor)
	c.newPrompt()
	swap := c.newFrames()
	add := c.newReferences()
	c.loras = newLoRAPanel(w)
	settings := c.newSettings()

	c.generate = widget.NewButtonWithIcon("Generate", theme.MediaPlayIcon(), c.doGenerate)
	c.generate.Importance = widget.HighImportance
	c.genNote = subtle("")

	vbox := container.NewVBox(
		container.NewHBox(heading("Compose"), spacer(), c.task),
		container.NewBorder(nil, nil, sectionLabel("Prompt"), c.builder),
		c.prompt,
		c.promptMsgs,
		container.NewBorder(nil, nil, sectionLabel("Frames"), swap),
		container.NewGridWithColumns(2, c.first, c.last),
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

// apply shows the state: each part of the panel, then Generate.
func (c *compose) apply(sn studio.Snapshot) {
	c.updating = true
	defer func() { c.updating = false }()
	text, col := taskBadge(sn.Task)
	c.task.Set(text, col)
	c.applyPrompt(sn)
	c.applyFrames(sn)
	c.applyRefs(sn)
	problemLabels(c.refMsgs, sn.Problems, studio.AtReferences, -1)
	c.applySettings(sn)

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

func (c *compose) doGenerate() {
	if _, err := c.w.s.Queue().Generate(); err != nil {
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

func sectionLabel(t string) fyne.CanvasObject {
	l := widget.NewLabelWithStyle(t, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	l.SizeName = theme.SizeNameCaptionText
	return l
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
