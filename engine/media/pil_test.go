package media

import (
	"fmt"
	"image"
	"path/filepath"
	"testing"

	"h3studio/engine/testkit"
)

// PIL parity. testdata/gen_pil.py (Debian python3-pil, Pillow 9.4) wrote the
// cases in testdata/pil/manifest.json; each is a source file, an operation
// and PIL's result as PNG. The metric is the per-channel absolute difference
// in 8-bit levels: max and mean over all pixels.

type pilCase struct {
	Op          string `json:"op"`
	Src         string `json:"src"`
	W           int    `json:"w"`
	H           int    `json:"h"`
	Filter      string `json:"filter"`
	Want        string `json:"want"`
	Orientation int    `json:"orientation"`
	Lossy       bool   `json:"lossy"`
}

func loadPIL(t testing.TB) []pilCase {
	t.Helper()
	var m struct{ Cases []pilCase }
	testkit.ReadJSON(t, "testdata/pil/manifest.json", &m)
	return m.Cases
}

func pilImage(t testing.TB, name string) *image.RGBA {
	t.Helper()
	img, err := ReadImageFile(filepath.Join("testdata/pil", name))
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// diff returns the maximum and mean absolute difference of the RGB channels.
func diff(a, b *image.RGBA) (max int, mean float64, err error) {
	if a.Bounds().Size() != b.Bounds().Size() {
		return 0, 0, fmt.Errorf("size %v, want %v", a.Bounds().Size(), b.Bounds().Size())
	}
	sum, n := 0, 0
	for i := 0; i < len(a.Pix); i += 4 {
		for c := 0; c < 3; c++ {
			d := int(a.Pix[i+c]) - int(b.Pix[i+c])
			if d < 0 {
				d = -d
			}
			if d > max {
				max = d
			}
			sum += d
			n++
		}
	}
	return max, float64(sum) / float64(n), nil
}

func TestPILParity(t *testing.T) {
	for _, c := range loadPIL(t) {
		t.Run(c.Want, func(t *testing.T) {
			want := pilImage(t, c.Want)
			var got *image.RGBA
			tol := 0 // bit-exact
			switch c.Op {
			case "resize":
				f := Lanczos
				if c.Filter == "bicubic" {
					f = Bicubic
				}
				got = Resize(pilImage(t, c.Src), c.W, c.H, f)
			case "cover":
				got = FitImage(pilImage(t, c.Src), c.W, c.H, FitCover)
			case "rgb", "exif":
				got = pilImage(t, c.Src)
				if c.Lossy || filepath.Ext(c.Src) == ".jpg" {
					tol = jpegTolerance
				}
			default:
				t.Fatalf("unknown op %q", c.Op)
			}
			max, mean, err := diff(got, want)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s %s: max |Δ| %d, mean %.4f levels", c.Op, c.Src, max, mean)
			if tol > 0 && mean > 0.1 {
				t.Errorf("mean |Δ| = %.4f levels, want ≤ 0.1", mean)
			}
			if max > tol {
				t.Errorf("max |Δ| = %d levels, want ≤ %d (mean %.4f)", max, tol, mean)
			}
		})
	}
}
