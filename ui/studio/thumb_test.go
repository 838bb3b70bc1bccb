package studio_test

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"h3studio/engine/testkit"
	"h3studio/ui/studio"
	"h3studio/ui/studio/fakeengine"
)

// hugePNG is a valid PNG header for a w×h RGB picture (testkit.PNGHeader)
// followed by a small compressed fragment: decoding it would allocate
// w·h·4 bytes.
func hugePNG(w, h uint32) []byte {
	b := bytes.NewBuffer(testkit.PNGHeader(w, h))
	chunk := func(typ string, data []byte) {
		binary.Write(b, binary.BigEndian, uint32(len(data)))
		b.WriteString(typ)
		b.Write(data)
		binary.Write(b, binary.BigEndian, crc32.ChecksumIEEE(append([]byte(typ), data...)))
	}
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write(make([]byte, 1<<20))
	zw.Close()
	chunk("IDAT", z.Bytes())
	chunk("IEND", nil)
	return b.Bytes()
}

// TestHugeThumbnailIsNotDecoded: a take folder whose thumb.png claims
// 20000×20000 pixels is listed at once, without its thumbnail, instead of
// stalling the library for seconds and gigabytes.
func TestHugeThumbnailIsNotDecoded(t *testing.T) {
	e := newEnv(t, fakeengine.Options{}, false)
	e.tiny()
	e.s.Queue().Generate()
	sn := e.settle(func(sn studio.Snapshot) bool { return len(sn.Takes) == 1 && sn.Takes[0].Thumb != nil })
	if listWithThumb(t, e, sn.Takes[0].Dir, hugePNG(20000, 20000)) != nil {
		t.Error("the huge thumbnail was decoded")
	}
}

// TestLargeThumbnailIsDownscaled: a thumb.png larger than the studio writes
// but within the decode bounds (replaced by hand, 3000×1800) is listed
// downscaled to the thumbnail size, its content kept, not refused; only a
// header past the hard pixel cap is refused.
func TestLargeThumbnailIsDownscaled(t *testing.T) {
	e := newEnv(t, fakeengine.Options{}, false)
	e.tiny()
	e.s.Queue().Generate()
	sn := e.settle(func(sn studio.Snapshot) bool { return len(sn.Takes) == 1 && sn.Takes[0].Thumb != nil })
	dir := sn.Takes[0].Dir
	big := image.NewNRGBA(image.Rect(0, 0, 3000, 1800))
	for y := 0; y < 1800; y++ {
		for x := 0; x < 3000; x++ {
			c := color.NRGBA{R: 200, G: 40, B: 40, A: 255}
			if x >= 1500 {
				c = color.NRGBA{R: 20, G: 60, B: 210, A: 255}
			}
			big.SetNRGBA(x, y, c)
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, big); err != nil {
		t.Fatal(err)
	}
	th := listWithThumb(t, e, dir, b.Bytes())
	if th == nil {
		t.Fatal("a 3000×1800 thumbnail was refused instead of downscaled")
	}
	if got := th.Bounds().Size(); got != image.Pt(320, 192) {
		t.Errorf("thumbnail %v, want 320×192", got)
	}
	r, _, bl, _ := th.At(40, 96).RGBA()
	r2, _, bl2, _ := th.At(280, 96).RGBA()
	if r>>8 < 150 || bl>>8 > 80 || bl2>>8 < 150 || r2>>8 > 80 {
		t.Errorf("downscaled content lost: left %d/%d, right %d/%d (red/blue)", r>>8, bl>>8, r2>>8, bl2>>8)
	}
	// Past the hard cap (4097×4097 claims more than 4096² pixels): refused.
	if listWithThumb(t, e, dir, hugePNG(4097, 4097)) != nil {
		t.Error("a thumbnail past the pixel cap was decoded")
	}
}

// listWithThumb replaces the take's thumb.png in dir with data, lists the
// library afresh (one take expected) and returns that take's thumbnail.
func listWithThumb(t *testing.T, e *env, dir string, data []byte) image.Image {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, studio.ThumbFile), data, 0o644); err != nil {
		t.Fatal(err)
	}
	lib, err := studio.OpenLibrary(e.lib, nil)
	if err != nil {
		t.Fatal(err)
	}
	takes, err := lib.List()
	if err != nil || len(takes) != 1 {
		t.Fatalf("list: %d takes, %v", len(takes), err)
	}
	return takes[0].Thumb
}
