package ui

import (
	"fmt"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"h3studio/engine"
	"h3studio/ui/studio"
	"h3studio/ui/widgets"
)

// progress shows the running job phase by phase, its time and the queue.
type progress struct {
	w       *Window
	content fyne.CanvasObject
	box     *fyne.Container

	title  *widget.Label
	sub    *widget.Label
	cancel *widget.Button
	rows   map[engine.Phase]*phaseRow
	grid   *fyne.Container
	foot   *widget.Label
	queue  *widget.Label
	clearQ *widget.Button
	last   *widget.Label
	cur    studio.JobID

	boxPanel, lastPanel fyne.CanvasObject
}

// phaseRow is one phase: name, bar, count and time on one compact line.
type phaseRow struct {
	name  *canvas.Text
	bar   *widgets.Bar
	count *canvas.Text
	time  *canvas.Text
	box   fyne.CanvasObject
}

func newProgress(w *Window) *progress {
	p := &progress{w: w, rows: map[engine.Phase]*phaseRow{}}
	p.title = widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	p.title.Truncation = fyne.TextTruncateEllipsis
	p.sub = subtle("")
	p.cancel = widget.NewButtonWithIcon("Cancel", theme.CancelIcon(), func() { w.s.Queue().Cancel(p.cur) })
	p.grid = container.New(&stackLayout{})
	p.foot = subtle("")
	p.queue = subtle("")
	p.clearQ = widget.NewButton("Cancel All", w.s.Queue().CancelAll)
	p.clearQ.Importance = widget.LowImportance
	p.last = subtle("")
	p.box = container.NewVBox(
		container.NewBorder(nil, nil, nil, container.NewCenter(p.cancel), container.NewVBox(p.title, p.sub)),
		p.grid,
		p.foot,
		container.NewBorder(nil, nil, nil, p.clearQ, p.queue),
	)
	p.boxPanel, p.lastPanel = panel(p.box), panel(p.last)
	p.content = container.NewStack()
	return p
}

func (p *progress) row(ph studio.PhaseView) *phaseRow {
	r := p.rows[ph.Phase]
	if r == nil {
		size := theme.Size(theme.SizeNameCaptionText) + 1
		text := func(s string, align fyne.TextAlign) *canvas.Text {
			t := canvas.NewText(s, theme.Color(theme.ColorNameForeground))
			t.TextSize, t.Alignment = size, align
			return t
		}
		r = &phaseRow{name: text(ph.Name, fyne.TextAlignLeading), bar: widgets.NewBar(),
			count: text("", fyne.TextAlignTrailing), time: text("", fyne.TextAlignTrailing)}
		h := r.name.MinSize().Height + 4
		r.box = container.New(&rowLayout{widths: [3]float32{140, 60, 48}, height: h}, r.name, r.bar, r.count, r.time)
		p.rows[ph.Phase] = r
	}
	return r
}

func (p *progress) apply(sn studio.Snapshot) {
	r := sn.Running
	if r == nil {
		// Idle: a one-line summary of the last job of this session, if any.
		if len(sn.Jobs) == 0 {
			p.content.(*fyne.Container).Objects = nil
			p.content.Refresh()
			return
		}
		j := sn.Jobs[0]
		var msg string
		switch j.State {
		case studio.JobDone:
			msg = fmt.Sprintf("✓ “%s” done in %s — saved to the library.", j.Title, fmtDuration(j.Elapsed))
			p.last.Importance = widget.SuccessImportance
		case studio.JobFailed:
			msg = fmt.Sprintf("“%s” failed: %s", j.Title, j.Message)
			p.last.Importance = widget.DangerImportance
		case studio.JobCancelled:
			msg = fmt.Sprintf("“%s” was cancelled; nothing was saved.", j.Title)
			p.last.Importance = widget.WarningImportance
		default:
			msg = fmt.Sprintf("“%s” is waiting.", j.Title)
		}
		p.last.SetText(msg)
		p.setContent(p.lastPanel)
		return
	}
	p.cur = r.ID
	p.title.SetText(fmt.Sprintf("Generating “%s”", r.Title))
	p.sub.SetText(fmt.Sprintf("%s · seed %d", taskTitle(r.Task), r.Seed))
	if r.Canceling {
		p.cancel.SetText("Cancelling…")
		p.cancel.Disable()
	} else {
		p.cancel.SetText("Cancel")
		p.cancel.Enable()
	}
	var objs []fyne.CanvasObject
	for _, ph := range r.Phases {
		row := p.row(ph)
		row.bar.Set(ph.Fraction(), ph.State == studio.PhaseActive)
		row.name.TextStyle.Bold = ph.State == studio.PhaseActive
		col := theme.Color(theme.ColorNameForeground)
		if ph.State == studio.PhasePending {
			col = theme.Color(theme.ColorNameDisabled)
		}
		row.name.Color, row.count.Color, row.time.Color = col, col, theme.Color(theme.ColorNameDisabled)
		switch {
		case ph.Total > 0 && ph.State != studio.PhasePending:
			row.count.Text = fmt.Sprintf("%d/%d", ph.Done, ph.Total)
		case ph.State == studio.PhaseFinished:
			row.count.Text = "done"
		default:
			row.count.Text = ""
		}
		row.time.Text = ""
		if ph.State != studio.PhasePending && ph.Elapsed > 0 {
			row.time.Text = fmtDuration(ph.Elapsed)
		}
		row.name.Refresh()
		row.count.Refresh()
		row.time.Refresh()
		objs = append(objs, row.box)
	}
	p.grid.Objects = objs
	p.grid.Refresh()
	foot := "Elapsed " + fmtDuration(r.Elapsed)
	switch {
	case r.ETA > 0:
		foot += " · about " + fmtDuration(r.ETA) + " left"
	case r.Current == engine.PhaseVideoDecode || r.Current == engine.PhaseAudioDecode || r.Current == engine.PhaseExport:
		foot += " · finishing…" // the estimate has run out; "estimating" would be wrong this late
	default:
		foot += " · estimating the time left…"
	}
	if r.PeakBytes > 0 {
		foot += " · peak memory " + fmtBytes(r.PeakBytes) + " (predicted)"
	}
	if r.Message != "" {
		foot += " · " + r.Message
	}
	p.foot.SetText(foot)
	if sn.Queued > 0 {
		p.queue.SetText(fmt.Sprintf("%d more waiting in the queue.", sn.Queued))
		p.clearQ.Show()
	} else {
		p.queue.SetText("")
		p.clearQ.Hide()
	}
	p.setContent(p.boxPanel)
}

func (p *progress) setContent(o fyne.CanvasObject) {
	c := p.content.(*fyne.Container)
	if len(c.Objects) == 1 && c.Objects[0] == o {
		return
	}
	c.Objects = []fyne.CanvasObject{o}
	c.Refresh()
}

// rowLayout lays out a phase row: a fixed-width name, the bar taking the
// rest, then fixed-width count and time.
type rowLayout struct {
	widths [3]float32 // name, count, time
	height float32
}

func (l *rowLayout) Layout(objs []fyne.CanvasObject, size fyne.Size) {
	name, bar, count, tm := objs[0], objs[1], objs[2], objs[3]
	gap := theme.Padding() * 2
	in := theme.InnerPadding()
	size.Width -= 2 * in
	defer func() {
		for _, o := range objs {
			o.Move(o.Position().AddXY(in, 0))
		}
	}()
	name.Move(fyne.NewPos(0, 0))
	name.Resize(fyne.NewSize(l.widths[0], size.Height))
	barW := size.Width - l.widths[0] - l.widths[1] - l.widths[2] - 3*gap
	bar.Move(fyne.NewPos(l.widths[0]+gap, 0))
	bar.Resize(fyne.NewSize(max(barW, 20), size.Height))
	count.Move(fyne.NewPos(size.Width-l.widths[2]-gap-l.widths[1], 0))
	count.Resize(fyne.NewSize(l.widths[1], size.Height))
	tm.Move(fyne.NewPos(size.Width-l.widths[2], 0))
	tm.Resize(fyne.NewSize(l.widths[2], size.Height))
}

func (l *rowLayout) MinSize([]fyne.CanvasObject) fyne.Size {
	return fyne.NewSize(l.widths[0]+l.widths[1]+l.widths[2]+80, l.height)
}

func taskTitle(t engine.Task) string {
	s, _ := taskBadge(t)
	return s
}

// stackLayout stacks rows vertically without padding between them.
type stackLayout struct{}

func (stackLayout) Layout(objs []fyne.CanvasObject, size fyne.Size) {
	y := float32(0)
	for _, o := range objs {
		h := o.MinSize().Height
		o.Move(fyne.NewPos(0, y))
		o.Resize(fyne.NewSize(size.Width, h))
		y += h
	}
}

func (stackLayout) MinSize(objs []fyne.CanvasObject) fyne.Size {
	var s fyne.Size
	for _, o := range objs {
		m := o.MinSize()
		s.Width = max(s.Width, m.Width)
		s.Height += m.Height
	}
	return s
}
