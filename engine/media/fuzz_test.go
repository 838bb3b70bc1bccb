package media

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"h3studio/engine/testkit"
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
	f.Add(testkit.PNGHeader(20000, 20000))
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

// FuzzWAVHeader: reading a WAV header from the first bytes of a file (what
// Open does) agrees with reading it from the whole file: the same layout,
// or "read more", or an error the whole file also gets.
func FuzzWAVHeader(f *testing.F) {
	addSeeds(f, "testdata/audio/*.wav")
	f.Fuzz(func(t *testing.T, data []byte) {
		full, ferr := parseWAV("fuzz", data, int64(len(data)))
		for _, k := range []int{len(data) / 2, min(len(data), 64), min(len(data), 4096)} {
			head, herr := parseWAV("fuzz", data[:k], int64(len(data)))
			switch {
			case errors.Is(herr, errWAVHead):
			case herr != nil && ferr == nil:
				t.Fatalf("head of %d bytes: %v; whole file: fine", k, herr)
			case herr == nil && ferr != nil:
				t.Fatalf("head of %d bytes: fine; whole file: %v", k, ferr)
			case herr == nil && (head.rate != full.rate || head.ch != full.ch || head.bits != full.bits || head.dataOff != full.dataOff || head.dataLen != full.dataLen):
				t.Fatalf("head of %d bytes: %+v; whole file: %+v", k, head, full)
			}
		}
	})
}
