package metal

import (
	"h3studio/engine/compute"
)

// normThreads is the threadgroup size for rows of d elements: a multiple of
// 32, at most 256.
func normThreads(d int) int {
	return min(256, max(32, (d+31)/32*32))
}

// RMSNorm computes x·rsqrt(mean(x²)+eps)·w over the innermost axis.
func (b *Backend) RMSNorm(dst, x, w *compute.Tensor, eps float32) {
	rows, D := compute.RMSNormDims(dst, x, w)
	b.count(4 * float64(x.NumElements()))
	if rows == 0 || D == 0 {
		return
	}
	xf, release := b.floatIn(x)
	defer release()
	k := KargsNorm{Rows: uint32(rows), D: uint32(D), Eps: eps, WDt: dtCode(w), HasW: b2u(w != nil)}
	b.floatOut(dst, []*compute.Tensor{w}, func(out *compute.Tensor) {
		b.encode(&Dispatch{Kernel: kname("rms_norm", xf.DType(), out.DType()),
			Args:   []Arg{{Bytes: argBytes(k)}, b.arg(xf, false), b.optArg(w), b.arg(out, true)},
			Groups: [3]int{rows, 1, 1}, Threads: [3]int{normThreads(D), 1, 1}, InPlace: true})
	})
}

// LayerNorm computes (x−mean)·rsqrt(var+eps)·w + b over the innermost axis.
func (b *Backend) LayerNorm(dst, x, w, bias *compute.Tensor, eps float32) {
	rows, D := compute.LayerNormDims(dst, x, w, bias)
	b.count(6 * float64(x.NumElements()))
	if rows == 0 || D == 0 {
		return
	}
	xf, release := b.floatIn(x)
	defer release()
	k := KargsNorm{Rows: uint32(rows), D: uint32(D), Eps: eps, WDt: dtCode(w), BDt: dtCode(bias), HasW: b2u(w != nil), HasB: b2u(bias != nil)}
	b.floatOut(dst, []*compute.Tensor{w, bias}, func(out *compute.Tensor) {
		b.encode(&Dispatch{Kernel: kname("layer_norm", xf.DType(), out.DType()),
			Args:   []Arg{{Bytes: argBytes(k)}, b.arg(xf, false), b.optArg(w), b.optArg(bias), b.arg(out, true)},
			Groups: [3]int{rows, 1, 1}, Threads: [3]int{normThreads(D), 1, 1}, InPlace: true})
	})
}

// GroupNorm normalizes x [C, L...] in groups of channels.
func (b *Backend) GroupNorm(dst, x, w, bias *compute.Tensor, groups int, eps float32) {
	C, L := compute.GroupNormDims(dst, x, w, bias, groups)
	n := int64(x.NumElements())
	b.count(6 * float64(n))
	if n == 0 {
		return
	}
	xf, release := b.floatIn(x)
	defer release()
	k := KargsGroupNorm{L: uint64(L), N: uint64(n), C: uint32(C), Groups: uint32(groups), Eps: eps,
		WDt: dtCode(w), BDt: dtCode(bias), HasW: b2u(w != nil), HasB: b2u(bias != nil)}
	stats := b.scratch(compute.F32, groups, 2)
	defer b.Free(stats)
	b.encode(&Dispatch{Kernel: "kernel_group_norm_stats_" + tname(xf.DType()),
		Args:   []Arg{{Bytes: argBytes(k)}, b.arg(xf, false), b.arg(stats, true)},
		Groups: [3]int{groups, 1, 1}, Threads: [3]int{256, 1, 1}})
	b.floatOut(dst, []*compute.Tensor{w, bias}, func(out *compute.Tensor) {
		b.launch1(kname("group_norm_apply", xf.DType(), out.DType()), n, argBytes(k), true,
			b.arg(xf, false), b.arg(stats, false), b.optArg(w), b.optArg(bias), b.arg(out, true))
	})
}
