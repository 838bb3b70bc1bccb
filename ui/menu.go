package ui

import (
	"runtime"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"

	"h3studio/ui/studio"
)

// revealLabel is "Reveal in Finder" on macOS; generateKey names ⌘↩ (the
// bundled font has no ↩).
var (
	revealLabel = "Show in Folder"
	generateKey = "Ctrl+Return"
	cmdKey      = "Ctrl+" // the shortcut modifier as the Keyboard Shortcuts list writes it
)

func init() {
	if runtime.GOOS == "darwin" {
		revealLabel, generateKey, cmdKey = "Reveal in Finder", "⌘Return", "⌘"
	}
}

// shortcutList is the Keyboard Shortcuts window's list: key, what it does.
func shortcutList() [][2]string {
	return [][2]string{
		{"Space", "play / pause"},
		{"← →", "previous / next frame"},
		{"Home  End", "first / last frame"},
		{generateKey, "generate (queues while a take runs)"},
		{cmdKey + ".", "cancel the running take"},
		{cmdKey + "Z  ⇧" + cmdKey + "Z", "undo / redo a draft change"},
		{cmdKey + "E", "export the take as MP4"},
		{"Shift+" + cmdKey + "E", "export the timeline's sequence as one MP4"},
		{"J  K  L", "timeline: back 1 s / pause / play"},
		{cmdKey + "Z  Shift+" + cmdKey + "Z", "undo / redo (the text field's, else the timeline's)"},
		{cmdKey + "O", "open a model folder"},
		{cmdKey + ",", "settings"},
	}
}

func shortcut(k fyne.KeyName, mod fyne.KeyModifier) *desktop.CustomShortcut {
	return &desktop.CustomShortcut{KeyName: k, Modifier: mod}
}

var cmd = fyne.KeyModifierShortcutDefault

// mainMenu follows macOS conventions: About and Settings… move to the app
// menu there (Fyne does it by their labels), Quit is added by Fyne.
func (w *Window) mainMenu() *fyne.MainMenu {
	s := w.s
	file := fyne.NewMenu("File",
		&fyne.MenuItem{Label: "Generate", Action: w.compose.doGenerate, Shortcut: shortcut(fyne.KeyReturn, cmd)},
		fyne.NewMenuItem("Generate Seeds…", w.showSeeds),
		fyne.NewMenuItemSeparator(),
		&fyne.MenuItem{Label: "Open Model Folder…", Action: w.chooseModel, Shortcut: shortcut(fyne.KeyO, cmd)},
		fyne.NewMenuItem("Use the Demo Checkpoint", s.Model().UseDemo),
		fyne.NewMenuItem("Model Report…", w.showModelReport),
		fyne.NewMenuItem("Check the Model Folder Again", s.Model().Reload),
		fyne.NewMenuItemSeparator(),
		&fyne.MenuItem{Label: "Export MP4…", Action: w.exportMP4, Shortcut: shortcut(fyne.KeyE, cmd)},
		fyne.NewMenuItem("Export Frames…", w.exportFrames),
		fyne.NewMenuItem("Export Audio…", w.exportAudio),
		&fyne.MenuItem{Label: "Export Sequence…", Action: w.exportSequence, Shortcut: shortcut(fyne.KeyE, cmd|fyne.KeyModifierShift)},
		fyne.NewMenuItemSeparator(),
		fyne.NewMenuItem(revealLabel, func() {
			if t, ok := w.library.selected(); ok {
				w.reveal(t.Dir)
			} else {
				w.reveal(w.snap.LibraryDir)
			}
		}),
	)
	edit := fyne.NewMenu("Edit",
		&fyne.MenuItem{Label: "Undo", Action: w.undoEdit, Shortcut: &fyne.ShortcutUndo{}},
		&fyne.MenuItem{Label: "Redo", Action: w.redoEdit, Shortcut: &fyne.ShortcutRedo{}},
		&fyne.MenuItem{Label: "Undo Draft Change", Action: s.Compose().Undo},
		&fyne.MenuItem{Label: "Redo Draft Change", Action: s.Compose().Redo},
		fyne.NewMenuItemSeparator(),
		&fyne.MenuItem{Label: "Cut", Action: func() { w.editShortcut(&fyne.ShortcutCut{Clipboard: fyne.CurrentApp().Clipboard()}) }, Shortcut: &fyne.ShortcutCut{}},
		&fyne.MenuItem{Label: "Copy", Action: func() { w.editShortcut(&fyne.ShortcutCopy{Clipboard: fyne.CurrentApp().Clipboard()}) }, Shortcut: &fyne.ShortcutCopy{}},
		&fyne.MenuItem{Label: "Paste", Action: func() { w.editShortcut(&fyne.ShortcutPaste{Clipboard: fyne.CurrentApp().Clipboard()}) }, Shortcut: &fyne.ShortcutPaste{}},
		&fyne.MenuItem{Label: "Select All", Action: func() { w.editShortcut(&fyne.ShortcutSelectAll{}) }, Shortcut: &fyne.ShortcutSelectAll{}},
		fyne.NewMenuItemSeparator(),
		fyne.NewMenuItem("New Seed", func() { s.Compose().RollSeed() }),
		fyne.NewMenuItem("Clear References", s.Compose().ClearReferences),
		fyne.NewMenuItemSeparator(),
		&fyne.MenuItem{Label: "Settings…", Action: w.showSettings, Shortcut: shortcut(fyne.KeyComma, cmd)},
	)
	view := fyne.NewMenu("View",
		fyne.NewMenuItem("Play / Pause (Space)", w.viewer.player.Toggle),
		fyne.NewMenuItem("Previous Frame (←)", func() { w.viewer.player.Step(-1) }),
		fyne.NewMenuItem("Next Frame (→)", func() { w.viewer.player.Step(1) }),
		fyne.NewMenuItem("Loop", func() { w.viewer.player.Loop = !w.viewer.player.Loop; w.viewer.transport() }),
		fyne.NewMenuItem("Play the Sequence", w.timeline.togglePlay),
		fyne.NewMenuItemSeparator(),
		fyne.NewMenuItem("Show the Live Preview", s.Takes().FollowJob),
		fyne.NewMenuItem("Reload the Library", s.Takes().Refresh),
	)
	window := fyne.NewMenu("Window",
		fyne.NewMenuItem("H3 Studio", func() { w.win.RequestFocus() }),
		fyne.NewMenuItem("Models…", w.ShowModels),
		fyne.NewMenuItem("Cancel All Takes", s.Queue().CancelAll),
	)
	help := fyne.NewMenu("Help",
		fyne.NewMenuItem("About", w.showAbout),
		fyne.NewMenuItem("Prompt Format…", w.showPromptHelp),
		fyne.NewMenuItem("Keyboard Shortcuts", w.showKeys),
	)
	return fyne.NewMainMenu(file, edit, view, window, help)
}

// undoEdit is Edit ▸ Undo (⌘Z): a focused text field undoes itself (the
// prompt entry through the draft's history); otherwise the history edited
// last, the draft's or the timeline's, steps back (the other when that one
// has nothing left to undo).
func (w *Window) undoEdit() {
	w.stepHistory(&fyne.ShortcutUndo{}, w.timeline.view.CanUndo, w.snap.CanUndo, w.timeline.tl.Undo, w.s.Compose().Undo)
}

// redoEdit is Edit ▸ Redo (⇧⌘Z, ⌘Y), chosen as undoEdit chooses.
func (w *Window) redoEdit() {
	w.stepHistory(&fyne.ShortcutRedo{}, w.timeline.view.CanRedo, w.snap.CanRedo, w.timeline.tl.Redo, w.s.Compose().Redo)
}

// stepHistory sends sc to a focused text field, else steps the timeline's
// history when it was edited last and can step (or the draft's cannot),
// else the draft's.
func (w *Window) stepHistory(sc fyne.Shortcut, timelineCan, draftCan bool, timeline, draft func()) {
	if _, ok := w.win.Canvas().Focused().(fyne.Shortcutable); ok {
		w.editShortcut(sc)
		return
	}
	if w.undoTimeline && timelineCan || !draftCan {
		timeline()
		return
	}
	draft()
}

// editShortcut sends an editing shortcut to the focused field.
func (w *Window) editShortcut(sc fyne.Shortcut) {
	if f, ok := w.win.Canvas().Focused().(fyne.Shortcutable); ok {
		f.TypedShortcut(sc)
	}
}

func (w *Window) addShortcuts() {
	c := w.win.Canvas()
	c.AddShortcut(&fyne.ShortcutUndo{}, func(fyne.Shortcut) { w.undoEdit() })
	c.AddShortcut(&fyne.ShortcutRedo{}, func(fyne.Shortcut) { w.redoEdit() })
	c.AddShortcut(shortcut(fyne.KeyReturn, cmd), func(fyne.Shortcut) { w.compose.doGenerate() })
	c.AddShortcut(shortcut(fyne.KeyEnter, cmd), func(fyne.Shortcut) { w.compose.doGenerate() })
	c.AddShortcut(shortcut(fyne.KeyE, cmd), func(fyne.Shortcut) { w.exportMP4() })
	c.AddShortcut(shortcut(fyne.KeyE, cmd|fyne.KeyModifierShift), func(fyne.Shortcut) { w.exportSequence() })
	// ⇧⌘Z redoes too (⌘Z and ⌘Y arrive as Fyne's Undo and Redo shortcuts,
	// matched by the Edit menu); a text field with the focus keeps it.
	c.AddShortcut(shortcut(fyne.KeyZ, cmd|fyne.KeyModifierShift), func(fyne.Shortcut) { w.redoEdit() })
	c.AddShortcut(shortcut(fyne.KeyComma, cmd), func(fyne.Shortcut) { w.showSettings() })
	c.AddShortcut(shortcut(fyne.KeyO, cmd), func(fyne.Shortcut) { w.chooseModel() })
	c.AddShortcut(shortcut(fyne.KeyPeriod, cmd), func(fyne.Shortcut) {
		if r := w.snap.Running; r != nil {
			w.s.Queue().Cancel(r.ID)
		}
	})
}

var _ = studio.Info
