package qwen3vl

import (
	"crypto/sha256"
	"fmt"
	"math"
	"testing"
)

// TestSmartResizeTables checks the image and video smart_resize rules
// against transformers 5.17's tables in the oracle's processor fixture
// (exact), uncapped (what H3 runs) and capped (the announced v5.22 default).
func TestSmartResizeTables(t *testing.T) {
	p := openParity(t)
	in, is := p.ints("processor.in.smart_resize.image")
	want, _ := p.ints("processor.out.smart_resize.image")
	for i := 0; i < is[0]; i++ {
		h, w := int(in[2*i]), int(in[2*i+1])
		hb, wb, err := SmartResizeImage(h, w, 32, ReleasedProcessor.Image)
		if err != nil {
			t.Fatal(err)
		}
		if int64(hb) != want[4*i+2] || int64(wb) != want[4*i+3] {
			t.Errorf("image %d×%d → %d×%d, want %d×%d", h, w, hb, wb, want[4*i+2], want[4*i+3])
		}
	}
	vin, vs := p.ints("processor.in.smart_resize.video")
	for _, capped := range []bool{false, true} {
		name := "processor.out.smart_resize.video"
		if capped {
			name += "_capped"
		}
		want, _ := p.ints(name)
		for i := 0; i < vs[0]; i++ {
			n, h, w := int(vin[3*i]), int(vin[3*i+1]), int(vin[3*i+2])
			hb, wb, err := SmartResizeVideo(n, h, w, 2, 32, ReleasedProcessor.Video, capped)
			if err != nil {
				t.Fatal(err)
			}
			if int64(hb) != want[5*i+3] || int64(wb) != want[5*i+4] {
				t.Errorf("capped=%v: video %d×%d×%d → %d×%d, want %d×%d", capped, n, h, w, hb, wb, want[5*i+3], want[5*i+4])
			}
		}
	}
}

// TestUpscaleResize: an image below min_pixels is upscaled by the
// processor; the resized uint8 image must equal transformers' bit for bit
// (its SHA-256 is recorded from the oracle fixture), and the grid too.
func TestUpscaleResize(t *testing.T) {
	p := openParity(t)
	proc := testProcessor(t)
	vi, resized, err := proc.Image(p.rgb("processor.in.image_upscale")[0])
	if err != nil {
		t.Fatal(err)
	}
	if want := p.grids("processor.out.upscale.image_grid_thw")[0]; vi.Grid != want {
		t.Fatalf("grid %v, want %v", vi.Grid, want)
	}
	if got, want := fmt.Sprintf("%x", sha256.Sum256(resized.Pix)), p.f.Header.Metadata["processor.out.upscale.resized_u8.sha256"]; got != want {
		t.Fatalf("resized image differs from transformers' (sha256 %s, want %s)", got, want)
	}
	// pixel_values = (u8 − 127.5)/127.5 of the resized image, patchified.
	if len(vi.Pixels) != vi.Grid.Patches()*1536 {
		t.Fatalf("%d pixel values", len(vi.Pixels))
	}
	first := (float32(resized.Pix[0]) - 127.5) / 127.5
	if vi.Pixels[0] != first {
		t.Fatalf("first value %g, want %g", vi.Pixels[0], first)
	}
}

// TestPatchifyOrder checks the patch row layout on a synthetic image whose
// pixel values encode their coordinates: rows in merge-block order, vectors
// (channel, frame, y, x), a single image repeated over both frames.
func TestPatchifyOrder(t *testing.T) {
	proc := testProcessor(t)
	img := NewRGB(64, 64) // 4×4 patches, 2×2 merge blocks
	for y := 0; y < 64; y++ {
		for x := 0; x < 64; x++ {
			img.Pix[(y*64+x)*3+0] = uint8(y)
			img.Pix[(y*64+x)*3+1] = uint8(x)
			img.Pix[(y*64+x)*3+2] = uint8(y/16*4 + x/16)
		}
	}
	px, g := proc.patchify([]*RGB{img})
	if g != (Grid{T: 1, H: 4, W: 4}) {
		t.Fatalf("grid %v", g)
	}
	val := func(row, c, f, y, x int) int {
		v := px[row*1536+((c*2+f)*16+y)*16+x]
		return int(math.Round(float64(v)*127.5 + 127.5))
	}
	// merge-block order: row 2 is block (0,0) inner (1,0): patch (1, 0).
	for row, want := range [][2]int{{0, 0}, {0, 1}, {1, 0}, {1, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 0}} {
		pr, pc := want[0], want[1]
		for f := 0; f < 2; f++ {
			if got := val(row, 2, f, 5, 7); got != pr*4+pc {
				t.Fatalf("row %d frame %d holds patch %d, want (%d,%d)", row, f, got, pr, pc)
			}
			if y, x := val(row, 0, f, 5, 7), val(row, 1, f, 5, 7); y != pr*16+5 || x != pc*16+7 {
				t.Fatalf("row %d: pixel (%d,%d), want (%d,%d)", row, y, x, pr*16+5, pc*16+7)
			}
		}
	}
}

func TestLinspace64(t *testing.T) {
	for _, n := range []int{2, 3, 12, 22, 47, 48, 96} {
		v := Linspace64(0, 47, n)
		if v[0] != 0 || v[n-1] != 47 {
			t.Fatalf("n=%d: ends %g %g", n, v[0], v[n-1])
		}
		for i := range v {
			if d := math.Abs(v[i] - 47*float64(i)/float64(n-1)); d > 1e-12 {
				t.Fatalf("n=%d i=%d: %g", n, i, v[i])
			}
		}
	}
}

func TestSmartResizeErrors(t *testing.T) {
	if _, _, err := SmartResizeImage(20, 100, 32, ReleasedProcessor.Image); err == nil {
		t.Fatal("20-pixel side accepted")
	}
	if _, _, err := SmartResizeImage(32, 32*201, 32, ReleasedProcessor.Image); err == nil {
		t.Fatal("aspect 201 accepted")
	}
	if _, _, err := SmartResizeVideo(1, 64, 64, 2, 32, ReleasedProcessor.Video, false); err == nil {
		t.Fatal("one-frame video accepted")
	}
	// canvases H3 uses are returned unchanged
	for _, hw := range [][2]int{{768, 1344}, {1344, 768}, {768, 768}, {256, 256}, {480, 864}} {
		h, w, err := SmartResizeImage(hw[0], hw[1], 32, ReleasedProcessor.Image)
		if err != nil || h != hw[0] || w != hw[1] {
			t.Fatalf("%v → %d×%d %v", hw, h, w, err)
		}
	}
}

func testProcessor(t *testing.T) *Processor {
	t.Helper()
	c, err := ReadConfig(testEncoder)
	if err != nil {
		t.Fatal(err)
	}
	pc, err := ReadProcessorConfig(testEncoder, c)
	if err != nil {
		t.Fatal(err)
	}
	return NewProcessor(c, pc)
}
