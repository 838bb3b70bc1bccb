package cpu

import (
	"math"

	"h3studio/engine/compute"
)

// dot is the float32 inner product with eight fixed partial sums, combined
// in a fixed order, so the result does not depend on scheduling.
func dot(a, b []float32) float32 {
	n := len(a)
	b = b[:n]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	i := 0
	for ; i+8 <= n; i += 8 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
		s4 += a[i+4] * b[i+4]
		s5 += a[i+5] * b[i+5]
		s6 += a[i+6] * b[i+6]
		s7 += a[i+7] * b[i+7]
	}
	for ; i < n; i++ {
		s0 += a[i] * b[i]
	}
	return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))
}

// MatMul computes dst[m,n] = Σ_k x[m,k]·w[n,k] + bias[n] with the blocked
// GEMM (gemm.go): float32 accumulation, the bias added to each finished
// sum, one rounding to dst's dtype. OracleDotMatMul selects the original
// per-element dot-product loop.
func (b *Backend) MatMul(dst, x, w, bias *compute.Tensor) {
	M, N, K := compute.MatMulDims(dst, x, w, bias)
	var bs []float32
	if bias != nil {
		bs = load(bias)
	}
	b.dispatch(2 * float64(M) * float64(N) * float64(K))
	if b.opts.Oracles.Has(OracleDotMatMul) {
		b.matMulDot(dst, x, w, bs, M, N, K)
		return
	}
	xs := load(x)
	out := output(dst)
	if dst.Backend() == x.Backend() && aliased(dst, x) {
		out = make([]float32, dst.NumElements())
	}
	b.gemm(out, N, xs, K, M, N, K, packTensorRows(w))
	if bs != nil {
		b.parallel(M, 64, func(lo, hi int) {
			for m := lo; m < hi; m++ {
				row := out[m*N : (m+1)*N]
				for n, v := range bs {
					row[n] += v
				}
			}
		})
	}
	store(dst, out)
}

// matMulDot is the original reference loop: one 8-way dot product per
// output element, weight panels decoded to float32.
func (b *Backend) matMulDot(dst, x, w *compute.Tensor, bs []float32, M, N, K int) {
	xs := load(x)
	out := output(dst)
	if dst.Backend() == x.Backend() && aliased(dst, x) {
		out = make([]float32, dst.NumElements())
	}
	const nb = 32 // weight rows per task: a panel converted once to float32
	panels := (N + nb - 1) / nb
	_, _, quantized := w.Quant()
	wF32 := w.DType() == compute.F32 && !quantized
	var wAll []float32
	if wF32 {
		wAll = load(w)
	}
	b.parallel(panels, 1, func(lo, hi int) {
		var panel []float32
		for p := lo; p < hi; p++ {
			n0 := p * nb
			n1 := min(n0+nb, N)
			var wp []float32
			if wF32 {
				wp = wAll[n0*K : n1*K]
			} else {
				if panel == nil {
					panel = make([]float32, nb*K)
				}
				wp = panel[:(n1-n0)*K]
				if quantized {
					decodeQuantRows(wp, w, n0)
				} else {
					decodeInto(wp, w, n0*K)
				}
			}
			for m := 0; m < M; m++ {
				xr := xs[m*K : (m+1)*K]
				o := out[m*N : (m+1)*N]
				for n := n0; n < n1; n++ {
					v := dot(xr, wp[(n-n0)*K:(n-n0+1)*K])
					if bs != nil {
						v += bs[n]
					}
					o[n] = v
				}
			}
		}
	})
	store(dst, out)
}

// aliased reports whether two CPU tensors share storage bytes.
func aliased(a, b *compute.Tensor) bool {
	ab, bb := bytesOf(a), bytesOf(b)
	if len(ab) == 0 || len(bb) == 0 {
		return false
	}
	a0, b0 := &ab[0], &bb[0]
	return overlaps(a0, len(ab), b0, len(bb))
}

// decodeInto converts len(dst) elements of t starting at element off.
func decodeInto(dst []float32, t *compute.Tensor, off int) {
	raw := bytesOf(t)
	switch t.DType() {
	case compute.BF16:
		raw = raw[2*off:]
		for i := range dst {
			dst[i] = math.Float32frombits(uint32(raw[2*i])<<16 | uint32(raw[2*i+1])<<24)
		}
	case compute.F16:
		raw = raw[2*off:]
		for i := range dst {
			dst[i] = compute.F16ToF32(uint16(raw[2*i]) | uint16(raw[2*i+1])<<8)
		}
	default:
		es := t.DType().Size()
		copy(dst, compute.DecodeFloat32(t.DType(), raw[es*off:es*(off+len(dst))]))
	}
}
