package ui

import (
	"image"
	"image/color"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"h3studio/engine/media"
	"h3studio/ui/internal/uitest"
	"h3studio/ui/studio"
	"h3studio/ui/studio/fakeengine"
)

// TestDropVideoAndSound drops a real MP4 (with a sound track) and a WAV on
// the reference list: the video gets its first frame as a thumbnail, its
// length and "with its sound", the sound an envelope for its waveform,
// and both their type badges.
func TestDropVideoAndSound(t *testing.T) {
	uitest.NeedTools(t, "ffmpeg")
	h := newHarness(t, fakeengine.Options{}, false)
	clip := filepath.Join(h.dir, "walk.mp4")
	writeMP4(t, clip, 60) // 2.5 s
	voice := h.wav("voice.wav", 3)
	h.w.HandleDrop(fyne.NewPos(700, 300), uris(clip, voice))
	sn := h.settle(func(sn studio.Snapshot) bool {
		return len(sn.Draft.References) == 2 && sn.Draft.References[0].Media.State != studio.MediaProbing &&
			sn.Draft.References[1].Media.State != studio.MediaProbing
	})
	v, a := sn.Draft.References[0], sn.Draft.References[1]
	if v.Media.State != studio.MediaReady || v.Media.Kind != media.KindVideo {
		t.Fatalf("video reference %+v", v.Media)
	}
	if v.Media.Thumb == nil || v.Media.Thumb.Bounds().Dx() == 0 {
		t.Error("no thumbnail for the video")
	}
	if d := v.Media.Info.Duration; d < 2400*time.Millisecond || d > 2600*time.Millisecond || !v.Media.Info.HasAudio {
		t.Errorf("video read as %v long, sound %v", d, v.Media.Info.HasAudio)
	}
	if len(a.Media.Peaks) == 0 {
		t.Error("no envelope for the sound's waveform")
	}
	if got := strings.Join(sn.Labels, ","); got != "Video 1,Audio 1" {
		t.Errorf("labels %s", got)
	}
	rv := h.w.compose.refRows[v.ID]
	if rv.badge.Text != "Video 1" || !strings.Contains(rv.sub.Text, "2.5 s") || !strings.Contains(rv.sub.Text, "with its sound") {
		t.Errorf("video row: badge %q, %q", rv.badge.Text, rv.sub.Text)
	}
	if ra := h.w.compose.refRows[a.ID]; ra.badge.Text != "Audio 1" || !strings.Contains(ra.sub.Text, "3.0 s") {
		t.Errorf("sound row: badge %q, %q", ra.badge.Text, ra.sub.Text)
	}
	for _, p := range sn.Problems {
		if p.Where == studio.AtReferences {
			t.Errorf("a legal video + sound pair is flagged: %s", p)
		}
	}
}

// writeMP4 writes frames of a moving gradient with a tone through the
// build's MP4 writer.
func writeMP4(t *testing.T, path string, frames int) {
	t.Helper()
	s, err := media.NewMP4Sink(path, media.MP4Options{})
	if err != nil {
		t.Fatal(err)
	}
	const w, h = 64, 48
	if err := s.Begin(media.Format{Width: w, Height: h, FPS: media.FPS, Frames: frames, SampleRate: media.SampleRate, Channels: media.NumChannels}); err != nil {
		t.Fatal(err)
	}
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for f := 0; f < frames; f++ {
		for i := 0; i < len(img.Pix); i += 4 {
			x := (i / 4) % w
			img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = uint8(x*4+f), uint8(f*3), 120, 255
		}
		if err := s.WriteFrame(img); err != nil {
			t.Fatal(err)
		}
	}
	n := frames * media.SampleRate / media.FPS
	a := media.Audio{Rate: media.SampleRate, Channels: media.NumChannels, Samples: make([]float32, n*media.NumChannels)}
	for i := range a.Samples {
		a.Samples[i] = 0.2 * float32((i/80)%2*2-1)
	}
	if err := s.WriteAudio(a); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestDropBetweenReferences: files dropped on the reference list land
// between the rows around the drop point (the upper half of a row inserts
// before it, the lower half after it), in the order given, and the badges
// renumber; a drop elsewhere still appends.
func TestDropBetweenReferences(t *testing.T) {
	h := newHarness(t, fakeengine.Options{}, false)
	a := h.file("a.png", pngBytes(color.RGBA{220, 90, 30, 255}))
	voice := h.wav("voice.wav", 3)
	b := h.file("b.png", pngBytes(color.RGBA{30, 90, 220, 255}))
	c := h.file("c.png", pngBytes(color.RGBA{30, 220, 90, 255}))
	d := h.file("d.png", pngBytes(color.RGBA{90, 30, 220, 255}))
	order := func(sn studio.Snapshot) []string {
		var got []string
		for _, r := range sn.Draft.References {
			got = append(got, r.Media.Path)
		}
		return got
	}
	ready := func(n int) func(studio.Snapshot) bool {
		return func(sn studio.Snapshot) bool {
			if len(sn.Draft.References) != n {
				return false
			}
			for _, r := range sn.Draft.References {
				if r.Media.State != studio.MediaReady {
					return false
				}
			}
			return len(h.w.compose.refRows) == n
		}
	}

	h.w.HandleDrop(fyne.NewPos(700, 300), uris(a, voice))
	h.settle(ready(2))

	// The upper half of the first row: before it.
	pos, ok := h.w.ReferenceDropPoint(0, true)
	if !ok {
		t.Fatal("no first reference row")
	}
	h.w.HandleDrop(pos, uris(b))
	sn := h.settle(ready(3))
	if want := []string{b, a, voice}; !slices.Equal(order(sn), want) {
		t.Fatalf("after a drop above row 1: %v, want %v", order(sn), want)
	}
	if got := h.w.compose.refRows[sn.Draft.References[0].ID].badge.Text; got != "Picture 1" {
		t.Errorf("the dropped picture's badge is %q, want Picture 1", got)
	}

	// The lower half of the second row: after it, two files in their order.
	pos, _ = h.w.ReferenceDropPoint(1, false)
	h.w.HandleDrop(pos, uris(c, d))
	sn = h.settle(ready(5))
	if want := []string{b, a, c, d, voice}; !slices.Equal(order(sn), want) {
		t.Fatalf("after a drop below row 2: %v, want %v", order(sn), want)
	}
	if got := sn.Labels; len(got) != 5 || got[3] != "Picture 4" || got[4] != "Audio 1" {
		t.Errorf("labels %v", got)
	}
}
