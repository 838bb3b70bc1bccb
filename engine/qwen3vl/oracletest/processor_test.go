package oracletest

import (
	"image"
	"testing"

	"h3studio/engine/media"
	"h3studio/engine/qwen3vl"
)

// TestProcessorUnaligned: the Qwen processors on inputs that need resizing
// (antialiased bicubic down-, up- and mixed scaling; an odd frame count
// padded by repetition) with the pixel limits given in the fixture: grids
// exact, resized frames bit-exact, pixel values the normalize + patchify of
// those frames.
func TestProcessorUnaligned(t *testing.T) {
	f := openST(t, "processor_extra.safetensors")
	var a struct {
		Cases map[string]struct {
			Kind      string `json:"kind"`
			MinPixels int    `json:"min_pixels"`
			MaxPixels int    `json:"max_pixels"`
			Exact     bool   `json:"pixel_values_reproduced_exactly"`
		} `json:"cases"`
	}
	attrs(t, f, &a)
	if len(a.Cases) < 7 {
		t.Fatalf("%d cases", len(a.Cases))
	}
	c, err := qwen3vl.ReadConfig("../testdata/text_encoder")
	if err != nil {
		t.Fatal(err)
	}
	for name, cs := range a.Cases {
		t.Run(name, func(t *testing.T) {
			if !cs.Exact {
				t.Fatal("the fixture's pixel values are not normalize+patchify of its frames")
			}
			pc := qwen3vl.ReleasedProcessor
			lim := qwen3vl.PixelLimits{MinPixels: cs.MinPixels, MaxPixels: cs.MaxPixels}
			if cs.Kind == "image" {
				pc.Image = lim
			} else {
				pc.Video = lim
			}
			proc := qwen3vl.NewProcessor(c, pc)
			in := u8Frames(t, f, "in."+name)
			want := u8Frames(t, f, "out."+name+".resized_u8")
			g := ints(t, f, "out."+name+".grid_thw")
			wantGrid := qwen3vl.Grid{T: int(g[0]), H: int(g[1]), W: int(g[2])}
			var vi qwen3vl.VisionInput
			if cs.Kind == "image" {
				var resized *qwen3vl.RGB
				vi, resized, err = proc.Image(in[0])
				if err != nil {
					t.Fatal(err)
				}
				sameRGB(t, resized, want[0])
			} else {
				vi, err = proc.Video(in)
				if err != nil {
					t.Fatal(err)
				}
				for i, fr := range in {
					sameRGB(t, qwen3vl.ResizeBicubic(fr, want[i].W, want[i].H), want[i])
				}
				for i := len(in); i < len(want); i++ { // padding repeats the last frame
					sameRGB(t, want[len(in)-1], want[i])
				}
			}
			if vi.Grid != wantGrid {
				t.Fatalf("grid %v, want %v", vi.Grid, wantGrid)
			}
			ref, err := proc.Patchify(want)
			if err != nil {
				t.Fatal(err)
			}
			if ref.Grid != vi.Grid || len(ref.Pixels) != len(vi.Pixels) {
				t.Fatalf("patchify of the reference frames: grid %v", ref.Grid)
			}
			for i := range ref.Pixels {
				if ref.Pixels[i] != vi.Pixels[i] {
					t.Fatalf("pixel value %d: %g, want %g", i, vi.Pixels[i], ref.Pixels[i])
				}
			}
		})
	}
}

func sameRGB(t *testing.T, got, want *qwen3vl.RGB) {
	t.Helper()
	if got.W != want.W || got.H != want.H {
		t.Fatalf("size %d×%d, want %d×%d", got.W, got.H, want.W, want.H)
	}
	bad, worst := 0, 0
	for i := range want.Pix {
		d := int(got.Pix[i]) - int(want.Pix[i])
		if d != 0 {
			bad++
			worst = max(worst, d, -d)
		}
	}
	if bad > 0 {
		t.Fatalf("%d of %d values differ (max %d)", bad, len(want.Pix), worst)
	}
}

func toRGBA(m *qwen3vl.RGB) *image.RGBA {
	out := image.NewRGBA(image.Rect(0, 0, m.W, m.H))
	for i := 0; i < m.W*m.H; i++ {
		copy(out.Pix[4*i:4*i+3], m.Pix[3*i:3*i+3])
		out.Pix[4*i+3] = 255
	}
	return out
}

// TestCanvasPillow: engine/media's keyframe stretch and cover-crop and the
// reference-image resize (LANCZOS) against Pillow 12.3, the reference
// environment's version; the result is what the vision tower sees.
func TestCanvasPillow(t *testing.T) {
	f := openST(t, "canvas.safetensors")
	var a struct {
		Cases map[string]struct {
			Op   string `json:"op"`
			W, H int
		} `json:"cases"`
	}
	attrs(t, f, &a)
	if len(a.Cases) < 7 {
		t.Fatalf("%d cases", len(a.Cases))
	}
	for name, cs := range a.Cases {
		t.Run(name, func(t *testing.T) {
			src := toRGBA(u8Frames(t, f, "in."+name)[0])
			var got *image.RGBA
			switch cs.Op {
			case "stretch":
				got = media.FitImage(src, cs.W, cs.H, media.FitStretch)
			case "cover":
				got = media.FitImage(src, cs.W, cs.H, media.FitCover)
			case "resize":
				got = media.Resize(src, cs.W, cs.H, media.Lanczos)
			default:
				t.Fatalf("op %q", cs.Op)
			}
			want := u8Frames(t, f, "out."+name)[0]
			g := &qwen3vl.RGB{W: got.Bounds().Dx(), H: got.Bounds().Dy(), Pix: make([]uint8, 3*got.Bounds().Dx()*got.Bounds().Dy())}
			for i := 0; i < g.W*g.H; i++ {
				copy(g.Pix[3*i:3*i+3], got.Pix[4*i:4*i+3])
			}
			sameRGB(t, g, want)
		})
	}
}
