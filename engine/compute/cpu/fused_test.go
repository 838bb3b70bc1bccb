package cpu

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"h3studio/engine/compute"
)

// TestFusedIsTheSequence checks, at the released DiT's row and head widths
// and for 1 and 3 threads, that each fused kernel writes exactly the bytes of
// its unfused definition (compute.Unfused*) on this backend. (The
// conformance suite repeats this on small odd shapes for every backend.)
func TestFusedIsTheSequence(t *testing.T) {
	const R, H, S, heads, D, rot = 6, 5376, 5, 3, 128, 96
	for _, dt := range []compute.DType{compute.BF16, compute.F32, compute.F16} {
		for _, threads := range []int{1, 3} {
			b := New(Options{Threads: threads})
			rng := rand.New(rand.NewPCG(uint64(threads), uint64(dt)))
			x, _ := randT(t, b, rng, dt, R, H)
			y, _ := randT(t, b, rng, dt, R, H)
			w, _ := randT(t, b, rng, compute.BF16, H)
			tab, _ := randT(t, b, rng, compute.BF16, 4, 6*H)
			next, _ := randT(t, b, rng, compute.BF16, 4, 6*H)
			rows, _ := compute.FromInt64(b, compute.I32, compute.Shape{R}, []int64{0, 3, 1, 1, 2, 0})
			p := compute.NormModulation{Weight: w, Eps: 1e-5, Table: tab, Rows: rows, ShiftCol: 3 * H, ScaleCol: 4 * H}
			same := func(name string, fused, unfused func(out ...*compute.Tensor), shapes ...[]int) {
				t.Helper()
				var got, want []*compute.Tensor
				for _, s := range shapes {
					got = append(got, compute.MustAlloc(b, dt, s...))
					want = append(want, compute.MustAlloc(b, dt, s...))
				}
				fused(got...)
				unfused(want...)
				for i := range got {
					if !bytes.Equal(Bytes(got[i]), Bytes(want[i])) {
						t.Errorf("%v, %d threads: %s output %d differs from the unfused sequence", dt, threads, name, i)
					}
				}
			}
			same("RMSNormModulate",
				func(o ...*compute.Tensor) { b.RMSNormModulate(o[0], x, p) },
				func(o ...*compute.Tensor) { compute.UnfusedRMSNormModulate(b, o[0], x, p) }, []int{R, H})
			pn := p
			pn.Table = next // the next block's table (cross-block fusion)
			same("GatedAddRMSNormModulate",
				func(o ...*compute.Tensor) {
					b.Copy(o[0], x)
					b.GatedAddRMSNormModulate(o[0], o[1], o[0], y, tab, 2*H, pn)
				},
				func(o ...*compute.Tensor) {
					b.Copy(o[0], x)
					compute.UnfusedGatedAddRMSNormModulate(b, o[0], o[1], o[0], y, tab, 2*H, pn)
				}, []int{R, H}, []int{R, H})

			cos, _ := randT(t, b, rng, compute.BF16, S, rot/2)
			sin, _ := randT(t, b, rng, compute.BF16, S, rot/2)
			nq, _ := randT(t, b, rng, compute.BF16, D)
			nk, _ := randT(t, b, rng, compute.BF16, D)
			for _, l := range []compute.QKVLayout{compute.QKVInterleaved, compute.QKVPlanar} {
				shape := []int{S, heads, 3, D}
				if l == compute.QKVPlanar {
					shape = []int{3, S, heads, D}
				}
				qkv, _ := randT(t, b, rng, dt, shape...)
				for _, rope := range []bool{true, false} {
					qp := compute.QKNormRoPEParams{Layout: l, NormQ: nq, NormK: nk, Eps: 1e-5}
					if rope {
						qp.Cos, qp.Sin, qp.RotDim = cos, sin, rot
					}
					hs := []int{heads, S, D}
					same("QKNormRoPE",
						func(o ...*compute.Tensor) { b.QKNormRoPE(o[0], o[1], o[2], qkv, qp) },
						func(o ...*compute.Tensor) { compute.UnfusedQKNormRoPE(b, o[0], o[1], o[2], qkv, qp) }, hs, hs, hs)
				}
			}
		}
	}
}
