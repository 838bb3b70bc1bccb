package ui

import (
	"fmt"

	"fyne.io/fyne/v2"
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

type phaseRow struct {
	name  *widget.Label
	bar   *widgets.Bar
	count *widget.Label
	time  *widget.Label
	box   fyne.CanvasObject
}

func newProgress(w *Window) *progress {
	p := &progress{w: w, rows: map[engine.Phase]*phaseRow{}}
	p.title = widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	p.title.Truncation = fyne.TextTruncateEllipsis
	p.sub = subtle("")
	p.cancel = widget.NewButtonWithIcon("Cancel", theme.CancelIcon(), func() { w.s.Cancel(p.cur) })
	p.grid = container.NewVBox()
	p.foot = widget.NewLabel("")
	p.foot.TextStyle.Monospace = false
	p.queue = subtle("")
	p.clearQ = widget.NewButton("Cancel All", w.s.CancelAll)
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
		r = &phaseRow{name: widget.NewLabel(ph.Name), bar: widgets.NewBar(), count: widget.NewLabel(""), time: widget.NewLabel("")}
		r.count.Alignment = fyne.TextAlignTrailing
		r.time.Alignment = fyne.TextAlignTrailing
		r.count.SizeName = theme.SizeNameCaptionText
		r.time.SizeName = theme.SizeNameCaptionText
		r.name.SizeName = theme.SizeNameCaptionText
		right := container.NewGridWrap(fyne.NewSize(64, r.count.MinSize().Height), r.count)
		right2 := container.NewGridWrap(fyne.NewSize(52, r.time.MinSize().Height), r.time)
		left := container.NewGridWrap(fyne.NewSize(150, r.name.MinSize().Height), r.name)
		r.box = container.NewBorder(nil, nil, left, container.NewHBox(right, right2), r.bar)
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
		row.name.Importance = widget.MediumImportance
		if ph.State == studio.PhasePending {
			row.name.Importance = widget.LowImportance
		}
		row.name.Refresh()
		switch {
		case ph.Total > 0 && ph.State != studio.PhasePending:
			row.count.SetText(fmt.Sprintf("%d/%d", ph.Done, ph.Total))
		case ph.State == studio.PhaseFinished:
			row.count.SetText("done")
		default:
			row.count.SetText("")
		}
		if ph.State != studio.PhasePending && ph.Elapsed > 0 {
			row.time.SetText(fmtDuration(ph.Elapsed))
		} else {
			row.time.SetText("")
		}
		objs = append(objs, row.box)
	}
	p.grid.Objects = objs
	p.grid.Refresh()
	foot := "Elapsed " + fmtDuration(r.Elapsed)
	if r.ETA > 0 {
		foot += " · about " + fmtDuration(r.ETA) + " left"
	} else {
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

func taskTitle(t engine.Task) string {
	s, _ := taskBadge(t)
	return s
}
