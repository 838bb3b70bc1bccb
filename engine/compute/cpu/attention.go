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
	Hq, Hkv, Sq, Sk, D := compute.AttentionDims(dst, q, k, v)
	b.dispatch(4 * float64(Hq) * float64(Sq) * float64(Sk) * float64(D))
	a := &attention{p: p, Hq: Hq, Sq: Sq, Sk: Sk, D: D, group: Hq / Hkv,
		qs: load(q), ks: load(k), vs: load(v), out: make([]float32, dst.NumElements()),
		rp: p.RoundProbs && lowPrecision(dst.DType()), rnd: rounder(dst.DType())}
	if b.opts.Oracles.Has(OracleDotMatMul) {
		b.attentionDot(a)
	} else {
		b.attentionBlocked(a)
	}
	store(dst, a.out)
}

// attention is one Attention call: its operands loaded as float32, the
// output being computed, and what the blocked and the dot-product loops
// share.
type attention struct {
	p               compute.AttentionParams
	Hq, Sq, Sk, D   int
	group           int // query heads per key/value head
	qs, ks, vs, out []float32
	rp              bool // round the probabilities to dst's dtype
	rnd             func(float32) float32
}

// keys returns key/value head kh's rows of k and v.
func (a *attention) keys(kh int) (kb, vb []float32) {
	n := a.Sk * a.D
	return a.ks[kh*n : (kh+1)*n], a.vs[kh*n : (kh+1)*n]
}

// limit is how many keys query row i sees.
func (a *attention) limit(i int) int {
	if a.p.Causal {
		return min(i+(a.Sk-a.Sq)+1, a.Sk)
	}
	return a.Sk
}

// exps replaces the scores of row with exp(score − mx), rounded to dst's
// dtype with RoundProbs, and returns their sum before rounding.
func (a *attention) exps(row []float32, mx float32) float32 {
	var sum float32
	for j, s := range row {
		e := float32(math.Exp(float64(s - mx)))
		sum += e
		if a.rp {
			e = a.rnd(e)
		}
		row[j] = e
	}
	return sum
}

// attentionBlocked computes a over tasks (head, block of query rows).
func (b *Backend) attentionBlocked(a *attention) {
	Sq, Sk, D := a.Sq, a.Sk, a.D
	blocks := (Sq + attentionBlock - 1) / attentionBlock
	simd := b.simdGEMM()
	b.parallel(a.Hq*blocks, 1, func(lo, hi int) {
		ws := packPool.Get().(*[]float32)
		defer packPool.Put(ws)
		scores := make([]float32, attentionBlock*Sk)
		sums := make([]float32, attentionBlock)
		for t := lo; t < hi; t++ {
			h, i0 := t/blocks, (t%blocks)*attentionBlock
			rows := min(attentionBlock, Sq-i0)
			kb, vb := a.keys(h / a.group)
			s := scores[:rows*Sk]
			gemmSerial(s, Sk, a.qs[(h*Sq+i0)*D:], D, rows, Sk, D, packRows(kb, D, Sk), simd, *ws)
			for r := 0; r < rows; r++ {
				row := s[r*Sk : (r+1)*Sk]
				limit := a.limit(i0 + r)
				mx := float32(math.Inf(-1))
				for j := 0; j < limit; j++ {
					row[j] *= a.p.Scale
					if row[j] > mx {
						mx = row[j]
					}
				}
				sums[r] = a.exps(row[:limit], mx)
				for j := limit; j < Sk; j++ {
					row[j] = 0
				}
			}
			o := a.out[(h*Sq+i0)*D : (h*Sq+i0+rows)*D]
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
}

// attentionDot is the original reference loop: per query row, one dot
// product per key, softmax, and a scalar accumulation of p·v.
func (b *Backend) attentionDot(a *attention) {
	Sq, Sk, D := a.Sq, a.Sk, a.D
	b.parallel(a.Hq*Sq, 4, func(lo, hi int) {
		scores := make([]float32, Sk)
		acc := make([]float32, D)
		for t := lo; t < hi; t++ {
			h, i := t/Sq, t%Sq
			qr := a.qs[(h*Sq+i)*D : (h*Sq+i+1)*D]
			kb, vb := a.keys(h / a.group)
			limit := a.limit(i)
			mx := float32(math.Inf(-1))
			for j := 0; j < limit; j++ {
				s := dot(qr, kb[j*D:(j+1)*D]) * a.p.Scale
				scores[j] = s
				if s > mx {
					mx = s
				}
			}
			sum := a.exps(scores[:limit], mx)
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
			o := a.out[(h*Sq+i)*D : (h*Sq+i+1)*D]
			inv := 1 / sum
			for d := 0; d < D; d++ {
				o[d] = acc[d] * inv
			}
		}
	})
}
