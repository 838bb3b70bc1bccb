package cpu

import (
	"h3studio/engine/compute"
)

// Pad copies x into dst with per-axis borders (zeros, reflect or replicate).
func (b *Backend) Pad(dst, x *compute.Tensor, p compute.PadParams) {
	compute.CheckPad(dst, x, p)
	r := x.Rank()
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
			src, zero := 0, false
			unravel(idx[:r-1], row, ds[:r-1])
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
