package ui

import (
	"unicode/utf8"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"

	"h3studio/ui/studio"
)

// promptEntry is the prompt's text entry. A paste that would make the
// prompt longer than studio.MaxPromptRunes never reaches the entry (whose
// layout re-measures the whole text on the UI thread: a 1 MB paste froze
// the window for minutes): the whole text goes to the studio, which cuts
// it, keeps the rest and says so, and the entry shows the cut prompt.
//
// ⌘Z and ⇧⌘Z in the entry are the draft's history (studio Undo/Redo, in
// which typing is grouped) rather than the entry's own text undo, so one
// history holds every change to the draft.
type promptEntry struct {
	widget.Entry
	onLongPaste    func(text string)
	onUndo, onRedo func()
}

func newPromptEntry(onLongPaste func(string), onUndo, onRedo func()) *promptEntry {
	e := &promptEntry{onLongPaste: onLongPaste, onUndo: onUndo, onRedo: onRedo}
	e.MultiLine = true
	e.Wrapping = fyne.TextWrapWord
	e.ExtendBaseWidget(e)
	return e
}

// TypedShortcut implements fyne.Shortcutable.
func (e *promptEntry) TypedShortcut(s fyne.Shortcut) {
	switch s.(type) {
	case *fyne.ShortcutUndo:
		e.onUndo()
		return
	case *fyne.ShortcutRedo:
		e.onRedo()
		return
	}
	if p, ok := s.(*fyne.ShortcutPaste); ok && p.Clipboard != nil {
		clip := p.Clipboard.Content()
		if len(clip)+len(e.Text) > studio.MaxPromptRunes && utf8.RuneCountInString(clip)+utf8.RuneCountInString(e.Text) > studio.MaxPromptRunes {
			e.onLongPaste(insertAtCursor(e.Text, e.CursorRow, e.CursorColumn, clip))
			return
		}
	}
	e.Entry.TypedShortcut(s)
}

// insertAtCursor inserts ins into text at a row and column in runes.
func insertAtCursor(text string, row, col int, ins string) string {
	r := []rune(text)
	i, line, c := 0, 0, 0
	for ; i < len(r) && (line < row || (line == row && c < col)); i++ {
		if r[i] == '\n' {
			if line == row {
				break
			}
			line++
			c = 0
			continue
		}
		if line == row {
			c++
		}
	}
	return string(r[:i]) + ins + string(r[i:])
}
