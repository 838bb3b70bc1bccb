package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"h3studio/engine/compute"
)

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
				r := float32(e)
				ulp := float64(math.Nextafter32(r, float32(math.Inf(1))) - r)
				worst = max(worst, math.Abs(float64(got[i])-e)/ulp)
			}
		}
		t.Logf("logScale %v: worst %.3f ulp", logScale, worst)
		if worst > 0.5001 {
			t.Errorf("Snake (logScale %v): %.3f ulp from the float64 formula; want ≤ 0.5 (one rounding)", logScale, worst)
		}
	}
}
