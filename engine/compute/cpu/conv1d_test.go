package cpu

import (
	"math/rand/v2"
	"testing"

	"h3studio/engine/compute"
)

// The 1-D fast paths of Conv and ConvTranspose equal the generic N-d loops
// bit for bit (same products, same order), for any thread count.
func TestConv1DFastPathsMatchGenericBitForBit(t *testing.T) {
	generic := New(Options{Oracles: compute.Oracles(0).With(OracleGenericConv)})
	rng := rand.New(rand.NewPCG(11, 12))
	convs := []struct {
		cin, cout, groups, L, K int
		p                       compute.ConvParams
	}{
		{4, 6, 2, 19, 5, compute.ConvParams{Stride: []int{2}, Dilation: []int{3}, PadBefore: []int{4}, PadAfter: []int{2}}},
		{8, 8, 8, 30, 12, compute.ConvParams{Stride: []int{2}, PadBefore: []int{5}, PadAfter: []int{6}, PadMode: compute.PadReplicate}},
		{5, 7, 1, 23, 7, compute.ConvParams{Dilation: []int{3}, PadBefore: []int{9}, PadAfter: []int{9}}},
		{3, 4, 1, 16, 10, compute.ConvParams{Stride: []int{5}, PadBefore: []int{3}, PadAfter: []int{3}}},
		{2, 3, 1, 9, 3, compute.ConvParams{PadBefore: []int{1}, PadAfter: []int{1}, PadMode: compute.PadReflect}},
	}
	for _, threads := range []int{1, 3} {
		fast := New(Options{Threads: threads})
		for ci, c := range convs {
			x, _ := randT(t, fast, rng, compute.F32, c.cin, c.L)
			w, _ := randT(t, fast, rng, compute.F32, c.cout, c.cin/c.groups, c.K)
			bias, _ := randT(t, fast, rng, compute.F32, c.cout)
			c.p.Groups = c.groups
			O := compute.ConvOutSize(c.L, c.K, c.p.StrideAt(0), c.p.DilationAt(0), c.p.PadBeforeAt(0), c.p.PadAfterAt(0))
			a := compute.MustAlloc(fast, compute.F32, c.cout, O)
			g := compute.MustAlloc(fast, compute.F32, c.cout, O)
			fast.Conv(a, x, w, bias, c.p)
			generic.Conv(g, x, w, bias, c.p)
			sameBits(t, "conv", ci, Float32s(a), Float32s(g))
		}
		transposes := []struct {
			cin, coutG, groups, L, K, stride, crop int
		}{
			{4, 3, 2, 11, 6, 3, 2},
			{8, 1, 8, 17, 12, 2, 15},
			{6, 5, 1, 9, 9, 5, 2},
			{4, 2, 1, 13, 4, 2, 1},
		}
		for ci, c := range transposes {
			x, _ := randT(t, fast, rng, compute.F32, c.cin, c.L+10)
			w, _ := randT(t, fast, rng, compute.F32, c.cin, c.coutG, c.K)
			bias, _ := randT(t, fast, rng, compute.F32, c.coutG*c.groups)
			p := compute.ConvParams{Stride: []int{c.stride}, PadBefore: []int{c.crop}, PadAfter: []int{c.crop}, Groups: c.groups}
			O := compute.ConvTransposeOutSize(c.L+10, c.K, c.stride, 1, c.crop, c.crop)
			a := compute.MustAlloc(fast, compute.F32, c.coutG*c.groups, O)
			g := compute.MustAlloc(fast, compute.F32, c.coutG*c.groups, O)
			fast.ConvTranspose(a, x, w, bias, p)
			generic.ConvTranspose(g, x, w, bias, p)
			sameBits(t, "conv transpose", ci, Float32s(a), Float32s(g))
		}
	}
}

func sameBits(t *testing.T, what string, ci int, a, b []float32) {
	t.Helper()
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("%s case %d: element %d fast %v, generic %v", what, ci, i, a[i], b[i])
		}
	}
}
