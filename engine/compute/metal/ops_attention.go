package metal

import (
	"fmt"

	"h3studio/engine/compute"
)

const (
	attThreads = 128 // attention.metal ATT_THREADS
	attRows    = 32  // attention.metal ATT_BQ
)

// Attention computes softmax(q·kᵀ·scale)·v per head (grouped-query heads,
// optional causal mask), tiled with an online softmax.
func (b *Backend) Attention(dst, q, k, v *compute.Tensor, p compute.AttentionParams) {
	Hq, Hkv, Sq, Sk, D := compute.AttentionDims(dst, q, k, v)
	if dst.NumElements() == 0 {
		return
	}
	dmax := 0
	for _, c := range []int{64, 128, 256} {
		if D <= c {
			dmax = c
			break
		}
	}
	if dmax == 0 { // no kernel holds heads this wide
		b.count(4 * float64(Hq) * float64(Sq) * float64(Sk) * float64(D))
		b.onCPU(dst, func(c func(*compute.Tensor) *compute.Tensor) { b.ref.Attention(c(dst), c(q), c(k), c(v), p) })
		return
	}
	in := q.DType()
	if !isFloat(in) || k.DType() != in || v.DType() != in {
		in = compute.F32
	}
	qf, r1 := b.asType(q, in)
	defer r1()
	kf, r2 := b.asType(k, in)
	defer r2()
	vf, r3 := b.asType(v, in)
	defer r3()
	ka := KargsAttention{Hq: uint32(Hq), Hkv: uint32(Hkv), Sq: uint32(Sq), Sk: uint32(Sk), D: uint32(D), Scale: p.Scale,
		Causal: b2u(p.Causal), RoundProbs: b2u(p.RoundProbs && (dst.DType() == compute.BF16 || dst.DType() == compute.F16))}
	if !p.Causal && !p.RoundProbs && b.libraryAttention(dst, qf, kf, vf, Hq, Hkv, Sq, Sk, D, p.Scale) {
		return
	}
	// One dispatch per run of query tiles, each within DispatchBudget.
	tiles := ceilDiv(Sq, attRows)
	perTile := 4 * float64(Hq) * float64(attRows) * float64(Sk) * float64(D)
	chunk := max(1, min(tiles, int(b.opts.DispatchBudget*0.9/perTile)))
	b.floatOut(dst, []*compute.Tensor{q, k, v}, func(out *compute.Tensor) {
		for t0 := 0; t0 < tiles; t0 += chunk {
			n := min(chunk, tiles-t0)
			rows := min(Sq, (t0+n)*attRows) - t0*attRows
			b.count(4 * float64(Hq) * float64(rows) * float64(Sk) * float64(D))
			ka.Tile0 = uint32(t0)
			// q and dst are bound whole (the kernel indexes from the start);
			// the run reads and writes rows of them only.
			qa, oa := b.arg(qf, false), b.arg(out, true)
			if n < tiles {
				qa.Touched = int64(Hq) * int64(rows) * int64(D) * int64(qf.DType().Size())
				oa.Touched = int64(Hq) * int64(rows) * int64(D) * int64(out.DType().Size())
			}
			b.encode(&Dispatch{Kernel: fmt.Sprintf("%s_d%d", kname("attention", in, out.DType()), dmax),
				Args:   []Arg{{Bytes: argBytes(ka)}, qa, b.arg(kf, false), b.arg(vf, false), oa},
				Groups: [3]int{n, Hq, 1}, Threads: [3]int{attThreads, 1, 1}})
		}
	})
}

// libraryAttention sends an unmasked attention whose operands and result
// share one float type to the device's library attention (MPSGraph SDPA),
// one head and one run of query rows within DispatchBudget at a time. It
// reports false, with nothing recorded, when there is none, the oracle
// keeps the hand kernel, the result overlaps an operand, or the library
// declines (by type or macOS: its first encode decides).
func (b *Backend) libraryAttention(dst, q, k, v *compute.Tensor, Hq, Hkv, Sq, Sk, D int, scale float32) bool {
	if b.att == nil || b.opts.Oracles.Has(OracleHandAttention) || dst.DType() != q.DType() {
		return false
	}
	for _, t := range []*compute.Tensor{q, k, v} {
		if b.overlaps(dst, t) {
			return false // in place: the hand kernel's path stages the result
		}
	}
	perRow := 4 * float64(Sk) * float64(D)
	step := max(1, min(Sq, int(b.opts.DispatchBudget*0.9/perRow)))
	qa, ka, va, oa := b.arg(q, false), b.arg(k, false), b.arg(v, false), b.arg(dst, true)
	for h := 0; h < Hq; h++ {
		kh := h / (Hq / Hkv)
		for s0 := 0; s0 < Sq; s0 += step {
			rows := min(step, Sq-s0)
			a := &AttentionHead{Sq: rows, Sk: Sk, D: D, DType: q.DType(), Scale: scale,
				Q: rowsOf(qa, h*Sq+s0, rows, D), K: rowsOf(ka, kh*Sk, Sk, D), V: rowsOf(va, kh*Sk, Sk, D), Dst: rowsOf(oa, h*Sq+s0, rows, D)}
			b.mu.Lock()
			done, err := b.att.EncodeAttention(a)
			if done {
				b.flops.Add(uint64(4 * float64(rows) * float64(Sk) * float64(D)))
				b.flopsEncoded = b.flops.Load()
				b.dispatches.Add(1)
				b.moved.Add(uint64(a.Q.Size + a.K.Size + a.V.Size + a.Dst.Size))
			}
			b.mu.Unlock()
			if err != nil {
				b.fail(err)
			}
			if !done {
				if h != 0 || s0 != 0 {
					b.fail(fmt.Errorf("metal: the library attention declined head %d, rows from %d, after accepting earlier ones", h, s0))
				}
				return h != 0 || s0 != 0
			}
		}
	}
	return true
}
