package compute

// The definitions of the Fused kernels as sequences of unfused kernels. They
// are the executable meaning of each fused kernel: the CPU reference is
// tested bit-identical to them, backends fall back to them for
// configurations their fused kernels do not cover, and model code runs them
// under its "unfused" oracles.

// UnfusedRMSNormModulate runs Fused.RMSNormModulate as RMSNorm then Modulate.
func UnfusedRMSNormModulate(k Kernels, dst, x *Tensor, p NormModulation) {
	k.RMSNorm(dst, x, p.Weight, p.Eps)
	k.Modulate(dst, dst, p.Table, p.Rows, p.ShiftCol, p.ScaleCol)
}

// UnfusedGatedAddRMSNormModulate runs Fused.GatedAddRMSNormModulate as
// GatedAdd, RMSNorm and Modulate.
func UnfusedGatedAddRMSNormModulate(k Kernels, h, n, x, y, gateTable *Tensor, gateCol int, p NormModulation) {
	k.GatedAdd(h, x, y, gateTable, p.Rows, gateCol)
	UnfusedRMSNormModulate(k, n, h, p)
}

// UnfusedQKNormRoPE runs Fused.QKNormRoPE as transposes (through a scratch
// tensor of b for the interleaved layout), copies, two RMSNorms and two
// RoPEs.
func UnfusedQKNormRoPE(b Backend, q, k, v, qkv *Tensor, p QKNormRoPEParams) {
	S, H, D := QKVShape(qkv, p.Layout)
	for _, t := range []*Tensor{q, k, v} {
		Check(t.Rank() == 3 && t.Dim(0) == H && t.Dim(1) == S && t.Dim(2) == D, "QKNormRoPE", "%v for qkv %v: want [%d, %d, %d]", t, qkv, H, S, D)
	}
	switch p.Layout {
	case QKVInterleaved:
		tp := MustAlloc(b, qkv.DType(), 3, H, S, D)
		b.Transpose(tp, qkv, 2, 1, 0, 3)
		for c, dst := range []*Tensor{q, k, v} {
			b.Copy(dst, tp.Row(c))
		}
		b.Free(tp)
	case QKVPlanar:
		for c, dst := range []*Tensor{q, k, v} {
			b.Transpose(dst, qkv.Row(c), 1, 0, 2)
		}
	}
	b.RMSNorm(q, q, p.NormQ, p.Eps)
	b.RMSNorm(k, k, p.NormK, p.Eps)
	if p.Cos != nil {
		b.RoPE(q, q, p.Cos, p.Sin, p.RotDim)
		b.RoPE(k, k, p.Cos, p.Sin, p.RotDim)
	}
}
