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
	b.productRuns(dst, x, w, bias, xf, w, M, N, K, func(out *compute.Tensor, xr, wa, or Arg, rows int) {
		k := KargsQgemm{M: uint32(rows), N: uint32(N), K: uint32(K), RowWords: uint32(f.RowWords(K)), CodeWords: uint32(f.CodeWords(K)),
			GroupSize: uint32(f.GroupSize), BiasDt: dtCode(bias), HasBias: b2u(bias != nil)}
		b.encode(&Dispatch{Kernel: kname("qmatmul", xf.DType(), out.DType()) + fmt.Sprintf("_q%d", f.Bits),
			Args:   []Arg{{Bytes: argBytes(k)}, xr, wa, b.optArg(bias), or},
			Groups: [3]int{ceilDiv(N, gemmTile), ceilDiv(rows, gemmTile), 1}, Threads: [3]int{gemmThreads, 1, 1}})
	})
}
