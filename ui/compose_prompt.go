package ui

import (
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"h3studio/ui/studio"
)

// The compose panel's prompt: the text, its problems and the builder menu.

// newPrompt makes the prompt entry and its builder menu button.
func (c *compose) newPrompt() {
	s := c.w.s
	c.prompt = newPromptEntry(s.Compose().SetPrompt, s.Compose().Undo, s.Compose().Redo)
	c.prompt.SetMinRowsVisible(6)
	c.prompt.SetPlaceHolder("Describe the clip: who and what, where, what happens, the camera, the light, and the sound…")
	c.prompt.OnChanged = func(t string) {
		if !c.updating {
			s.Compose().SetPrompt(t)
		}
	}
	c.builder = widget.NewButtonWithIcon("Builder", theme.MenuDropDownIcon(), c.showBuilderMenu)
	c.builder.IconPlacement = widget.ButtonIconTrailingText
	c.builder.Importance = widget.LowImportance
	c.promptMsgs = container.NewVBox()
}

// applyPrompt shows the draft's prompt and its problems.
func (c *compose) applyPrompt(sn studio.Snapshot) {
	if c.prompt.Text != sn.Draft.Prompt {
		c.prompt.SetText(sn.Draft.Prompt)
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
}

// showBuilderMenu opens the prompt builder's menu.
func (c *compose) showBuilderMenu() {
	s := c.w.s
	b := s.Builder()
	var examples []*fyne.MenuItem
	for i, e := range b.Examples {
		examples = append(examples, fyne.NewMenuItem(e.Title, func() { s.Compose().ApplyExample(i) }))
	}
	ex := fyne.NewMenuItem("Examples", nil)
	ex.ChildMenu = fyne.NewMenu("", examples...)
	keep := fyne.NewMenuItem("Keep Label Lines in Step", func() { s.Compose().SetKeepLabels(!c.w.snap.Draft.KeepLabels) })
	keep.Checked = c.w.snap.Draft.KeepLabels
	menu := fyne.NewMenu("",
		fyne.NewMenuItem("Edit Sections…", c.w.showBuilder),
		fyne.NewMenuItemSeparator(),
		fyne.NewMenuItem("Lay Out for Text or Frames", func() { s.Compose().ApplyTemplate("base") }),
		fyne.NewMenuItem("Lay Out for References", func() { s.Compose().ApplyTemplate("ref2va") }),
		fyne.NewMenuItemSeparator(),
		ex,
		fyne.NewMenuItemSeparator(),
		keep,
	)
	showMenuAt(c.w.win, c.builder, menu)
}
