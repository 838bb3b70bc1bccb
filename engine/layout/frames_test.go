package layout

import (
	"math"
	"strings"
	"testing"
)

func TestTemporalFor(t *testing.T) {
	// h3.c tests/test_h3.c test_temporal_and_canvas, plus spec §5.2 examples.
	cases := []struct{ requested, frames, latent, audio int }{
		{1, 5, 2, 8}, {5, 5, 2, 8}, {6, 22, 7, 37}, {22, 22, 7, 37},
		{23, 39, 12, 65}, {56, 56, 17, 93}, {107, 107, 32, 178}, {124, 124, 37, 207},
		{240, 243, 72, 405}, {361, 362, 107, 603}, {362, 362, 107, 603},
	}
	for _, c := range cases {
		got, err := TemporalFor(c.requested)
		if err != nil {
			t.Fatalf("TemporalFor(%d): %v", c.requested, err)
		}
		want := Temporal{c.frames, c.latent, c.audio}
		if got != want {
			t.Errorf("TemporalFor(%d) = %+v, want %+v", c.requested, got, want)
		}
	}
	for _, bad := range []int{0, -3, 363, 1000} {
		if _, err := TemporalFor(bad); err == nil {
			t.Errorf("TemporalFor(%d) accepted", bad)
		}
	}
}

func TestAlignFramesProperties(t *testing.T) {
	for f := 1; f <= 2000; f++ {
		a, err := AlignFrames(f)
		if err != nil {
			t.Fatal(err)
		}
		if !IsAligned(a) || a < f || a-f >= FramesPerChunk && f >= MinFrames {
			t.Fatalf("AlignFrames(%d) = %d", f, a)
		}
		if IsAligned(f) != (a == f) {
			t.Fatalf("IsAligned(%d) = %v but AlignFrames = %d", f, IsAligned(f), a)
		}
		if IsAligned(a) {
			lt, err := LatentFrames(a)
			if err != nil || lt != 5*((a-5)/17)+2 {
				t.Fatalf("LatentFrames(%d) = %d, %v", a, lt, err)
			}
			// A = round(5F/3) is never a tie for legal F, so REF's and h3.c's rounding agree.
			if got, want := AudioLatents(a), int(math.Round(float64(a)*40/24)); got != want {
				t.Fatalf("AudioLatents(%d) = %d, h3.c gives %d", a, got, want)
			}
		}
	}
	if _, err := LatentFrames(23); err == nil {
		t.Error("LatentFrames(23) accepted an unaligned count")
	}
}

func TestFramesFromSeconds(t *testing.T) {
	cases := []struct {
		s    float64
		want int
	}{
		{10, 243}, {5, 124}, {0.5, 22}, {1.0 / 48, 5}, {15, 362}, {0.9167, 22}, {4.458, 107},
	}
	for _, c := range cases {
		got, err := FramesFromSeconds(c.s)
		if err != nil || got != c.want {
			t.Errorf("FramesFromSeconds(%v) = %d, %v; want %d", c.s, got, err, c.want)
		}
	}
	for _, bad := range []float64{0, -1, math.NaN(), math.Inf(1), 1e-3, 1e9} {
		if _, err := FramesFromSeconds(bad); err == nil {
			t.Errorf("FramesFromSeconds(%v) accepted", bad)
		}
	}
}

func TestReferenceVideoFrames(t *testing.T) {
	cases := map[int]int{1: 1, 13: 13, 21: 21, 22: 22, 38: 22, 39: 39, 100: 90, 124: 124, 130: 124}
	for f, want := range cases {
		if got := ReferenceVideoFrames(f); got != want {
			t.Errorf("ReferenceVideoFrames(%d) = %d, want %d", f, got, want)
		}
	}
}

func TestCanvas(t *testing.T) {
	resolve := []struct {
		aw, ah float64
		w, h   int
	}{
		{16, 9, 1344, 768}, {9, 16, 768, 1344}, {1920, 1080, 1344, 768}, {1080, 1920, 768, 1344},
		{864, 480, 1376, 768}, {32, 32, 768, 768}, {4, 3, 1024, 768}, {4, 1, 2016, 512}, {1, 4, 512, 2016},
	}
	for _, c := range resolve {
		got, err := ResolveCanvas(c.aw, c.ah)
		if err != nil || got != (Canvas{c.w, c.h}) {
			t.Errorf("ResolveCanvas(%v, %v) = %v, %v; want %d×%d", c.aw, c.ah, got, err, c.w, c.h)
		}
		if err != nil {
			continue
		}
		// Rounding may leave the reference's canvas above the budget (864:480 → 1376×768);
		// FitCanvas brings it within, keeping multiples of 32.
		fit := FitCanvas(got)
		if err := fit.Validate(); err != nil {
			t.Errorf("FitCanvas(%v) = %v: %v", got, fit, err)
		}
		if got.Validate() == nil && fit != got {
			t.Errorf("FitCanvas changed the valid canvas %v to %v", got, fit)
		}
	}
	for _, bad := range [][2]float64{{5, 1}, {1, 5}, {0, 1}, {1, -1}, {math.NaN(), 1}, {math.Inf(1), 1}} {
		if _, err := ResolveCanvas(bad[0], bad[1]); err == nil {
			t.Errorf("ResolveCanvas(%v) accepted", bad)
		}
	}

	valid := []Canvas{{32, 32}, {512, 512}, {864, 480}, {1344, 768}, {768, 1344}, {32, 32256}}
	for _, c := range valid {
		if err := c.Validate(); err != nil {
			t.Errorf("%v: %v", c, err)
		}
	}
	invalid := map[Canvas]string{
		{0, 512}: "multiples", {31, 32}: "multiples", {500, 512}: "multiples", {512, 16}: "multiples",
		{1376, 768}: "pixel limit", {1024, 1024}: "pixel limit",
	}
	for c, rule := range invalid {
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), rule) {
			t.Errorf("%v: got %v, want an error about %q", c, err, rule)
		}
	}
	if got := FitCanvas(Canvas{1376, 768}); got != (Canvas{1344, 768}) {
		t.Errorf("FitCanvas(1376×768) = %v, want 1344×768", got)
	}
	if h, w := (Canvas{864, 480}).Latent(); h != 30 || w != 54 {
		t.Errorf("latent of 864×480 = %d×%d", h, w)
	}
	if n := (Canvas{1344, 768}).RowsPerFrame(); n != 1008 {
		t.Errorf("rows per frame of 1344×768 = %d", n)
	}
}

func TestValidateRender(t *testing.T) {
	out := Canvas{864, 480}
	ok := []Canvas{{864, 480}, {576, 320}, {288, 160}}
	for _, r := range ok {
		if err := ValidateRender(r, out); err != nil {
			t.Errorf("render %v for %v: %v", r, out, err)
		}
	}
	bad := map[Canvas]string{
		{1728, 960}: "larger", {512, 288}: "aspect", {576, 300}: "multiples", {864, 448}: "aspect",
	}
	for r, rule := range bad {
		err := ValidateRender(r, out)
		if err == nil || !strings.Contains(err.Error(), rule) {
			t.Errorf("render %v for %v: got %v, want an error about %q", r, out, err, rule)
		}
	}
}

func TestReferenceImageCanvas(t *testing.T) {
	cases := []struct{ w, h, cw, ch int }{
		{1920, 1080, 3648, 2048}, {1080, 1920, 2048, 3648}, {2048, 2048, 2048, 2048}, {64, 64, 2048, 2048},
		{4000, 1000, 8192, 2048}, {333, 500, 2048, 3072},
	}
	for _, c := range cases {
		got, err := ReferenceImageCanvas(c.w, c.h)
		if err != nil || got != (Canvas{c.cw, c.ch}) {
			t.Errorf("ReferenceImageCanvas(%d, %d) = %v, %v; want %d×%d", c.w, c.h, got, err, c.cw, c.ch)
		}
	}
	for _, bad := range [][2]int{{0, 10}, {10, -1}, {401, 100}, {100, 401}} {
		if _, err := ReferenceImageCanvas(bad[0], bad[1]); err == nil {
			t.Errorf("ReferenceImageCanvas(%v) accepted", bad)
		}
	}
}
