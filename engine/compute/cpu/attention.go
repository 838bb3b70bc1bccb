package cpu

import (
	"math"

	"h3studio/engine/compute"
)

// Attention computes softmax(q·kᵀ·scale)·v per head with float32 scores.
func (b *Backend) Attention(dst, q, k, v *compute.Tensor, p compute.AttentionParams) {
	compute.Check(q.Rank() == 3 && k.Rank() == 3 && v.Rank() == 3, "Attention", "q %v k %v v %v must be [H, S, D]", q, k, v)
	compute.SameShape("Attention", dst, q)
	compute.SameShape("Attention", k, v)
	Hq, Sq, D := q.Dim(0), q.Dim(1), q.Dim(2)
	Hkv, Sk := k.Dim(0), k.Dim(1)
	compute.Check(k.Dim(2) == D && Hkv > 0 && Hq%Hkv == 0, "Attention", "q %v vs k %v", q, k)
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
