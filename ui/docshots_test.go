package ui

import (
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/storage"

	"h3studio/ui/studio"
	"h3studio/ui/studio/fakeengine"
)

// TestDocShots renders window states for docs/ui.md with Fyne's software
// painter (no display): H3_DOC_SHOTS=DIR go test -run DocShots ./ui
func TestDocShots(t *testing.T) {
	dir := os.Getenv("H3_DOC_SHOTS")
	if dir == "" {
		t.Skip("docs: set H3_DOC_SHOTS=DIR to render the documentation screenshots")
	}
	h := newHarness(t, fakeengine.Options{}, false)
	face := h.file("portrait.png", pngBytes(color.RGBA{200, 120, 90, 255}))
	beach := h.file("beach.png", pngBytes(color.RGBA{60, 150, 210, 255}))
	voice := h.wav("voice.wav", 4)
	h.s.Compose().ApplyTemplate("ref2va")
	h.w.HandleDrop(fyne.NewPos(700, 300), []fyne.URI{storage.NewFileURI(face), storage.NewFileURI(beach), storage.NewFileURI(voice)})
	h.settle(func(sn studio.Snapshot) bool {
		return len(sn.Draft.References) == 3 && sn.Draft.References[2].Media.State == studio.MediaReady
	})
	sn := h.w.Snapshot()
	p := sn.Draft.Prompt
	p = replaceOnce(p, "<Picture 1> is", "<Picture 1> is the woman's portrait: her face, hair and red coat.")
	p = replaceOnce(p, "<Picture 2> is", "<Picture 2> is the beach at low tide.")
	p = replaceOnce(p, "<Audio 1> is", "<Audio 1> is her voice.")
	h.s.Compose().SetPrompt(p)
	h.settle(func(sn studio.Snapshot) bool { return sn.Draft.Prompt == p })
	write := func(name string) {
		// The test canvas lays out only on resize (the desktop driver
		// re-lays out whenever a minimum size changes).
		win := h.w.Fyne()
		win.Resize(fyne.NewSize(1399, 859))
		win.Resize(fyne.NewSize(1400, 860))
		img := win.Canvas().Capture()
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		png.Encode(f, img)
		f.Close()
	}
	write("references.png")
}

func replaceOnce(s, old, new string) string {
	for i := 0; i+len(old) <= len(s); i++ {
		if s[i:i+len(old)] == old {
			return s[:i] + new + s[i+len(old):]
		}
	}
	return s
}
