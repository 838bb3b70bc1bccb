package cpu

import (
	"math/rand/v2"
	"testing"

	"h3studio/engine/compute"
)

// naivePad is the definition of Pad in float64: every dst element reads the
// source element its coordinates map to under the axis' border rule.
func naivePad(xf []float64, in []int, p compute.PadParams) ([]float64, []int) {
	r := len(in)
	out := make([]int, r)
	n := 1
	for a := range in {
		out[a] = p.BeforeAt(a) + in[a] + p.AfterAt(a)
		n *= out[a]
	}
	res := make([]float64, n)
	for o := 0; o < n; o++ {
		src, zero := 0, false
		coord := make([]int, r)
		unravel(coord, o, out)
		for a := 0; a < r; a++ {
			i := coord[a] - p.BeforeAt(a)
			switch {
			case i >= 0 && i < in[a]:
			case p.ModeAt(a) == compute.PadReflect:
				if i < 0 {
					i = -i
				} else {
					i = 2*(in[a]-1) - i
				}
			case p.ModeAt(a) == compute.PadReplicate:
				i = min(max(i, 0), in[a]-1)
			default:
				zero = true
			}
			src = src*in[a] + i
		}
		if !zero {
			res[o] = xf[src]
		}
	}
	return res, out
}

func TestPadAgainstDefinition(t *testing.T) {
	Z, R, P := compute.PadZeros, compute.PadReflect, compute.PadReplicate
	cases := []struct {
		in []int
		p  compute.PadParams
	}{
		{[]int{7}, compute.PadParams{Before: []int{5}, After: []int{5}, Modes: []compute.PadMode{P}}},
		{[]int{3, 7}, compute.PadParams{Before: []int{0, 5}, After: []int{0, 6}, Modes: []compute.PadMode{Z, P}}},
		{[]int{2, 3, 4, 5}, compute.PadParams{Before: []int{0, 2, 1, 1}, After: []int{0, 0, 1, 1}, Modes: []compute.PadMode{Z, Z, R, R}}},
		{[]int{2, 3, 4, 5}, compute.PadParams{Before: []int{0, 2, 0, 0}, After: []int{0, 0, 1, 1}, Modes: []compute.PadMode{Z, Z, R, R}}},
		{[]int{3, 1, 4}, compute.PadParams{Before: []int{1, 2, 3}, After: []int{2, 1, 3}, Modes: []compute.PadMode{R, P, R}}},
		{[]int{4, 6}, compute.PadParams{}},
		{[]int{2, 3}, compute.PadParams{Before: []int{1, 1}, After: []int{1, 1}}},
	}
	for _, threads := range []int{1, 3} {
		b := New(Options{Threads: threads})
		rng := rand.New(rand.NewPCG(3, 4))
		for ci, c := range cases {
			for _, dt := range []compute.DType{compute.F32, compute.BF16} {
				x, xf := randT(t, b, rng, dt, c.in...)
				want, out := naivePad(xf, c.in, c.p)
				dst := compute.MustAlloc(b, dt, out...)
				b.Fill(dst, 99) // every element must be overwritten
				b.Pad(dst, x, c.p)
				got := get(t, dst)
				for i := range want {
					if got[i] != want[i] {
						t.Fatalf("threads %d case %d %v: element %d = %v, want %v", threads, ci, dt, i, got[i], want[i])
					}
				}
			}
		}
	}
}

func TestPadRejectsBadGeometry(t *testing.T) {
	b := New(Options{})
	x := compute.MustAlloc(b, compute.F32, 3, 4)
	for i, c := range []struct {
		dst []int
		p   compute.PadParams
	}{
		{[]int{3, 5}, compute.PadParams{Before: []int{0, 2}, After: []int{0, 0}}},                                                   // sizes disagree
		{[]int{3, 12}, compute.PadParams{Before: []int{0, 4}, After: []int{0, 4}, Modes: []compute.PadMode{0, compute.PadReflect}}}, // reflect too wide
		{[]int{3, 6}, compute.PadParams{Before: []int{1}, After: []int{1}}},                                                         // wrong rank of parameters
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("case %d: Pad accepted %v", i, c)
				}
			}()
			b.Pad(compute.MustAlloc(b, compute.F32, c.dst...), x, c.p)
		}()
	}
}
