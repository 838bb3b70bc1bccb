package cpu

import (
	"math"

	"h3studio/engine/compute"
)

// RMSNorm computes x·rsqrt(mean(x²)+eps)·w in float32 with one rounding.
func (b *Backend) RMSNorm(dst, x, w *compute.Tensor, eps float32) {
	rows, D := compute.RMSNormDims(dst, x, w)
	b.dispatch(4 * float64(x.NumElements()))
	xs := load(x)
	ws := loadOpt(w)
	out := output(dst)
	b.parallel(rows, 8, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			rmsNormRow(out[r*D:(r+1)*D], xs[r*D:(r+1)*D], ws, eps)
		}
	})
	store(dst, out)
}

// rmsNormRow writes row·rsqrt(mean(row²)+eps)·ws into o (ws may be nil); o
// may be row. The fused kernels share it, which keeps them bit-identical to
// RMSNorm.
func rmsNormRow(o, row, ws []float32, eps float32) {
	var ss float32
	for _, v := range row {
		ss += v * v
	}
	inv := float32(1 / math.Sqrt(float64(ss/float32(len(row))+eps)))
	for i, v := range row {
		y := v * inv
		if ws != nil {
			y *= ws[i]
		}
		o[i] = y
	}
}

// LayerNorm computes (x−mean)·rsqrt(var+eps)·w + b with one rounding.
func (b *Backend) LayerNorm(dst, x, w, bias *compute.Tensor, eps float32) {
	rows, D := compute.LayerNormDims(dst, x, w, bias)
	b.dispatch(6 * float64(x.NumElements()))
	xs := load(x)
	ws, bs := loadOpt(w), loadOpt(bias)
	out := output(dst)
	b.parallel(rows, 8, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			row := xs[r*D : (r+1)*D]
			var s float32
			for _, v := range row {
				s += v
			}
			mean := s / float32(D)
			var vs float32
			for _, v := range row {
				d := v - mean
				vs += d * d
			}
			inv := float32(1 / math.Sqrt(float64(vs/float32(D)+eps)))
			o := out[r*D : (r+1)*D]
			for i, v := range row {
				y := (v - mean) * inv
				if ws != nil {
					y *= ws[i]
				}
				if bs != nil {
					y += bs[i]
				}
				o[i] = y
			}
		}
	})
	store(dst, out)
}

// GroupNorm normalizes x [C, L...] per group of channels.
func (b *Backend) GroupNorm(dst, x, w, bias *compute.Tensor, groups int, eps float32) {
	C, L := compute.GroupNormDims(dst, x, w, bias, groups)
	b.dispatch(6 * float64(x.NumElements()))
	xs := load(x)
	ws, bs := loadOpt(w), loadOpt(bias)
	out := output(dst)
	cpg := C / groups
	b.parallel(groups, 1, func(lo, hi int) {
		for g := lo; g < hi; g++ {
			seg := xs[g*cpg*L : (g+1)*cpg*L]
			// float64 accumulation: the group can hold millions of elements.
			var s float64
			for _, v := range seg {
				s += float64(v)
			}
			mean := s / float64(len(seg))
			var vs float64
			for _, v := range seg {
				d := float64(v) - mean
				vs += d * d
			}
			inv := float32(1 / math.Sqrt(vs/float64(len(seg))+float64(eps)))
			m32 := float32(mean)
			for c := g * cpg; c < (g+1)*cpg; c++ {
				for i := c * L; i < (c+1)*L; i++ {
					y := (xs[i] - m32) * inv
					if ws != nil {
						y *= ws[c]
					}
					if bs != nil {
						y += bs[c]
					}
					out[i] = y
				}
			}
		}
	})
	store(dst, out)
}
