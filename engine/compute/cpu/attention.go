package cpu

import (
	"math"

	"h3studio/engine/compute"
)

// attentionBlock is the number of query rows of one Attention task.
const attentionBlock = 64

// Attention computes softmax(q·kᵀ·scale)·v per head with float32 scores.
// Tasks are (head, block of 64 query rows): the block's scores against
// every key come from the blocked GEMM (q·kᵀ), then the row-wise softmax
// (max, exp, sum in key order; the unnormalised probabilities rounded to
// dst's dtype with RoundProbs), then the GEMM p·v and one division by the
// sum. OracleDotMatMul selects the original per-row dot-product loop.
func (b *Backend) Attention(dst, q, k, v *compute.Tensor, p compute.AttentionParams) {
	if b.opts.Oracles.Has(OracleDotMatMul) {
		b.attentionDot(dst, q, k, v, p)
		return
	}
	Hq, Hkv, Sq, Sk, D := compute.AttentionDims(dst, q, k, v)
	b.dispatch(4 * float64(Hq) * float64(Sq) * float64(Sk) * float64(D))
	qs, ks, vs := load(q), load(k), load(v)
	out := make([]float32, dst.NumElements())
	rp := p.RoundProbs && lowPrecision(dst.DType())
	rnd := rounder(dst.DType())
	group := Hq / Hkv
	blocks := (Sq + attentionBlock - 1) / attentionBlock
	simd := b.simdGEMM()
	b.parallel(Hq*blocks, 1, func(lo, hi int) {
		ws := packPool.Get().(*[]float32)
		defer packPool.Put(ws)
		scores := make([]float32, attentionBlock*Sk)
		sums := make([]float32, attentionBlock)
		for t := lo; t < hi; t++ {
			h, i0 := t/blocks, (t%blocks)*attentionBlock
			rows := min(attentionBlock, Sq-i0)
			kh := h / group
			kb := ks[kh*Sk*D : (kh+1)*Sk*D]
			vb := vs[kh*Sk*D : (kh+1)*Sk*D]
			s := scores[:rows*Sk]
			gemmSerial(s, Sk, qs[(h*Sq+i0)*D:], D, rows, Sk, D, packRows(kb, D, Sk), simd, *ws)
			for r := 0; r < rows; r++ {
				row := s[r*Sk : (r+1)*Sk]
				limit := Sk
				if p.Causal {
					limit = min(i0+r+(Sk-Sq)+1, Sk)
				}
				mx := float32(math.Inf(-1))
				for j := 0; j < limit; j++ {
					row[j] *= p.Scale
					if row[j] > mx {
						mx = row[j]
					}
				}
				var sum float32
				for j := 0; j < limit; j++ {
					e := float32(math.Exp(float64(row[j] - mx)))
					sum += e
					if rp {
						e = rnd(e)
					}
					row[j] = e
				}
				for j := limit; j < Sk; j++ {
					row[j] = 0
				}
				sums[r] = sum
			}
			o := out[(h*Sq+i0)*D : (h*Sq+i0+rows)*D]
			gemmSerial(o, D, s, Sk, rows, D, Sk, packCols(vb, D, D), simd, *ws)
			for r := 0; r < rows; r++ {
				inv := 1 / sums[r]
				orow := o[r*D : (r+1)*D]
				for d := range orow {
					orow[d] *= inv
				}
			}
		}
	})
	store(dst, out)
}

// attentionDot is the original reference loop: per query row, one dot
// product per key, softmax, and a scalar accumulation of p·v.
func (b *Backend) attentionDot(dst, q, k, v *compute.Tensor, p compute.AttentionParams) {
	Hq, Hkv, Sq, Sk, D := compute.AttentionDims(dst, q, k, v)
	b.dispatch(4 * float64(Hq) * float64(Sq) * float64(Sk) * float64(D))
	qs, ks, vs := load(q), load(k), load(v)
	out := make([]float32, dst.NumElements())
	rp := p.RoundProbs && lowPrecision(dst.DType())
	rnd := rounder(dst.DType())
	group := Hq / Hkv
	b.parallel(Hq*Sq, 4, func(lo, hi int) {
		scores := make([]float32, Sk)
		acc := make([]float32, D)
		for t := lo; t < hi; t++ {
			h, i := t/Sq, t%Sq
			kh := h / group
			qr := qs[(h*Sq+i)*D : (h*Sq+i+1)*D]
			kb := ks[kh*Sk*D : (kh+1)*Sk*D]
			vb := vs[kh*Sk*D : (kh+1)*Sk*D]
			limit := Sk
			if p.Causal {
				limit = i + (Sk - Sq) + 1
				if limit > Sk {
					limit = Sk
				}
			}
			mx := float32(math.Inf(-1))
			for j := 0; j < limit; j++ {
				s := dot(qr, kb[j*D:(j+1)*D]) * p.Scale
				scores[j] = s
				if s > mx {
					mx = s
				}
			}
			var sum float32
			for j := 0; j < limit; j++ {
				e := float32(math.Exp(float64(scores[j] - mx)))
				sum += e
				if rp {
					e = rnd(e)
				}
				scores[j] = e
			}
			for d := range acc {
				acc[d] = 0
			}
			for j := 0; j < limit; j++ {
				pj := scores[j]
				vr := vb[j*D : (j+1)*D]
				for d := 0; d < D; d++ {
					acc[d] += pj * vr[d]
				}
			}
			o := out[(h*Sq+i)*D : (h*Sq+i+1)*D]
			inv := 1 / sum
			for d := 0; d < D; d++ {
				o[d] = acc[d] * inv
			}
		}
	})
	store(dst, out)
}
