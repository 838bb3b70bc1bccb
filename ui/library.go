package ui

import (
	"fmt"
	"image/color"
	"path/filepath"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"h3studio/ui/studio"
)

// library is the right panel: takes grouped by day, and the selected
// take's details and actions.
type library struct {
	w       *Window
	content fyne.CanvasObject

	list   *widget.List
	items  []libItem
	count  *widget.Label
	empty  *widget.Label
	detail *fyne.Container

	dTitle  *widget.Label
	dPrompt *widget.Label
	dMeta   *widget.Label
	star    *widget.Button
	actions *fyne.Container
	sel     string
	keys    string
}

// libItem is a day heading or a take.
type libItem struct {
	header string
	take   studio.Take
}

func newLibrary(w *Window) *library {
	l := &library{w: w}
	l.count = subtle("")
	l.count.Wrapping = fyne.TextWrapOff
	l.empty = subtle("Every take you generate is saved here, in its own folder with the video, the sound, a thumbnail and a take.json that records everything needed to make it again.")
	l.list = widget.NewList(func() int { return len(l.items) }, l.newRow, l.updateRow)
	l.list.OnSelected = func(id widget.ListItemID) {
		if id < len(l.items) && l.items[id].header == "" {
			t := l.items[id].take
			if t.ID != w.snap.Viewer.TakeID {
				w.s.Takes().StopFollowing()
				w.s.Takes().Show(t.ID)
			}
		}
	}
	l.dTitle = widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	l.dTitle.Wrapping = fyne.TextWrapWord
	l.dPrompt = subtle("")
	l.dPrompt.Truncation = fyne.TextTruncateEllipsis
	l.dPrompt.Wrapping = fyne.TextWrapOff
	l.dMeta = subtle("")
	l.star = widget.NewButtonWithIcon("", starOutlineIcon, func() {
		if t, ok := l.selected(); ok {
			w.s.Takes().SetStarred(t.ID, !t.Meta.Starred)
		}
	})
	l.star.Importance = widget.LowImportance
	act := func(label string, icon fyne.Resource, fn func(studio.Take)) *widget.Button {
		b := widget.NewButtonWithIcon(label, icon, func() {
			if t, ok := l.selected(); ok {
				fn(t)
			}
		})
		b.Alignment = widget.ButtonAlignLeading
		return b
	}
	l.actions = container.NewGridWithColumns(2,
		act("Re-run", theme.ViewRefreshIcon(), func(t studio.Take) { w.s.Takes().Rerun(t.ID, false) }),
		act("New Seed", diceIcon, func(t studio.Take) { w.s.Takes().Rerun(t.ID, true) }),
		act("Chain →", chainIcon, func(t studio.Take) { w.s.Takes().Chain(t.ID) }),
		act("Reference", theme.ContentAddIcon(), func(t studio.Take) { w.s.Takes().UseAsReference(t.ID) }),
		act("Settings", theme.DocumentIcon(), func(t studio.Take) { w.s.Takes().UseSettings(t.ID) }),
		act("Show", theme.FolderOpenIcon(), func(t studio.Take) { w.reveal(t.Dir) }),
		act("Export", theme.DownloadIcon(), func(t studio.Take) { w.exportMP4() }),
		act("Trash", theme.DeleteIcon(), func(t studio.Take) { w.confirmDelete(t) }),
		act("Timeline +", theme.ContentAddIcon(), func(t studio.Take) { w.timeline.tl.AddTake(t.ID, -1) }),
	)
	l.detail = container.NewVBox(widget.NewSeparator(), container.NewBorder(nil, nil, nil, l.star, l.dTitle), l.dPrompt, l.dMeta, l.actions)
	l.detail.Hide()
	header := container.NewHBox(heading("Library"), spacer(), l.count)
	l.content = panel(container.NewBorder(container.NewVBox(header, l.empty), l.detail, nil, nil, l.list))
	return l
}

func (l *library) selected() (studio.Take, bool) {
	for _, t := range l.w.snap.Takes {
		if t.ID == l.sel {
			return t, true
		}
	}
	return studio.Take{}, false
}

func (l *library) newRow() fyne.CanvasObject {
	head := widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	head.SizeName = theme.SizeNameCaptionText
	thumb := canvas.NewImageFromImage(nil)
	thumb.FillMode = canvas.ImageFillCover
	thumb.SetMinSize(fyne.NewSize(72, 42))
	thumbBG := canvas.NewRectangle(color.NRGBA{0, 0, 0, 0x40})
	thumbBG.CornerRadius = 4
	title := widget.NewLabel("")
	title.Truncation = fyne.TextTruncateEllipsis
	meta := widget.NewLabel("")
	meta.SizeName = theme.SizeNameCaptionText
	meta.Importance = widget.LowImportance
	meta.Truncation = fyne.TextTruncateEllipsis
	star := widget.NewIcon(starIcon)
	// The two labels' inner paddings overlap so title and meta sit close
	// together and fit the row (updateRow sizes it to its content).
	text := container.New(layout.NewCustomPaddedVBoxLayout(-theme.InnerPadding()-2), title, meta)
	row := container.NewBorder(nil, nil, container.NewStack(thumbBG, thumb), star, text)
	return container.NewStack(head, row, newTakeDrag(l.w))
}

func (l *library) updateRow(id widget.ListItemID, o fyne.CanvasObject) {
	if id >= len(l.items) {
		return
	}
	it := l.items[id]
	st := o.(*fyne.Container)
	head := st.Objects[0].(*widget.Label)
	row := st.Objects[1].(*fyne.Container)
	if it.header != "" {
		head.SetText(it.header)
		head.Show()
		row.Hide()
		st.Objects[2].(*takeDrag).id = ""
		l.list.SetItemHeight(id, 30)
		return
	}
	head.Hide()
	row.Show()
	t := it.take
	st.Objects[2].(*takeDrag).id = t.ID
	text := row.Objects[0].(*fyne.Container)
	thumbs := row.Objects[1].(*fyne.Container)
	star := row.Objects[2].(*widget.Icon)
	img := thumbs.Objects[1].(*canvas.Image)
	img.Image = t.Thumb
	img.Refresh()
	text.Objects[0].(*widget.Label).SetText(t.Meta.Title)
	text.Objects[1].(*widget.Label).SetText(takeLine(t))
	if t.Meta.Starred {
		star.Show()
	} else {
		star.Hide()
	}
	l.list.SetItemHeight(id, max(58, row.MinSize().Height))
}

func takeLine(t studio.Take) string {
	if t.Damaged != "" {
		return "damaged: " + t.Damaged
	}
	m := t.Meta
	s := fmt.Sprintf("%s · seed %d · %d×%d · %.2f s", m.Created.Local().Format("15:04"), m.Seed, m.Width, m.Height, m.Seconds)
	if m.Model.Engine != "" {
		s += " · " + m.Model.Engine
	}
	return s
}

func dayHeader(t, now time.Time) string {
	y1, m1, d1 := t.Local().Date()
	y2, m2, d2 := now.Local().Date()
	switch {
	case y1 == y2 && m1 == m2 && d1 == d2:
		return "Today"
	case now.Local().AddDate(0, 0, -1).Format("2006-01-02") == t.Local().Format("2006-01-02"):
		return "Yesterday"
	case y1 == y2:
		return t.Local().Format("Monday, 2 January")
	}
	return t.Local().Format("2 January 2006")
}

func (l *library) apply(sn studio.Snapshot) {
	keys := ""
	for _, t := range sn.Takes {
		keys += t.ID + fmt.Sprint(t.Meta.Starred) + "|"
	}
	if keys != l.keys {
		l.keys = keys
		l.items = l.items[:0]
		last := ""
		now := time.Now()
		for _, t := range sn.Takes {
			if h := dayHeader(t.Meta.Created, now); h != last {
				l.items = append(l.items, libItem{header: h})
				last = h
			}
			l.items = append(l.items, libItem{take: t})
		}
		l.list.Refresh()
	}
	switch n := len(sn.Takes); {
	case !sn.LibraryLoaded:
		l.count.SetText("reading…")
	case n == 1:
		l.count.SetText("1 take")
	default:
		l.count.SetText(fmt.Sprintf("%d takes", n))
	}
	if len(sn.Takes) == 0 && sn.LibraryLoaded {
		l.empty.Show()
	} else {
		l.empty.Hide()
	}
	// The selection follows the viewer.
	if sn.Viewer.TakeID != l.sel {
		l.sel = sn.Viewer.TakeID
		for i, it := range l.items {
			if it.header == "" && it.take.ID == l.sel {
				l.list.Select(i)
				l.list.ScrollTo(i)
			}
		}
		if l.sel == "" {
			l.list.UnselectAll()
		}
	}
	t, ok := l.selected()
	if !ok {
		l.detail.Hide()
		return
	}
	l.detail.Show()
	l.dTitle.SetText(t.Meta.Title)
	l.dPrompt.SetText(firstLine(t.Meta.Prompt))
	m := t.Meta
	// One fact group per line, so the narrow panel wraps none of them
	// mid-group.
	meta := fmt.Sprintf("%s · seed %d\n%d×%d · %d frames (%.2f s) · %s\nmade in %s · %s",
		m.Created.Local().Format("2 Jan 15:04"), m.Seed, m.Width, m.Height, m.Frames, m.Seconds,
		studio.QualityOf(m.Settings.Quality).Name, fmtDuration(time.Duration(m.TotalSeconds*float64(time.Second))), modelLine(m.Model))
	if t.Damaged != "" {
		meta = "take.json can't be read: " + t.Damaged + "\n" + filepath.Base(t.Dir)
	}
	l.dMeta.SetText(meta)
	if m.Starred {
		l.star.SetIcon(starIcon)
	} else {
		l.star.SetIcon(starOutlineIcon)
	}
}

func modelLine(m studio.ModelRef) string {
	if m.Engine != "" {
		return m.Engine
	}
	if m.Name != "" {
		return m.Name
	}
	return "model unknown"
}

func firstLine(s string) string {
	return studio.Title(s)
}
