package meta

import (
	"h3studio/engine/compute"
)

// The kernels check what the CPU reference checks about shapes and account
// their work; FLOP counts follow the usual conventions (a multiply-add is
// 2, an elementwise operation 1 per element, transcendental functions a
// few).

func n(t *compute.Tensor) float64 { return float64(t.NumElements()) }

// Copy accounts a conversion.
func (b *Backend) Copy(dst, src *compute.Tensor) {
	own(b, "Copy", dst, src)
	compute.CheckCopy(dst, src)
	b.op(0, dst, src)
}

// Fill accounts a fill.
func (b *Backend) Fill(dst *compute.Tensor, v float32) {
	own(b, "Fill", dst)
	b.op(0, dst)
}

// Transpose accounts a permutation.
func (b *Backend) Transpose(dst, src *compute.Tensor, perm ...int) {
	own(b, "Transpose", dst, src)
	compute.CheckTranspose(dst, src, perm)
	b.op(0, dst, src)
}

// GatherRows accounts a row gather (only the gathered rows are read).
func (b *Backend) GatherRows(dst, src, idx *compute.Tensor) {
	own(b, "GatherRows", dst, src, idx)
	compute.CheckGatherRows(dst, src, idx)
	b.op(0, dst, idx, dst) // reads as many bytes as it writes
}

// ScatterRows accounts a row scatter.
func (b *Backend) ScatterRows(dst, src, idx *compute.Tensor) {
	own(b, "ScatterRows", dst, src, idx)
	compute.CheckScatterRows(dst, src, idx)
	b.op(0, src, src, idx)
}

// MatMul accounts 2·M·N·K (+ M·N for the bias); a quantized weight
// (compute.Quantized) moves its packed bytes, and its dequantization is
// counted in the product (2 FLOPs per weight element per output row are the
// multiply-add, as for a float weight).
func (b *Backend) MatMul(dst, x, w, bias *compute.Tensor) {
	own(b, "MatMul", dst, x, w, bias)
	M, N, K := compute.MatMulDims(dst, x, w, bias) // a quantized w reads its packed storage (w.Bytes())
	f := 2 * float64(M) * float64(N) * float64(K)
	if bias != nil {
		f += float64(M) * float64(N)
	}
	b.op(f, dst, x, w, bias)
}

// Attention accounts 4·Hq·Sq·Sk·D for the two products plus the softmax.
func (b *Backend) Attention(dst, q, k, v *compute.Tensor, p compute.AttentionParams) {
	own(b, "Attention", dst, q, k, v)
	Hq, _, Sq, Sk, D := compute.AttentionDims(dst, q, k, v)
	f := 4*float64(Hq)*float64(Sq)*float64(Sk)*float64(D) + 5*float64(Hq)*float64(Sq)*float64(Sk)
	b.op(f, dst, q, k, v)
}

// RMSNorm accounts a row normalization.
func (b *Backend) RMSNorm(dst, x, w *compute.Tensor, eps float32) {
	own(b, "RMSNorm", dst, x, w)
	compute.RMSNormDims(dst, x, w)
	b.op(4*n(x), dst, x, w)
}

// LayerNorm accounts a row normalization.
func (b *Backend) LayerNorm(dst, x, w, bias *compute.Tensor, eps float32) {
	own(b, "LayerNorm", dst, x, w, bias)
	compute.LayerNormDims(dst, x, w, bias)
	b.op(6*n(x), dst, x, w, bias)
}

// GroupNorm accounts a group normalization.
func (b *Backend) GroupNorm(dst, x, w, bias *compute.Tensor, groups int, eps float32) {
	own(b, "GroupNorm", dst, x, w, bias)
	compute.GroupNormDims(dst, x, w, bias, groups)
	b.op(6*n(x), dst, x, w, bias)
}

func (b *Backend) binary(op string, dst, x, y *compute.Tensor) {
	own(b, op, dst, x, y)
	compute.BroadcastLen(op, dst, x, y)
	b.op(n(dst), dst, x, y)
}

// Add accounts an elementwise sum.
func (b *Backend) Add(dst, x, y *compute.Tensor) { b.binary("Add", dst, x, y) }

// Mul accounts an elementwise product.
func (b *Backend) Mul(dst, x, y *compute.Tensor) { b.binary("Mul", dst, x, y) }

// Scale accounts x·alpha + beta.
func (b *Backend) Scale(dst, x *compute.Tensor, alpha, beta float32) {
	own(b, "Scale", dst, x)
	compute.SameShape("Scale", dst, x)
	b.op(2*n(dst), dst, x)
}

// Unary accounts an elementwise function.
func (b *Backend) Unary(dst, x *compute.Tensor, op compute.UnaryOp) {
	own(b, "Unary", dst, x)
	compute.CheckUnary(dst, x, op)
	b.op(4*n(dst), dst, x)
}

// Clamp accounts a clamp.
func (b *Backend) Clamp(dst, x *compute.Tensor, lo, hi float32) {
	own(b, "Clamp", dst, x)
	compute.SameShape("Clamp", dst, x)
	b.op(n(dst), dst, x)
}

// GLU accounts act(gate)·up.
func (b *Backend) GLU(dst, x *compute.Tensor, act compute.UnaryOp, gateFirst bool) {
	own(b, "GLU", dst, x)
	compute.GLUDims(dst, x, act)
	b.op(6*n(dst), dst, x)
}

// Modulate accounts x·(1+scale)+shift (only the addressed table rows are read).
func (b *Backend) Modulate(dst, x, table, idx *compute.Tensor, shiftCol, scaleCol int) {
	own(b, "Modulate", dst, x, table, idx)
	compute.ModulateDims(dst, x, table, idx, shiftCol, scaleCol)
	b.op(3*n(x), dst, x, idx)
}

// GatedAdd accounts x + gate·y.
func (b *Backend) GatedAdd(dst, x, y, table, idx *compute.Tensor, gateCol int) {
	own(b, "GatedAdd", dst, x, y, table, idx)
	compute.GatedAddDims(dst, x, y, table, idx, gateCol)
	b.op(2*n(x), dst, x, y, idx)
}

// RoPE accounts a rotary embedding.
func (b *Backend) RoPE(dst, x, cos, sin *compute.Tensor, rotDim int) {
	own(b, "RoPE", dst, x, cos, sin)
	compute.RoPEDims(dst, x, cos, sin, rotDim)
	b.op(3*n(x), dst, x, cos, sin)
}

func convFLOPs(dst, w *compute.Tensor) float64 {
	// Each output element: Cin/groups · prod(kernel) multiply-adds.
	per := 1.0
	for _, d := range w.Shape()[1:] {
		per *= float64(d)
	}
	return 2 * per * n(dst)
}

// Conv accounts a convolution.
func (b *Backend) Conv(dst, x, w, bias *compute.Tensor, p compute.ConvParams) {
	own(b, "Conv", dst, x, w, bias)
	compute.ConvDims(dst, x, w, bias, p)
	b.op(convFLOPs(dst, w), dst, x, w, bias)
}

// ConvTranspose accounts a transposed convolution.
func (b *Backend) ConvTranspose(dst, x, w, bias *compute.Tensor, p compute.ConvParams) {
	own(b, "ConvTranspose", dst, x, w, bias)
	compute.ConvTransposeDims(dst, x, w, bias, p)
	per := 1.0
	for _, d := range w.Shape()[1:] {
		per *= float64(d)
	}
	b.op(2*per*n(x), dst, x, w, bias)
}

// Snake accounts the snake activation.
func (b *Backend) Snake(dst, x, alpha, beta *compute.Tensor, logScale bool) {
	own(b, "Snake", dst, x, alpha, beta)
	compute.SnakeDims(dst, x, alpha, beta)
	b.op(6*n(x), dst, x, alpha, beta)
}

// Pad accounts a padded copy.
func (b *Backend) Pad(dst, x *compute.Tensor, p compute.PadParams) {
	own(b, "Pad", dst, x)
	compute.CheckPad(dst, x, p)
	b.op(0, dst, x)
}

// RMSNormModulate accounts one pass: x and the weight read, the addressed
// table rows (as Modulate, the index tensor stands for them), dst written.
func (b *Backend) RMSNormModulate(dst, x *compute.Tensor, p compute.NormModulation) {
	own(b, "RMSNormModulate", dst, x, p.Weight, p.Table, p.Rows)
	compute.RMSNormModulateDims(dst, x, p)
	b.op(7*n(x), dst, x, p.Weight, p.Rows)
}

// GatedAddRMSNormModulate accounts one pass writing h and n.
func (b *Backend) GatedAddRMSNormModulate(h, nt, x, y, gateTable *compute.Tensor, gateCol int, p compute.NormModulation) {
	own(b, "GatedAddRMSNormModulate", h, nt, x, y, gateTable, p.Weight, p.Table, p.Rows)
	compute.GatedAddRMSNormModulateDims(h, nt, x, y, gateTable, gateCol, p, compute.Overlap)
	b.opN(9*n(x), []*compute.Tensor{h, nt}, x, y, p.Weight, p.Rows)
}

// QKNormRoPE accounts one pass reading qkv and writing q, k and v.
func (b *Backend) QKNormRoPE(q, k, v, qkv *compute.Tensor, p compute.QKNormRoPEParams) {
	own(b, "QKNormRoPE", q, k, v, qkv, p.NormQ, p.NormK, p.Cos, p.Sin)
	compute.QKNormRoPEDims(q, k, v, qkv, p, compute.Overlap)
	b.opN(14*n(q), []*compute.Tensor{q, k, v}, qkv, p.NormQ, p.NormK, p.Cos, p.Sin)
}
