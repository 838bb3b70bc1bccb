package media

import (
	"os"
	"path/filepath"
	"testing"
)

// Fuzz targets for the decoders' entry points. `make test` runs each for a
// few seconds, `make fuzz` for longer. Invariants: no panic, and a decoded
// picture has the size its header announced and passes the size limits.

func addSeeds(f *testing.F, glob string) {
	files, _ := filepath.Glob(glob)
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil && len(b) < 64<<10 {
			f.Add(b)
		}
	}
}

func FuzzDecodeImage(f *testing.F) {
	for _, g := range []string{"testdata/pil/*.png", "testdata/pil/*.jpg", "testdata/pil/*.gif", "testdata/pil/*.webp", "testdata/pil/*.tif"} {
		addSeeds(f, g)
	}
	f.Add(pngHeader(20000, 20000))
	f.Add(jpegHeader(1, 1))
	f.Fuzz(func(t *testing.T, data []byte) {
		hdr, err := ReadImageHeader("fuzz", data)
		if err != nil {
			return
		}
		img, err := DecodeImage("fuzz", data)
		if err != nil {
			return
		}
		if b := img.Bounds(); b.Dx() != hdr.Width || b.Dy() != hdr.Height {
			t.Fatalf("decoded %v, header said %d×%d", b, hdr.Width, hdr.Height)
		}
	})
}

func FuzzDecodeWAV(f *testing.F) {
	addSeeds(f, "testdata/audio/*.wav")
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := DecodeWAV("fuzz", data)
		if err != nil {
			return
		}
		if a.Channels <= 0 || a.Rate <= 0 || len(a.Samples)%a.Channels != 0 || a.Frames() == 0 {
			t.Fatalf("inconsistent audio %d Hz %d ch %d samples", a.Rate, a.Channels, len(a.Samples))
		}
	})
}

func FuzzSniffOrientation(f *testing.F) {
	addSeeds(f, "testdata/pil/orient*")
	f.Fuzz(func(t *testing.T, data []byte) {
		format, _ := Sniff(data)
		if o := Orientation(format, data); o < 1 || o > 8 {
			t.Fatalf("orientation %d", o)
		}
	})
}
