package studio_test

import (
	"image/png"
	"os"
	"testing"

	"h3studio/ui/studio"
)

func TestSampleClip(t *testing.T) {
	c := studio.SampleClip()
	if c.Len() != 48 || c.Audio.Frames() != 2*32000 || len(c.Peaks) == 0 {
		t.Fatalf("sample: %d frames, %d sound frames", c.Len(), c.Audio.Frames())
	}
	img := c.Frame(10)
	colours := map[uint32]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			colours[r>>8<<16|g>>8<<8|bl>>8] = true
		}
	}
	if len(colours) < 1000 {
		t.Errorf("sample frame has only %d colours", len(colours))
	}
	if p := os.Getenv("H3_SAMPLE_PNG"); p != "" { // look at it: H3_SAMPLE_PNG=/tmp/s.png go test -run Sample
		f, _ := os.Create(p)
		png.Encode(f, img)
		f.Close()
	}
}
