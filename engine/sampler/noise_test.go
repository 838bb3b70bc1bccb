package sampler

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"h3studio/engine/layout"
)

func fnv(v []float32) uint32 {
	h := uint32(2166136261)
	for _, f := range v {
		b := math.Float32bits(f)
		for k := 0; k < 4; k++ {
			h ^= (b >> (8 * k)) & 255
			h *= 16777619
		}
	}
	return h
}

func TestPortableLog(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	xs := []float64{1, 0.5, 0x1p-53, 1 - 0x1p-53, 2, 1e300, math.E}
	for range 200000 {
		xs = append(xs, float64(r.Uint64()>>11+1)*0x1p-53)
	}
	for _, x := range xs {
		got, want := portableLog(x), math.Log(x)
		if math.Abs(got-want) > 2*ulp(want) {
			t.Fatalf("log(%v) = %v, math.Log %v", x, got, want)
		}
	}
	// Subnormals (amd64's assembly math.Log mishandles them): ln(2^-1074) = -744.4400719213812.
	if got := portableLog(math.SmallestNonzeroFloat64); math.Abs(got+744.4400719213812) > 1e-12 {
		t.Errorf("log(2^-1074) = %v", got)
	}
	if portableLog(1) != 0 || !math.IsInf(portableLog(0), -1) || !math.IsNaN(portableLog(-1)) {
		t.Error("special values")
	}
}

func ulp(x float64) float64 {
	if x == 0 {
		return math.SmallestNonzeroFloat64
	}
	return math.Abs(math.Nextafter(x, math.Inf(1)) - x)
}

func TestSinCosTurns(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	us := []float64{0, 0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 0.875, 1 - 0x1p-53, 0x1p-53}
	for range 200000 {
		us = append(us, float64(r.Uint64()>>11)*0x1p-53)
	}
	for _, u := range us {
		s, c := sinCosTurns(u)
		ws, wc := math.Sincos(2 * math.Pi * u)
		// math.Sincos sees 2πu rounded, an error up to ~4.4e-16 in the angle.
		if math.Abs(s-ws) > 1e-15 || math.Abs(c-wc) > 1e-15 {
			t.Fatalf("sincos(2π·%v) = %v, %v; math %v, %v", u, s, c, ws, wc)
		}
	}
	if s, c := sinCosTurns(0.25); s != 1 || c != 0 {
		t.Errorf("quarter turn = %v, %v", s, c)
	}
}

// The portable stream for seed 42 is fixed forever: these values and this
// checksum are what every platform must produce (run under GOARCH=arm64 on a
// Mac and GOAMD64=v3 here, where the compiler may fuse multiply-adds).
func TestPortableGolden(t *testing.T) {
	s, _ := NewStream(Portable, DefaultSeed)
	v := make([]float32, 1<<20)
	s.Fill(v)
	if first := []float32{0.41471976, 0.65268123, -0.89188623, 1.3268336, 1.729593, -1.8834168}; !slices.Equal(v[:6], first) {
		t.Errorf("seed 42 starts %v, want %v", v[:6], first)
	}
	const wantFNV = 0xf1fbfd36
	if got := fnv(v); got != wantFNV {
		t.Errorf("seed 42 stream checksum %08x, want %08x", got, wantFNV)
	}
	var sum, sq float64
	for _, x := range v {
		sum += float64(x)
		sq += float64(x) * float64(x)
	}
	mean, variance := sum/float64(len(v)), sq/float64(len(v))-sum*sum/float64(len(v))/float64(len(v))
	if math.Abs(mean) > 0.005 || math.Abs(variance-1) > 0.005 {
		t.Errorf("mean %v variance %v over %d values", mean, variance, len(v))
	}
}

func TestPortableStreamSplits(t *testing.T) {
	whole := make([]float32, 300001)
	s, _ := NewStream(Portable, 7)
	s.Fill(whole)
	// Any split of the draws gives the same values, in parallel or not.
	for _, parts := range [][]int{{1, 2, 3, 299995}, {150000, 150001}, {99999, 1, 200001}} {
		s, _ := NewStream(Portable, 7)
		var got []float32
		for _, n := range parts {
			b := make([]float32, n)
			s.Fill(b)
			got = append(got, b...)
		}
		if !slices.Equal(got, whole) {
			t.Fatalf("split %v differs", parts)
		}
	}
	prev := runtime.GOMAXPROCS(1)
	s1, _ := NewStream(Portable, 7)
	serial := make([]float32, len(whole))
	s1.Fill(serial)
	runtime.GOMAXPROCS(prev)
	if !slices.Equal(serial, whole) {
		t.Fatal("serial fill differs from parallel fill")
	}
	other, _ := NewStream(Portable, 8)
	o := make([]float32, 16)
	other.Fill(o)
	if slices.Equal(o, whole[:16]) {
		t.Fatal("seeds 7 and 8 give the same values")
	}
}

// h3.c's generator against a C build of h3_host.c's h3_rng functions
// (glibc libm): the first u32 draws, the first normals, and an FNV-1a
// checksum of 100 000 normals.
func TestPCG(t *testing.T) {
	cases := []struct {
		seed   uint64
		u32    [4]uint32
		fnv    uint32
		normal []float32
	}{
		{42, [4]uint32{2377087137, 2019711770, 2218635040, 856996061}, 0xa30a056e, []float32{-1.06877398, 0.202134639, 0.358374536, 1.0920949, -0.31633991, 0.0464047417}},
		{7, [4]uint32{1496267515, 2854859647, 3571480446, 1337876982}, 0xfb357d54, []float32{-0.741603911, -1.24858487, -0.228904814, 0.56261003, 0.203337014, 1.52382994}},
		{0, [4]uint32{1323604925, 84494338, 141467385, 3537603261}, 0xeaa5e680, []float32{1.52262378, 0.189173371, 1.16654015, -2.33782887, 0.574786007, 0.586015463}},
		{123456789012345, [4]uint32{2706023194, 3248400286, 1094740551, 329511130}, 0x5fd1cd8b, []float32{0.038202446, -0.96045208, 1.4650234, 0.766524315, 0.276628345, -1.85343838}},
	}
	for _, c := range cases {
		g := newPCG(c.seed)
		for i, w := range c.u32 {
			if got := g.u32(); got != w {
				t.Errorf("seed %d draw %d = %d, want %d", c.seed, i, got, w)
			}
		}
		s, _ := NewStream(H3C, c.seed)
		v := make([]float32, 100000)
		s.Fill(v)
		if !slices.Equal(v[:6], c.normal) {
			t.Errorf("seed %d normals %v, want %v", c.seed, v[:6], c.normal)
		}
		if got := fnv(v); got != c.fnv {
			t.Errorf("seed %d checksum %08x, want %08x (glibc)", c.seed, got, c.fnv)
		}
	}
}

func TestInitialNoise(t *testing.T) {
	spec := NoiseSpec{
		Conditions:   []layout.VideoShape{{C: 24, T: 1, H: 4, W: 6}, {C: 24, T: 1, H: 4, W: 6}},
		Video:        layout.VideoShape{C: 24, T: 7, H: 4, W: 6},
		AudioLatents: 37, AudioChannels: 32,
	}
	n, err := InitialNoise(Portable, 42, spec)
	if err != nil {
		t.Fatal(err)
	}
	// REF order: conditions, video, audio from one stream.
	s, _ := NewStream(Portable, 42)
	all := make([]float32, 2*576+4032+2368)
	s.Fill(all)
	got := slices.Concat(n.Conditions[0], n.Conditions[1], n.Video, n.AudioRows)
	if !slices.Equal(got, all) {
		t.Fatal("portable noise is not the stream in packed order")
	}
	again, _ := InitialNoise(Portable, 42, spec)
	if fmt.Sprint(again) != fmt.Sprint(n) {
		t.Fatal("same seed, different noise")
	}

	h, err := InitialNoise(H3C, 42, spec)
	if err != nil {
		t.Fatal(err)
	}
	v := make([]float32, spec.Video.Len())
	newPCG(42).Fill(v)
	if !slices.Equal(h.Video, v) {
		t.Fatal("h3c video noise is not its own generator's stream")
	}
	a := make([]float32, 2368)
	newPCG(42).Fill(a)
	// h3.c's audio is [c][s][k]: row s·A+k, column c.
	if h.AudioRows[(1*37+5)*32+3] != a[(3*2+1)*37+5] {
		t.Fatal("h3c audio order")
	}
	rows, _ := layout.Patchify(nil, h.Conditions[1], spec.Conditions[1], layout.Patch{})
	c := make([]float32, 576)
	newPCG(42).Fill(c)
	if !slices.Equal(rows, c) {
		t.Fatal("h3c condition noise is not drawn in row order from a restarted generator")
	}

	if _, err := InitialNoise("torch", 1, spec); err == nil {
		t.Error("unknown source accepted")
	}
	if _, err := InitialNoise(Portable, 1, NoiseSpec{AudioChannels: 32}); err == nil {
		t.Error("empty spec accepted")
	}
	if src, err := ParseSource(""); err != nil || src != Portable {
		t.Error("default source")
	}
}

// BenchmarkInitialNoise draws the noise of the largest request: 1344×768,
// 362 frames (video [24,107,48,84], audio [1206,32]) with two keyframes.
func BenchmarkInitialNoise(b *testing.B) {
	spec := NoiseSpec{
		Conditions:   []layout.VideoShape{{C: 24, T: 1, H: 48, W: 84}, {C: 24, T: 1, H: 48, W: 84}},
		Video:        layout.VideoShape{C: 24, T: 107, H: 48, W: 84},
		AudioLatents: 603, AudioChannels: 32,
	}
	for _, src := range []Source{Portable, H3C} {
		b.Run(string(src), func(b *testing.B) {
			for b.Loop() {
				if _, err := InitialNoise(src, 42, spec); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(spec.Video.Len()+2*spec.Conditions[0].Len()+2*603*32)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mvalues/s")
		})
	}
}
