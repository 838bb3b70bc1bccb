package ui

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"

	"h3studio/ui/studio"
	"h3studio/ui/studio/fakeengine"
)

// TestWindowNoticeChoices: a notice offering choices shows a button per
// choice, and each button does what it says: Retry uses the missing
// library only once it is back, Choose Library… asks for a folder and
// switches to it, Use Default Library switches to the default, and a
// choice that only shows something leaves the notice up.
func TestWindowNoticeChoices(t *testing.T) {
	h := newHarness(t, fakeengine.Options{}, false)
	for _, n := range h.s.Snapshot().Notices {
		h.s.Dismiss(n.ID)
	}
	def := h.lib
	gone := filepath.Join(h.dir, "Archive", "Takes")
	var remembered []string
	offer := func() {
		for _, n := range h.s.Snapshot().Notices {
			h.s.Dismiss(n.ID)
		}
		h.s.OfferLibraryChoice(studio.LibraryProblem{
			Dir: gone, Text: "The library folder " + gone + " can't be found.", Default: def,
			Check: func(d string) error {
				if _, err := os.Stat(d); err != nil {
					return errors.New("its disk is not connected")
				}
				return nil
			},
			Remember: func(d string) { remembered = append(remembered, d) },
		})
		h.settle(func(sn studio.Snapshot) bool { return len(sn.Notices) == 1 && len(sn.Notices[0].Choices) == 3 })
	}
	tap := func(label string) {
		t.Helper()
		b := findButton(h.w.notices.content, label)
		if b == nil {
			t.Fatalf("the notice has no %q button; it shows %q", label, labelTexts(h.w.notices.content, false))
		}
		test.Tap(b)
	}
	offer()
	if txt := strings.Join(labelTexts(h.w.notices.content, false), "\n"); !strings.Contains(txt, gone) {
		t.Errorf("the notice does not name the folder: %q", txt)
	}
	for _, l := range []string{"Choose Library…", "Use Default Library", "Retry"} {
		if findButton(h.w.notices.content, l) == nil {
			t.Errorf("no %q button", l)
		}
	}
	// Retry with the disk away: asked again, saying so.
	tap("Retry")
	sn := h.settle(func(sn studio.Snapshot) bool {
		return len(sn.Notices) == 1 && strings.Contains(sn.Notices[0].Text, "still can't be used")
	})
	if sn.LibraryDir != def || !strings.Contains(strings.Join(labelTexts(h.w.notices.content, false), "\n"), "not connected") {
		t.Errorf("retry while missing: library %s, notice %q", sn.LibraryDir, labelTexts(h.w.notices.content, false))
	}
	if _, err := os.Stat(gone); err == nil {
		t.Error("Retry made the missing library")
	}
	// The disk is back: Retry switches to it.
	os.MkdirAll(gone, 0o755)
	tap("Retry")
	h.settle(func(sn studio.Snapshot) bool { return sn.LibraryDir == gone && sn.LibraryLoaded })
	// Choose Library… opens the folder dialog...
	offer()
	tap("Choose Library…")
	h.topDialog("Choose Library… asks for a folder").Hide()
	// ...and uses the folder picked there.
	other := filepath.Join(h.dir, "Other")
	saved := askFolder
	askFolder = func(_ *Window, _ string, done func(string)) { done(other) }
	t.Cleanup(func() { askFolder = saved })
	tap("Choose Library…")
	h.settle(func(sn studio.Snapshot) bool { return sn.LibraryDir == other && sn.LibraryLoaded })
	// Use Default Library.
	offer()
	tap("Use Default Library")
	h.settle(func(sn studio.Snapshot) bool { return sn.LibraryDir == def && sn.LibraryLoaded })
	if strings.Join(remembered, ",") != gone+","+other+"," {
		t.Errorf("remembered %q", remembered)
	}
	// A choice that stays: the notice is still up after it.
	shown := 0
	h.s.Offer(studio.Warn, "The settings file was damaged.", studio.Choice{Label: "Show File", Stays: true, Do: func(string) { shown++ }})
	h.settle(func(sn studio.Snapshot) bool {
		return len(sn.Notices) > 0 && strings.Contains(sn.Notices[len(sn.Notices)-1].Text, "damaged")
	})
	tap("Show File")
	h.settle(func(studio.Snapshot) bool { return shown == 1 })
	if findButton(h.w.notices.content, "Show File") == nil {
		t.Error("Show File took its notice away")
	}
}
