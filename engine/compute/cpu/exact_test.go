package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"h3studio/engine/compute"
	"h3studio/engine/testkit"
)

// The audio VAE's kernels (Conv, ConvTranspose, Snake) at the released widths
// round the exact value once.

// 1-D Conv and ConvTranspose at the released audio decoder's widths
// (conv_pre: 2,048 channels × 7 taps; ups.0: 1,024 channels, 9 taps,
// stride 5) round the exact sum once: every output is within one float32
// ulp of the float64 result and the rel-L2 is that of a single rounding.
// Float32 accumulation (OracleConv1DFloat32Accumulate) is ~10× further off
// (measured: conv 7.0e-7, transpose 8.1e-7, against 2.5e-8 here), which
// over the decoder's ~150 convolutions is what moved the waveform 1.1e-5
// from exact arithmetic.
func TestConv1DReleasedWidthRoundsOnce(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 1))
	b := New(Options{Threads: 2})
	f32acc := New(Options{Threads: 2, Oracles: compute.Oracles(0).With(OracleConv1DFloat32Accumulate)})

	const cin, cout, K, L = 2048, 4, 7, 40
	x, xv := randT(t, b, rng, compute.F32, cin, L)
	w, wv := randT(t, b, rng, compute.F32, cout, cin, K)
	bias, bv := randT(t, b, rng, compute.F32, cout)
	exact := make([]float64, cout*L)
	for oc := 0; oc < cout; oc++ {
		for o := 0; o < L; o++ {
			s := bv[oc]
			for ci := 0; ci < cin; ci++ {
				for k := 0; k < K; k++ {
					if i := o - 3 + k; i >= 0 && i < L {
						s += xv[ci*L+i] * wv[(oc*cin+ci)*K+k]
					}
				}
			}
			exact[oc*L+o] = s
		}
	}
	p := compute.ConvParams{PadBefore: []int{3}, PadAfter: []int{3}}
	for _, be := range []*Backend{b, f32acc} {
		got := compute.MustAlloc(be, compute.F32, cout, L)
		be.Conv(got, x, w, bias, p)
		checkRoundedOnce(t, "conv", be == b, Float32s(got), exact)
	}

	const tin, tout, tk, stride, crop, tl = 1024, 4, 9, 5, 2, 40
	tx, txv := randT(t, b, rng, compute.F32, tin, tl)
	tw, twv := randT(t, b, rng, compute.F32, tin, tout, tk)
	tb, tbv := randT(t, b, rng, compute.F32, tout)
	O := compute.ConvTransposeOutSize(tl, tk, stride, 1, crop, crop)
	texact := make([]float64, tout*O)
	for oc := 0; oc < tout; oc++ {
		for o := 0; o < O; o++ {
			texact[oc*O+o] = tbv[oc]
		}
		for ci := 0; ci < tin; ci++ {
			for i := 0; i < tl; i++ {
				for k := 0; k < tk; k++ {
					if o := i*stride - crop + k; o >= 0 && o < O {
						texact[oc*O+o] += txv[ci*tl+i] * twv[(ci*tout+oc)*tk+k]
					}
				}
			}
		}
	}
	tp := compute.ConvParams{Stride: []int{stride}, PadBefore: []int{crop}, PadAfter: []int{crop}}
	for _, be := range []*Backend{b, f32acc} {
		got := compute.MustAlloc(be, compute.F32, tout, O)
		be.ConvTranspose(got, tx, tw, tb, tp)
		checkRoundedOnce(t, "conv transpose", be == b, Float32s(got), texact)
	}
}

// checkRoundedOnce requires (strict) or logs (the float32-accumulating
// oracle) that got is exact rounded once: within one ulp everywhere and a
// rel-L2 below 1e-7 (a single rounding gives ~3.4e-8).
func checkRoundedOnce(t *testing.T, what string, strict bool, got []float32, exact []float64) {
	t.Helper()
	worst := 0.0
	for i, e := range exact {
		worst = max(worst, ulpsOff(got[i], e))
	}
	rel := testkit.RelL2(got, exact)
	if !strict {
		t.Logf("%s, float32 accumulation: rel-L2 %.3g, worst %.1f ulp", what, rel, worst)
		return
	}
	t.Logf("%s, float64 accumulation: rel-L2 %.3g, worst %.2f ulp", what, rel, worst)
	if rel >= 1e-7 || worst > 1 {
		t.Errorf("%s: rel-L2 %.3g (want < 1e-7), worst %.2f ulp (want ≤ 1): not the exact sum rounded once", what, rel, worst)
	}
}

// ulpsOff is how far got lies from exact, in ulps of exact rounded to
// float32.
func ulpsOff(got float32, exact float64) float64 {
	r := float32(exact)
	return math.Abs(float64(got)-exact) / float64(math.Nextafter32(r, float32(math.Inf(1)))-r)
}

// Snake and SnakeBeta round the exact value once, also at the magnitudes of
// the released audio encoder's last stages (|x| in the hundreds), where a
// float32 argument α·x alone moves sin² by up to a third of an ulp of the
// result: every output is within half an ulp of the float64 formula.
func TestSnakeRoundsOnce(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 2))
	b := New(Options{Threads: 2})
	const C, L = 8, 4096
	xs := make([]float32, C*L)
	for i := range xs {
		xs[i] = float32(rng.NormFloat64() * 160)
	}
	al := make([]float32, C)
	be := make([]float32, C)
	for c := range al {
		al[c] = float32(0.5 + rng.Float64())
		be[c] = float32(rng.NormFloat64() * 0.2)
	}
	x, _ := compute.FromFloat32(b, compute.F32, compute.Shape{C, L}, xs)
	alpha, _ := compute.FromFloat32(b, compute.F32, compute.Shape{C}, al)
	beta, _ := compute.FromFloat32(b, compute.F32, compute.Shape{C}, be)
	for _, logScale := range []bool{false, true} {
		var bt *compute.Tensor
		if logScale {
			bt = beta
		}
		y := compute.MustAlloc(b, compute.F32, C, L)
		b.Snake(y, x, alpha, bt, logScale)
		got := Float32s(y)
		worst := 0.0
		for c := 0; c < C; c++ {
			a, d := float64(al[c]), float64(al[c])
			if logScale {
				a, d = math.Exp(a), math.Exp(float64(be[c]))
			}
			for i := c * L; i < (c+1)*L; i++ {
				v := float64(xs[i])
				s := math.Sin(a * v)
				e := v + s*s/(d+1e-9)
				worst = max(worst, ulpsOff(got[i], e))
			}
		}
		t.Logf("logScale %v: worst %.3f ulp", logScale, worst)
		if worst > 0.5001 {
			t.Errorf("Snake (logScale %v): %.3f ulp from the float64 formula; want ≤ 0.5 (one rounding)", logScale, worst)
		}
	}
}

// BenchmarkConv1DAccumulate times a released audio decoder convolution
// (a resblock convolution of the 3rd stage: 256 channels, 11 taps, 1,024
// samples) and its transposed upsampler (512 → 256, 4 taps, stride 2) with
// float64 (default) and float32 accumulators. Measured on the shared 2-core
// machine: no difference beyond the noise (Go compiles both to scalar code).
func BenchmarkConv1DAccumulate(bm *testing.B) {
	for _, name := range []string{"float64", "float32"} {
		var o compute.Oracles
		if name == "float32" {
			o = o.With(OracleConv1DFloat32Accumulate)
		}
		b := New(Options{Oracles: o})
		rng := rand.New(rand.NewPCG(1, 2))
		x, _ := randT(bm, b, rng, compute.F32, 256, 1024)
		w, _ := randT(bm, b, rng, compute.F32, 256, 256, 11)
		bias, _ := randT(bm, b, rng, compute.F32, 256)
		y := compute.MustAlloc(b, compute.F32, 256, 1024)
		p := compute.ConvParams{PadBefore: []int{5}, PadAfter: []int{5}}
		bm.Run("conv/"+name, func(bm *testing.B) {
			for bm.Loop() {
				b.Conv(y, x, w, bias, p)
			}
		})
		ux, _ := randT(bm, b, rng, compute.F32, 512, 512)
		uw, _ := randT(bm, b, rng, compute.F32, 512, 256, 4)
		ub, _ := randT(bm, b, rng, compute.F32, 256)
		u := compute.MustAlloc(b, compute.F32, 256, 1024)
		up := compute.ConvParams{Stride: []int{2}, PadBefore: []int{1}, PadAfter: []int{1}}
		bm.Run("transpose/"+name, func(bm *testing.B) {
			for bm.Loop() {
				b.ConvTranspose(u, ux, uw, ub, up)
			}
		})
	}
}
