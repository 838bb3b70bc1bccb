package studio_test

import (
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"h3studio/ui/studio"
	"h3studio/ui/studio/fakeengine"
)

// TestHugePromptIsCutAndKept: a 1 MB paste leaves a prompt of
// MaxPromptRunes characters, a notice says so and where the whole text is,
// and that file holds it.
func TestHugePromptIsCutAndKept(t *testing.T) {
	e := newEnv(t, fakeengine.Options{}, false)
	full := strings.Repeat("A red fox walks through fresh snow; é ", 1<<20/38)
	e.s.SetPrompt(full)
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
