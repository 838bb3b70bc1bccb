package ui

import (
	"fmt"
	"image/color"
	"math"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"h3studio/engine/media"
	"h3studio/ui/studio"
	"h3studio/ui/widgets"
)

// The compose panel's media: the first and last frame slots and the
// reference list.

// newFrames makes the first and last frame slots and returns their Swap
// button.
func (c *compose) newFrames() *widget.Button {
	s := c.w.s
	c.first = widgets.NewSlot("First frame", "Drop a picture")
	c.first.OnTap = func() {
		c.w.chooseFile("Choose the first frame", pictureExts, func(p string) { s.Compose().SetFrame(studio.FirstSlot, p) })
	}
	c.first.OnClear = func() { s.Compose().ClearFrame(studio.FirstSlot) }
	c.last = widgets.NewSlot("Last frame", "Drop a picture")
	c.last.OnTap = func() {
		c.w.chooseFile("Choose the last frame", pictureExts, func(p string) { s.Compose().SetFrame(studio.LastSlot, p) })
	}
	c.last.OnClear = func() { s.Compose().ClearFrame(studio.LastSlot) }
	swap := widget.NewButton("Swap", s.Compose().SwapFrames)
	swap.Importance = widget.LowImportance
	c.frameMsgs = container.NewVBox()
	return swap
}

// applyFrames shows the draft's frames and their problems, said once for
// both slots.
func (c *compose) applyFrames(sn studio.Snapshot) {
	c.applySlot(c.first, sn.Draft.First)
	c.applySlot(c.last, sn.Draft.Last)
	frameProblems := dedupe(append(filter(sn.Problems, studio.AtFirst), filter(sn.Problems, studio.AtLast)...))
	for i := range frameProblems {
		frameProblems[i].Where = studio.AtFirst
	}
	problemLabels(c.frameMsgs, frameProblems, studio.AtFirst, -1)
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

// newReferences makes the reference list and returns its Add… button.
func (c *compose) newReferences() *widget.Button {
	s := c.w.s
	c.refList = container.NewVBox()
	c.refHint = subtle("Drop pictures, videos or sound here. They are numbered per kind in this order — Picture 1, Video 1, Audio 1 — and the prompt's label lines follow.")
	c.refHint.Alignment = fyne.TextAlignCenter
	c.refZone = dropZone(c.refHint)
	c.refMsgs = container.NewVBox()
	c.refCount = subtle("")
	c.refCount.Wrapping = fyne.TextWrapOff
	add := widget.NewButtonWithIcon("Add…", theme.ContentAddIcon(), func() {
		c.w.chooseFile("Add a reference", mediaExts, func(p string) { s.Compose().AddReferences([]string{p}) })
	})
	add.Importance = widget.LowImportance
	return add
}

// dropZone frames the empty reference list's hint like a drop target.
func dropZone(hint *widget.Label) fyne.CanvasObject {
	bg := canvas.NewRectangle(theme.Color(theme.ColorNameInputBackground))
	bg.CornerRadius = 8
	bg.StrokeColor = theme.Color(theme.ColorNameSeparator)
	bg.StrokeWidth = 1.5
	return container.NewStack(bg, container.NewPadded(hint))
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
			s.Compose().MoveReference(r.id, to)
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
	r.remove = widget.NewButtonWithIcon("", theme.CancelIcon(), func() { s.Compose().RemoveReference(r.id) })
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
		c.w.chooseFile("Replace the reference", mediaExts, func(p string) { s.Compose().ReplaceReference(r.id, p) })
	}))
	if r.ref.Media.Kind == media.KindVideo {
		sound := fyne.NewMenuItem("Use Its Sound", func() { s.Compose().SetSilent(r.id, !r.ref.Silent) })
		sound.Checked = !r.ref.Silent && r.ref.Sound.Empty()
		items = append(items, sound)
		if r.ref.Sound.Empty() {
			items = append(items, fyne.NewMenuItem("Pair with a Sound File…", func() {
				c.w.chooseFile("Choose the sound for "+r.ref.Media.Name(), soundExts, func(p string) { s.Compose().PairSound(r.id, p) })
			}))
		} else {
			items = append(items, fyne.NewMenuItem("Remove the Paired Sound", func() { s.Compose().PairSound(r.id, "") }))
		}
	}
	items = append(items, fyne.NewMenuItemSeparator(),
		fyne.NewMenuItem("Move Up", func() { s.Compose().MoveReference(r.id, r.index-1) }),
		fyne.NewMenuItem("Move Down", func() { s.Compose().MoveReference(r.id, r.index+1) }),
		fyne.NewMenuItemSeparator(),
		fyne.NewMenuItem("Remove", func() { s.Compose().RemoveReference(r.id) }))
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
