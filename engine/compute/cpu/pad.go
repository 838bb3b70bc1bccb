package cpu

import (
	"h3studio/engine/compute"
)

// Pad copies x into dst with per-axis borders (zeros, reflect or replicate).
func (b *Backend) Pad(dst, x *compute.Tensor, p compute.PadParams) {
	r := x.Rank()
	compute.Check(dst.Rank() == r && r >= 1, "Pad", "x %v into dst %v: ranks differ", x, dst)
	compute.Check(dst.DType() == x.DType(), "Pad", "dtype %v -> %v", x.DType(), dst.DType())
	compute.Check((p.Before == nil || len(p.Before) == r) && (p.After == nil || len(p.After) == r) && (p.Modes == nil || len(p.Modes) == r),
		"Pad", "parameters %+v for rank %d", p, r)
	for a := 0; a < r; a++ {
		lo, hi := p.BeforeAt(a), p.AfterAt(a)
		compute.Check(lo >= 0 && hi >= 0 && dst.Dim(a) == lo+x.Dim(a)+hi, "Pad", "axis %d: %d + %d + %d != %d (x %v dst %v)", a, lo, x.Dim(a), hi, dst.Dim(a), x, dst)
		if p.ModeAt(a) == compute.PadReflect {
			compute.Check(lo < x.Dim(a) && hi < x.Dim(a), "Pad", "axis %d: reflect padding %d/%d needs more than %d elements", a, lo, hi, x.Dim(a))
		}
		if p.ModeAt(a) != compute.PadZeros {
			compute.Check(x.Dim(a) > 0, "Pad", "axis %d: cannot %v-pad an empty axis", a, p.ModeAt(a))
		}
	}
	b.dispatch(0)
	n := dst.NumElements()
	if n == 0 {
		return
	}
	es := x.DType().Size()
	xs, ds := x.Shape(), dst.Shape()
	xb, db := bytesOf(x), bytesOf(dst)
	inner := ds[r-1]
	rows := n / inner
	// Per innermost row of dst: map its leading coordinates to a source row
	// (or to "zero"), then copy the interior in one piece and fill the two
	// borders element by element.
	lo, hi := p.BeforeAt(r-1), p.AfterAt(r-1)
	lastMode := p.ModeAt(r - 1)
	xin := xs[r-1]
	b.parallel(rows, 64, func(r0, r1 int) {
		idx := make([]int, r)
		for row := r0; row < r1; row++ {
			rem := row
			src, zero := 0, false
			for a := r - 2; a >= 0; a-- {
				idx[a] = rem % ds[a]
				rem /= ds[a]
			}
			for a := 0; a < r-1; a++ {
				i, ok := padIndex(idx[a]-p.BeforeAt(a), xs[a], p.ModeAt(a))
				if !ok {
					zero = true
					break
				}
				src = src*xs[a] + i
			}
			out := db[row*inner*es : (row+1)*inner*es]
			if zero {
				clear(out)
				continue
			}
			in := xb[src*xin*es : (src+1)*xin*es]
			copy(out[lo*es:(lo+xin)*es], in)
			for j := 0; j < lo; j++ {
				fill(out[j*es:(j+1)*es], in, j-lo, xin, lastMode, es)
			}
			for j := lo + xin; j < lo+xin+hi; j++ {
				fill(out[j*es:(j+1)*es], in, j-lo, xin, lastMode, es)
			}
		}
	})
}

// fill writes the border element at source coordinate i of a row of n elements.
func fill(dst, row []byte, i, n int, mode compute.PadMode, es int) {
	k, ok := padIndex(i, n, mode)
	if !ok {
		clear(dst)
		return
	}
	copy(dst, row[k*es:(k+1)*es])
}
