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
// dequantizes the weight while staging its tiles.
func (b *Backend) quantMatMul(dst, x, w, bias *compute.Tensor, M, N, K int) {
	f, _, _ := w.Quant()
	if M == 0 || N == 0 {
		return
	}
	xf, releaseX := b.floatIn(x)
	defer releaseX()
	b.floatOut(dst, []*compute.Tensor{x, w, bias}, func(out *compute.Tensor) {
		k := KargsQgemm{M: uint32(M), N: uint32(N), K: uint32(K), RowWords: uint32(f.RowWords(K)), CodeWords: uint32(f.CodeWords(K)),
			GroupSize: uint32(f.GroupSize), BiasDt: dtCode(bias), HasBias: b2u(bias != nil)}
		b.encode(&Dispatch{Kernel: kname("qmatmul", xf.DType(), out.DType()) + fmt.Sprintf("_q%d", f.Bits),
			Args:   []Arg{{Bytes: argBytes(k)}, b.arg(xf, false), b.arg(w, false), b.optArg(bias), b.arg(out, true)},
			Groups: [3]int{ceilDiv(N, gemmTile), ceilDiv(M, gemmTile), 1}, Threads: [3]int{gemmThreads, 1, 1}})
	})
}
