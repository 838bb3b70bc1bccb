package metal

import (
	"fmt"

	"h3studio/engine/compute"
)

// KargsQgemm is kargs_qgemm.
type KargsQgemm struct {
	M         uint32
	N         uint32
	K         uint32
	RowWords  uint32
	CodeWords uint32
	GroupSize uint32
	BiasDt    uint32
	HasBias   uint32
}

// quantMatMul multiplies by a quantized weight (compute.Quantized) with
// kernel_qmatmul_<x>_<out>_q<bits> (shaders/qmatmul.metal), which
// dequantizes the weight while staging its tiles. Like the dense product,
// the rows run in DispatchBudget-sized runs (rowRuns), one dispatch each.
func (b *Backend) quantMatMul(dst, x, w, bias *compute.Tensor, M, N, K int) {
	f, _, _ := w.Quant()
	if M == 0 || N == 0 {
		b.count(2 * float64(M) * float64(N) * float64(K))
		return
	}
	xf, releaseX := b.floatIn(x)
	defer releaseX()
	perRow, step := b.rowRuns(M, N, K)
	b.floatOut(dst, []*compute.Tensor{x, w, bias}, func(out *compute.Tensor) {
		xa, wa, oa := b.arg(xf, false), b.arg(w, false), b.arg(out, true)
		for m0 := 0; m0 < M; m0 += step {
			rows := min(step, M-m0)
			b.count(perRow * float64(rows))
			k := KargsQgemm{M: uint32(rows), N: uint32(N), K: uint32(K), RowWords: uint32(f.RowWords(K)), CodeWords: uint32(f.CodeWords(K)),
				GroupSize: uint32(f.GroupSize), BiasDt: dtCode(bias), HasBias: b2u(bias != nil)}
			b.encode(&Dispatch{Kernel: kname("qmatmul", xf.DType(), out.DType()) + fmt.Sprintf("_q%d", f.Bits),
				Args:   []Arg{{Bytes: argBytes(k)}, rowsOf(xa, m0, rows, K), wa, b.optArg(bias), rowsOf(oa, m0, rows, N)},
				Groups: [3]int{ceilDiv(N, gemmTile), ceilDiv(rows, gemmTile), 1}, Threads: [3]int{gemmThreads, 1, 1}})
		}
	})
}
