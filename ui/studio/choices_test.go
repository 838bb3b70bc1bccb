package studio_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"h3studio/ui/studio"
	"h3studio/ui/studio/fakeengine"
)

// noticeWith is the notice whose text holds s (nil when none).
func noticeWith(sn studio.Snapshot, s string) *studio.Notice {
	for i := range sn.Notices {
		if strings.Contains(sn.Notices[i].Text, s) {
			return &sn.Notices[i]
		}
	}
	return nil
}

func choiceLabels(n *studio.Notice) []string {
	var l []string
	for _, c := range n.Choices {
		l = append(l, c.Label)
	}
	return l
}

// TestOfferChoices: a notice offering choices runs the one taken (in the
// background), goes unless the choice stays, refuses a choice it does not
// have or a folder choice without a folder, and outlives the notices that
// push older ones out.
func TestOfferChoices(t *testing.T) {
	e := newEnv(t, fakeengine.Options{}, false)
	var took []string
	id := e.s.Offer(studio.Warn, "Something needs a decision.",
		studio.Choice{Label: "Show", Stays: true, Do: func(string) { took = append(took, "show") }},
		studio.Choice{Label: "Pick…", AsksFolder: true, Do: func(dir string) { took = append(took, "pick "+dir) }},
	)
	if err := e.s.Choose(id, 2, ""); err == nil {
		t.Error("a choice the notice does not have was taken")
	}
	if err := e.s.Choose(id, 1, ""); err == nil {
		t.Error("a folder choice was taken without a folder")
	}
	for i := 0; i < 8; i++ {
		e.s.Notify(studio.Warn, "filler "+string(rune('a'+i)))
	}
	sn := e.s.Snapshot()
	n := noticeWith(sn, "needs a decision")
	if n == nil || len(sn.Notices) > 6 {
		t.Fatalf("the open question was pushed out, or nothing was: %+v", sn.Notices)
	}
	if got := strings.Join(choiceLabels(n), ","); got != "Show,Pick…" {
		t.Errorf("choices %q", got)
	}
	if err := e.s.Choose(id, 0, ""); err != nil {
		t.Fatal(err)
	}
	e.x.Drain()
	if noticeWith(e.s.Snapshot(), "needs a decision") == nil {
		t.Error("a choice that stays took the notice away")
	}
	if err := e.s.Choose(id, 1, "/some/folder"); err != nil {
		t.Fatal(err)
	}
	e.x.Drain()
	if noticeWith(e.s.Snapshot(), "needs a decision") != nil {
		t.Error("the notice stayed after its choice was taken")
	}
	if strings.Join(took, ";") != "show;pick /some/folder" {
		t.Errorf("took %q", took)
	}
	if err := e.s.Choose(id, 0, ""); err == nil {
		t.Error("a choice of a notice that is gone was taken")
	}
}

// TestLibraryChoice: a remembered library that can't be used is offered
// with Choose Library…, Use Default Library and Retry; Retry uses it only
// once its check passes (it never makes the folder), and every choice
// switches the library and remembers what it says.
func TestLibraryChoice(t *testing.T) {
	e := newEnv(t, fakeengine.Options{}, false)
	dir := t.TempDir()
	gone := filepath.Join(dir, "Archive", "Takes")
	def := e.s.Snapshot().LibraryDir
	var remembered []string
	offer := func() int {
		return e.s.OfferLibraryChoice(studio.LibraryProblem{
			Dir: gone, Text: "The library " + gone + " is missing.", Default: def,
			Check: func(d string) error {
				if _, err := os.Stat(d); err != nil {
					return errors.New("its disk is not connected")
				}
				return nil
			},
			Remember: func(d string) { remembered = append(remembered, d) },
		})
	}
	id := offer()
	n := noticeWith(e.s.Snapshot(), "is missing")
	if n == nil || strings.Join(choiceLabels(n), ",") != "Choose Library…,Use Default Library,Retry" {
		t.Fatalf("notice %+v", n)
	}
	// Retry while the disk is away: asked again, nothing made, nothing
	// remembered.
	e.s.Choose(id, 2, "")
	sn := e.settle(func(sn studio.Snapshot) bool { return noticeWith(sn, "still can't be used") != nil })
	if _, err := os.Stat(gone); err == nil || sn.LibraryDir != def || len(remembered) != 0 {
		t.Fatalf("retry while missing: made %v, library %s, remembered %q", err == nil, sn.LibraryDir, remembered)
	}
	again := noticeWith(sn, "still can't be used")
	if len(again.Choices) != 3 || !strings.Contains(again.Text, "not connected") {
		t.Errorf("asked again %+v", again)
	}
	// The disk is back: Retry switches to it.
	os.MkdirAll(gone, 0o755)
	e.s.Choose(again.ID, 2, "")
	sn = e.settle(func(sn studio.Snapshot) bool { return sn.LibraryDir == gone && sn.LibraryLoaded })
	if noticeWith(sn, "is back") == nil || strings.Join(remembered, ",") != gone {
		t.Errorf("retry with the disk back: notices %v, remembered %q", sn.Notices, remembered)
	}
	// Use Default Library: the default, remembered as "".
	id = offer()
	e.s.Choose(id, 1, "")
	sn = e.settle(func(sn studio.Snapshot) bool { return sn.LibraryDir == def && sn.LibraryLoaded })
	if remembered[len(remembered)-1] != "" || noticeWith(sn, "from now on") == nil {
		t.Errorf("use default: remembered %q, notices %v", remembered, sn.Notices)
	}
	// Choose Library…: the folder given, remembered.
	other := filepath.Join(dir, "Other")
	id = offer()
	e.s.Choose(id, 0, other)
	sn = e.settle(func(sn studio.Snapshot) bool { return sn.LibraryDir == other && sn.LibraryLoaded })
	if remembered[len(remembered)-1] != other {
		t.Errorf("choose: remembered %q", remembered)
	}
	// A chosen folder that can't hold a library: asked again, saying why.
	file := filepath.Join(dir, "file")
	os.WriteFile(file, []byte("x"), 0o644)
	id = offer()
	e.s.Choose(id, 0, filepath.Join(file, "Lib"))
	sn = e.settle(func(sn studio.Snapshot) bool { return noticeWith(sn, "can't hold the library") != nil })
	if sn.LibraryDir != other || len(noticeWith(sn, "can't hold the library").Choices) != 3 {
		t.Errorf("a bad choice: library %s", sn.LibraryDir)
	}
}
