package ui

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"h3studio/ui/studio"
)

func TestInsertAtCursor(t *testing.T) {
	for _, c := range []struct {
		text     string
		row, col int
		want     string
	}{
		{"", 0, 0, "X"},
		{"abc", 0, 1, "aXbc"},
		{"abc", 0, 3, "abcX"},
		{"ab\ncd", 1, 0, "ab\nXcd"},
		{"ab\ncd", 0, 2, "abX\ncd"},
		{"ab\ncd", 1, 2, "ab\ncdX"},
		{"é\nü", 1, 1, "é\nüX"},
	} {
		if got := insertAtCursor(c.text, c.row, c.col, "X"); got != c.want {
			t.Errorf("%q at %d:%d: %q, want %q", c.text, c.row, c.col, got, c.want)
		}
	}
}

// TestLongPasteNeverReachesTheEntry: a paste past the prompt's bound goes
// to the studio whole; the entry itself is not given the text.
func TestLongPasteNeverReachesTheEntry(t *testing.T) {
	test.NewTempApp(t)
	var got string
	undos, redos := 0, 0
	e := newPromptEntry(func(s string) { got = s }, func() { undos++ }, func() { redos++ })
	e.SetText("A fox.")
	clip := test.NewClipboard()
	clip.SetContent(strings.Repeat("x", studio.MaxPromptRunes))
	e.TypedShortcut(&fyne.ShortcutPaste{Clipboard: clip})
	if e.Text != "A fox." || len(got) != studio.MaxPromptRunes+len("A fox.") {
		t.Errorf("entry %d characters, studio got %d", len(e.Text), len(got))
	}
	clip.SetContent(" Snow.")
	e.TypedShortcut(&fyne.ShortcutPaste{Clipboard: clip})
	if !strings.Contains(e.Text, "Snow.") {
		t.Errorf("a short paste did not reach the entry: %q", e.Text)
	}
}

func TestPromptEntryUndoIsTheDraftHistory(t *testing.T) {
	test.NewTempApp(t)
	undos, redos := 0, 0
	e := newPromptEntry(func(string) {}, func() { undos++ }, func() { redos++ })
	e.SetText("A fox.")
	e.TypedShortcut(&fyne.ShortcutUndo{})
	e.TypedShortcut(&fyne.ShortcutRedo{})
	if undos != 1 || redos != 1 || e.Text != "A fox." {
		t.Errorf("undo %d, redo %d, text %q", undos, redos, e.Text)
	}
}
