package audiovae

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// The folded weights are the exact v·(g/‖v‖) rounded once (a released
// decoder row: 1,024 channels × 7 taps): a float32 scale g/‖v‖ rounds
// twice, a systematic error per row the float64 reference does not have.
func TestFoldWeightNormRoundsOnce(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 3))
	const rows, per = 16, 1024 * 7
	v := make([]float32, rows*per)
	g := make([]float32, rows)
	for i := range v {
		v[i] = float32(rng.NormFloat64() / math.Sqrt(per))
	}
	for i := range g {
		g[i] = float32(0.1 * (1 + rng.Float64()))
	}
	got := foldWeightNorm(v, g)
	for o := 0; o < rows; o++ {
		// ‖v‖ and the scale to 200 bits.
		ss := new(big.Float).SetPrec(200)
		for _, x := range v[o*per : (o+1)*per] {
			bx := new(big.Float).SetPrec(200).SetFloat64(float64(x))
			ss.Add(ss, bx.Mul(bx, bx))
		}
		scale := new(big.Float).SetPrec(200).Quo(new(big.Float).SetPrec(200).SetFloat64(float64(g[o])), ss.Sqrt(ss))
		for i, x := range v[o*per : (o+1)*per] {
			e := new(big.Float).SetPrec(200).Mul(new(big.Float).SetPrec(200).SetFloat64(float64(x)), scale)
			want, _ := e.Float32()
			if got[o*per+i] != want {
				ef, _ := e.Float64()
				t.Fatalf("row %d element %d: folded %v, exact %v rounds to %v", o, i, got[o*per+i], ef, want)
			}
		}
	}
}
