package media

import (
	"reflect"
	"testing"
)

func TestCanvas(t *testing.T) {
	for _, c := range []struct {
		aw, ah float64
		w, h   int
	}{
		{16, 9, 1344, 768}, {9, 16, 768, 1344}, {1, 1, 768, 768}, {4, 3, 1024, 768},
		{864, 480, 1376, 768}, {1920, 1080, 1344, 768}, {1080, 1920, 768, 1344},
		{32, 32, 768, 768}, {4, 1, 2016, 512}, {1, 4, 512, 2016},
	} {
		w, h, err := Canvas(c.aw, c.ah)
		if err != nil || w != c.w || h != c.h {
			t.Errorf("Canvas(%g,%g) = %d×%d, %v; want %d×%d", c.aw, c.ah, w, h, err, c.w, c.h)
		}
	}
	for _, bad := range [][2]float64{{5, 1}, {1, 5}, {0, 1}, {-1, 1}} {
		if _, _, err := Canvas(bad[0], bad[1]); err == nil {
			t.Errorf("Canvas(%v) accepted", bad)
		}
	}
}

func TestRefImageSize(t *testing.T) {
	for _, c := range []struct {
		w, h   int
		p      RefImagePolicy
		cw, ch int
		ow, oh int
	}{
		// diffusers: 2048 short edge, upscaling included.
		{1920, 1080, RefImageDiffusers, 0, 0, 3648, 2048},
		{640, 480, RefImageDiffusers, 0, 0, 2720, 2048},
		{100, 400, RefImageDiffusers, 0, 0, 2048, 8192},
		// h3.c's own test vectors (h3_reference_image_canvas).
		{1920, 1080, RefImageMatch, 512, 512, 672, 384},
		{640, 480, RefImageMatch, 1024, 1024, 640, 480},
		{4096, 2160, RefImageMax, 0, 0, 3872, 2048},
		{640, 480, RefImageMax, 0, 0, 640, 480},
		{10, 10, RefImageMax, 0, 0, 32, 32},
	} {
		w, h, err := RefImageSize(c.w, c.h, c.p, c.cw, c.ch)
		if err != nil || w != c.ow || h != c.oh {
			t.Errorf("RefImageSize(%d×%d, %q) = %d×%d, %v; want %d×%d", c.w, c.h, c.p, w, h, err, c.ow, c.oh)
		}
	}
	if _, _, err := RefImageSize(1000, 200, RefImageDiffusers, 0, 0); err == nil {
		t.Error("5:1 reference image accepted")
	}
	// Python round: 2048·1.5 = 3072 exactly; 2048·(1001/1000)=2050.048 → 64·round(64.06) = 2048.
	if w, h, _ := RefImageSize(1001, 1000, RefImageDiffusers, 0, 0); w != 2048 || h != 2048 {
		t.Errorf("1001×1000 → %d×%d", w, h)
	}
}

func TestRefVideoCanvas(t *testing.T) {
	for _, c := range []struct {
		w, h   int
		p      RefVideoPolicy
		ow, oh int
	}{
		{1920, 1080, RefVideoReference, 1344, 768},
		{640, 360, RefVideoReference, 1344, 768},
		{1920, 1080, RefVideoH3C, 1344, 768}, // h3.c test vectors
		{640, 360, RefVideoH3C, 640, 352},
		{1080, 1920, RefVideoReference, 768, 1344},
	} {
		w, h, err := RefVideoCanvas(c.w, c.h, c.p)
		if err != nil || w != c.ow || h != c.oh {
			t.Errorf("RefVideoCanvas(%d×%d, %q) = %d×%d, %v; want %d×%d", c.w, c.h, c.p, w, h, err, c.ow, c.oh)
		}
	}
}

func TestKeyframeFits(t *testing.T) {
	for _, c := range []struct {
		p           KeyframePolicy
		first, last bool
		ff, lf      Fit
	}{
		{KeyframesReference, true, true, FitStretch, FitCover},
		{KeyframesReference, true, false, FitStretch, FitStretch},
		{KeyframesReference, false, true, FitStretch, FitStretch}, // last-only is the geometry anchor: stretched
		{KeyframesH3C, false, true, FitStretch, FitCover},         // h3.c always cover-crops the last frame
		{KeyframesH3C, true, true, FitStretch, FitCover},
	} {
		ff, lf := KeyframeFits(c.p, c.first, c.last)
		if ff != c.ff || lf != c.lf {
			t.Errorf("KeyframeFits(%q, %v, %v) = %v, %v; want %v, %v", c.p, c.first, c.last, ff, lf, c.ff, c.lf)
		}
	}
}

func TestCoverGeometry(t *testing.T) {
	// 97×53 onto 64×64: s = 64/53, w·s = 117.13 → 117; crop left (117−64)//2 = 26.
	rw, rh, l, tp := CoverGeometry(97, 53, 64, 64)
	if rw != 117 || rh != 64 || l != 26 || tp != 0 {
		t.Errorf("CoverGeometry = %d %d %d %d", rw, rh, l, tp)
	}
}

func TestSlots(t *testing.T) {
	// 30 fps → 24: scale 0.8; slots 0,1,2,2,3,4,5,6,6,7 (floor(i·0.8+0.5)), end floor(8.5) = 8:
	// frames 2 and 7 are dropped.
	if got, want := Slots(10, 30), []int{0, 1, 3, 4, 5, 6, 8, 9}; !reflect.DeepEqual(got, want) {
		t.Errorf("Slots(10, 30) = %v, want %v", got, want)
	}
	// 12 fps → 24: every frame twice.
	if got, want := Slots(3, 12), []int{0, 0, 1, 1, 2, 2}; !reflect.DeepEqual(got, want) {
		t.Errorf("Slots(3, 12) = %v, want %v", got, want)
	}
	if got := Slots(5, 24); !reflect.DeepEqual(got, []int{0, 1, 2, 3, 4}) {
		t.Errorf("Slots(5, 24) = %v", got)
	}
	// 29.97 fps, 300 frames → floor(300·24/29.97+0.5) = 240 frames.
	if n := len(Slots(300, 30000.0/1001)); n != 240 {
		t.Errorf("len(Slots(300, 29.97)) = %d, want 240", n)
	}
}

func TestVAEFramesAndSamples(t *testing.T) {
	for n, want := range map[int]int{100: 90, 124: 124, 22: 22, 21: 21, 13: 13, 38: 22, 39: 39, 362: 362} {
		if got := VAEFrames(n); got != want {
			t.Errorf("VAEFrames(%d) = %d, want %d", n, got, want)
		}
	}
	for _, c := range [][3]int{{124, 44100, 227850}, {124, 48000, 248000}, {22, 32000, 29333}, {56, 44100, 102900}} {
		if got := SoundtrackSamples(c[0], c[1]); got != c[2] {
			t.Errorf("SoundtrackSamples(%d, %d) = %d, want %d", c[0], c[1], got, c[2])
		}
	}
}
