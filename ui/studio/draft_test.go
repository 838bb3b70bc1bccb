package studio_test

import (
	"image/color"
	"os"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"h3studio/engine"
	"h3studio/ui/studio"
	"h3studio/ui/studio/fakeengine"
)

// TestUndoIsAHistory: every change to the draft is a step of a history
// that Undo walks back and Redo forward, nothing typed or added after a
// replacement is lost, typing in one burst is one step, and a new change
// after Undo starts a new branch.
func TestUndoIsAHistory(t *testing.T) {
	e := newEnv(t, fakeengine.Options{}, false)
	pause := func() { e.skew.Add(int64(2 * time.Second)) }
	s := e.s
	s.Compose().SetPrompt("A")
	s.Compose().SetPrompt("A red")
	s.Compose().SetPrompt("A red fox") // one burst of typing: one step
	pause()
	s.Compose().ApplyExample(0) // a replacement
	example := s.Snapshot().Draft.Prompt
	pause()
	s.Compose().SetPrompt(example + " At dusk.") // typed after the replacement
	pause()
	s.Compose().AddReferences([]string{e.png("a.png", color.RGBA{200, 0, 0, 255})})
	s.Compose().SetSeed(77)
	steps := []func(string) bool{
		func(p string) bool {
			return s.Snapshot().Draft.Settings.Seed != 77 && len(s.Snapshot().Draft.References) == 1
		},
		func(p string) bool { return len(s.Snapshot().Draft.References) == 0 && p == example+" At dusk." },
		func(p string) bool { return p == example },
		func(p string) bool { return p == "A red fox" },
		func(p string) bool { return p == "" },
	}
	for i, ok := range steps {
		s.Compose().Undo()
		if p := s.Snapshot().Draft.Prompt; !ok(p) {
			t.Fatalf("undo %d: prompt %q, %d references", i+1, p, len(s.Snapshot().Draft.References))
		}
	}
	if s.Snapshot().CanUndo || !s.Snapshot().CanRedo {
		t.Error("at the start of the history: CanUndo or not CanRedo")
	}
	for range steps {
		s.Compose().Redo()
	}
	if sn := s.Snapshot(); sn.Draft.Settings.Seed != 77 || len(sn.Draft.References) != 1 || !strings.HasSuffix(sn.Draft.Prompt, "At dusk.") || sn.CanRedo {
		t.Errorf("redo all: seed %d, %d references, prompt %q", sn.Draft.Settings.Seed, len(sn.Draft.References), sn.Draft.Prompt)
	}
	s.Compose().Undo()
	s.Compose().SetPrompt("another branch")
	if s.Snapshot().CanRedo {
		t.Error("a new change after Undo kept the redo steps")
	}
}

// TestRemovingAReferenceKeepsProse: removing references drops only the
// bare label lines the studio wrote; a line the user wrote about a removed
// reference keeps its text (its label marked), the other labels are
// renumbered, and Undo brings back the reference and the prompt.
func TestRemovingAReferenceKeepsProse(t *testing.T) {
	e := newEnv(t, fakeengine.Options{}, false)
	s := e.s
	s.Compose().AddReferences([]string{e.png("a.png", color.RGBA{200, 0, 0, 255}), e.png("b.png", color.RGBA{0, 200, 0, 255}), e.png("c.png", color.RGBA{0, 0, 200, 255})})
	s.Compose().ApplyTemplate("ref2va")
	sn := e.s.Snapshot()
	if !strings.Contains(sn.Draft.Prompt, "<Picture 1>") || !strings.Contains(sn.Draft.Prompt, "<Picture 3>") {
		t.Fatalf("no label lines: %q", sn.Draft.Prompt)
	}
	// The user describes Picture 1 and Picture 3.
	p := strings.Replace(sn.Draft.Prompt, "<Picture 1>", "<Picture 1> is the red lantern on the desk", 1)
	p = strings.Replace(p, "<Picture 3>", "<Picture 3> is the blue sea", 1)
	s.Compose().SetPrompt(p)
	written := s.Snapshot().Draft.Prompt
	e.skew.Add(int64(2 * time.Second))
	s.Compose().RemoveReference(s.Snapshot().Draft.References[0].ID)
	got := s.Snapshot().Draft.Prompt
	if !strings.Contains(got, "the red lantern on the desk") || !strings.Contains(got, "the blue sea") {
		t.Errorf("removing Picture 1 deleted prose:\n%s", got)
	}
	if !strings.Contains(got, "<Picture 2> is the blue sea") || strings.Contains(got, "<Picture 3>") {
		t.Errorf("labels not renumbered:\n%s", got)
	}
	if !strings.Contains(got, "[removed: a.png] is the red lantern") || strings.Count(got, "[removed: a.png]") != 1 {
		t.Errorf("the removed reference's line is not marked, or its bare lines stayed:\n%s", got)
	}
	s.Compose().ClearReferences()
	if got := s.Snapshot().Draft.Prompt; !strings.Contains(got, "the blue sea") || !strings.Contains(got, "the red lantern") {
		t.Errorf("Clear References deleted prose:\n%s", got)
	}
	s.Compose().Undo()
	s.Compose().Undo()
	if sn := s.Snapshot(); sn.Draft.Prompt != written || len(sn.Draft.References) != 3 {
		t.Errorf("undo: %d references, prompt\n%s\nwant\n%s", len(sn.Draft.References), sn.Draft.Prompt, written)
	}
}

// TestSameNoticeIsNotStacked: a message given twice is shown once.
func TestSameNoticeIsNotStacked(t *testing.T) {
	e := newEnv(t, fakeengine.Options{}, false)
	e.s.Notify(studio.Warn, "The disk is full.")
	e.s.Notify(studio.Warn, "The disk is full.")
	n := 0
	for _, x := range e.s.Snapshot().Notices {
		if x.Text == "The disk is full." {
			n++
		}
	}
	if n != 1 {
		t.Errorf("the notice is shown %d times", n)
	}
}

// TestHugePromptIsCutAndKept: a 1 MB paste leaves a prompt of
// MaxPromptRunes characters, a notice says so and where the whole text is,
// and that file holds it.
func TestHugePromptIsCutAndKept(t *testing.T) {
	e := newEnv(t, fakeengine.Options{}, false)
	full := strings.Repeat("A red fox walks through fresh snow; é ", 1<<20/38)
	e.s.Compose().SetPrompt(full)
	sn := e.settle(func(sn studio.Snapshot) bool {
		for _, n := range sn.Notices {
			if strings.Contains(n.Text, "was cut") {
				return true
			}
		}
		return false
	})
	if n := utf8.RuneCountInString(sn.Draft.Prompt); n != studio.MaxPromptRunes || !strings.HasPrefix(full, sn.Draft.Prompt) {
		t.Errorf("prompt of %d characters, want the first %d", n, studio.MaxPromptRunes)
	}
	var text string
	for _, n := range sn.Notices {
		if strings.Contains(n.Text, "was cut") {
			text = n.Text
		}
	}
	i := strings.Index(text, "kept in ")
	if i < 0 {
		t.Fatalf("notice %q does not say where the text is", text)
	}
	path := strings.TrimSuffix(text[i+len("kept in "):], ".")
	if b, err := os.ReadFile(path); err != nil || string(b) != full {
		t.Errorf("the whole text is not in %s: %v", path, err)
	}
}

// TestEveryWayInBoundsThePrompt: a prompt reaches the draft not only by
// typing and pasting: a take made on the command line (whose --prompt-file
// takes up to 1 MB) brings its prompt with Use Settings, and the start-up
// restores the last draft from settings.json. Every way in is bounded as a
// paste is: the draft holds MaxPromptRunes characters, a notice says so,
// and the whole text is kept in a file.
func TestEveryWayInBoundsThePrompt(t *testing.T) {
	e := newEnv(t, fakeengine.Options{}, false)
	long := strings.Repeat("A grey owl blinks in the rain. ", 2*studio.MaxPromptRunes/31)
	cut := func(how string, want string) {
		t.Helper()
		if n := utf8.RuneCountInString(e.s.Snapshot().Draft.Prompt); n != studio.MaxPromptRunes || !strings.HasPrefix(want, e.s.Snapshot().Draft.Prompt) {
			t.Errorf("%s: a prompt of %d characters in the draft, want the first %d", how, n, studio.MaxPromptRunes)
			return
		}
		var notice studio.Notice
		e.settle(func(sn studio.Snapshot) bool {
			for _, n := range sn.Notices {
				if strings.Contains(n.Text, "was cut") {
					notice = n
				}
			}
			return notice.ID != 0
		})
		i := strings.Index(notice.Text, "kept in ")
		if i < 0 {
			t.Fatalf("%s: the notice does not say where the text is: %q", how, notice.Text)
		}
		kept := strings.TrimSuffix(notice.Text[i+len("kept in "):], ".")
		if b, err := os.ReadFile(kept); err != nil || string(b) != want {
			t.Errorf("%s: the whole text is not in %s: %v", how, kept, err)
		}
		e.s.Dismiss(notice.ID)
	}

	e.cliTake("cli-take", engine.TaskT2VA, long, "")
	e.s.Takes().Refresh()
	e.settle(func(sn studio.Snapshot) bool { return len(sn.Takes) == 1 })
	e.s.Takes().UseSettings("cli-take")
	e.settle(func(sn studio.Snapshot) bool { return strings.HasPrefix(sn.Draft.Prompt, "A grey owl") })
	cut("Use Settings of a command-line take", long)

	restored := "Restored: " + long
	e.s.Compose().Restore(studio.SavedDraft{Prompt: restored})
	cut("the start-up's restore", restored)
}
