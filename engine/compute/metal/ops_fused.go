package metal

import (
	"h3studio/engine/compute"
)

// The fused DiT kernels (compute.Fused, shaders/fused.metal). The kernels
// take one activation type T (F32, F16 or BF16) for every main operand and
// the heads of QKNormRoPE up to qkDMax channels; other configurations, and
// outputs that alias an input the kernel reads as a whole, run the unfused
// sequence (compute.Unfused*), which is the operation's definition.

// qkDMax is fused.metal's QK_DMAX.
const qkDMax = 256

// clashes reports whether dst overlaps any of ts.
func (b *Backend) clashes(dst *compute.Tensor, ts ...*compute.Tensor) bool {
	for _, t := range ts {
		if t != nil && b.overlaps(dst, t) {
			return true
		}
	}
	return false
}

// RMSNormModulate is RMSNorm then Modulate in one pass per row.
func (b *Backend) RMSNormModulate(dst, x *compute.Tensor, p compute.NormModulation) {
	const op = "RMSNormModulate"
	R, H, W, T := compute.RMSNormModulateDims(dst, x, p)
	dt := dst.DType()
	if x.DType() != dt || !isFloat(dt) || b.clashes(dst, p.Weight, p.Table, p.Rows) {
		compute.UnfusedRMSNormModulate(b, dst, x, p)
		return
	}
	b.count(7 * float64(x.NumElements()))
	if R == 0 || H == 0 {
		return
	}
	ix, releaseI := b.indexTensor(op, p.Rows)
	defer releaseI()
	k := KargsNormModulate{Rows: uint32(R), D: uint32(H), Eps: p.Eps, WDt: dtCode(p.Weight), HasW: b2u(p.Weight != nil),
		TableW: uint32(W), TableRows: uint32(T), ShiftCol: uint32(p.ShiftCol), ScaleCol: uint32(p.ScaleCol),
		TableDt: dtCode(p.Table), IdxDt: dtCode(ix)}
	b.encode(&Dispatch{Kernel: kname("rms_norm_modulate", dt, dt),
		Args: []Arg{{Bytes: argBytes(k)}, b.arg(x, false), b.optArg(p.Weight), b.arg(p.Table, false), b.arg(ix, false),
			b.arg(dst, true)},
		Groups: [3]int{R, 1, 1}, Threads: [3]int{normThreads(H), 1, 1}, InPlace: true})
}

// GatedAddRMSNormModulate is GatedAdd, RMSNorm and Modulate in one pass per
// row.
func (b *Backend) GatedAddRMSNormModulate(h, n, x, y, gateTable *compute.Tensor, gateCol int, p compute.NormModulation) {
	const op = "GatedAddRMSNormModulate"
	R, H, W, T, GW, GT := compute.GatedAddRMSNormModulateDims(h, n, x, y, gateTable, gateCol, p, b.overlaps)
	dt := h.DType()
	if x.DType() != dt || n.DType() != dt || !isFloat(dt) ||
		b.clashes(h, y, gateTable, p.Weight, p.Table, p.Rows) || b.clashes(n, gateTable, p.Weight, p.Table, p.Rows) {
		compute.UnfusedGatedAddRMSNormModulate(b, h, n, x, y, gateTable, gateCol, p)
		return
	}
	b.count(9 * float64(x.NumElements()))
	if R == 0 || H == 0 {
		return
	}
	ix, releaseI := b.indexTensor(op, p.Rows)
	defer releaseI()
	k := KargsGatedNormModulate{Rows: uint32(R), D: uint32(H), Eps: p.Eps, WDt: dtCode(p.Weight), HasW: b2u(p.Weight != nil),
		TableW: uint32(W), TableRows: uint32(T), ShiftCol: uint32(p.ShiftCol), ScaleCol: uint32(p.ScaleCol),
		TableDt: dtCode(p.Table), IdxDt: dtCode(ix),
		GateW: uint32(GW), GateRows: uint32(GT), GateCol: uint32(gateCol),
		GateDt: dtCode(gateTable), YDt: dtCode(y)}
	b.encode(&Dispatch{Kernel: kname("gated_add_rms_norm_modulate", dt, dt),
		Args: []Arg{{Bytes: argBytes(k)}, b.arg(x, false), b.arg(y, false), b.arg(gateTable, false), b.optArg(p.Weight),
			b.arg(p.Table, false), b.arg(ix, false), b.arg(h, true), b.arg(n, true)},
		Groups: [3]int{R, 1, 1}, Threads: [3]int{normThreads(H), 1, 1}, InPlace: true})
}

// QKNormRoPE splits a QKV projection into q, k, v heads with QK-norm and
// rotary embedding in one pass per (position, head).
func (b *Backend) QKNormRoPE(q, k, v, qkv *compute.Tensor, p compute.QKNormRoPEParams) {
	S, Hs, D := compute.QKNormRoPEDims(q, k, v, qkv, p, b.overlaps)
	dt := qkv.DType()
	rot := 0
	if p.Cos != nil {
		rot = p.RotDim
	}
	if !isFloat(dt) || D > qkDMax {
		compute.UnfusedQKNormRoPE(b, q, k, v, qkv, p)
		return
	}
	b.count(14 * float64(q.NumElements()))
	if S == 0 || Hs == 0 || D == 0 {
		return
	}
	ka := KargsQkNormRope{S: uint32(S), Heads: uint32(Hs), D: uint32(D), Layout: uint32(p.Layout), Eps: p.Eps,
		QWDt: dtCode(p.NormQ), HasQW: b2u(p.NormQ != nil), KWDt: dtCode(p.NormK), HasKW: b2u(p.NormK != nil),
		RotDim: uint32(rot), CosDt: dtCode(p.Cos), SinDt: dtCode(p.Sin)}
	b.encode(&Dispatch{Kernel: kname("qk_norm_rope", dt, dt),
		Args: []Arg{{Bytes: argBytes(ka)}, b.arg(qkv, false), b.optArg(p.NormQ), b.optArg(p.NormK), b.optArg(p.Cos),
			b.optArg(p.Sin), b.arg(q, true), b.arg(k, true), b.arg(v, true)},
		Groups: [3]int{S, Hs, 1}, Threads: [3]int{normThreads(D), 1, 1}})
}
