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
	compute.Check(dst.NumElements() == src.NumElements(), "Copy", "%v into %v: element counts differ", src, dst)
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
	r := src.Rank()
	compute.Check(len(perm) == r && dst.Rank() == r, "Transpose", "perm %v for %v -> %v", perm, src, dst)
	for i, p := range perm {
		compute.Check(p >= 0 && p < r && dst.Dim(i) == src.Dim(p), "Transpose", "perm %v maps %v onto %v", perm, src, dst)
	}
	compute.Check(dst.DType() == src.DType(), "Transpose", "dtype %v -> %v", src.DType(), dst.DType())
	b.op(0, dst, src)
}

// GatherRows accounts a row gather (only the gathered rows are read).
func (b *Backend) GatherRows(dst, src, idx *compute.Tensor) {
	own(b, "GatherRows", dst, src, idx)
	compute.Check(dst.Rank() >= 1 && dst.Dim(0) == idx.NumElements(), "GatherRows", "%v indices for %v", idx, dst)
	compute.Check(dst.DType() == src.DType() && dst.Shape()[1:].Equal(src.Shape()[1:]), "GatherRows", "%v from %v", dst, src)
	b.op(0, dst, idx, dst) // reads as many bytes as it writes
}

// ScatterRows accounts a row scatter.
func (b *Backend) ScatterRows(dst, src, idx *compute.Tensor) {
	own(b, "ScatterRows", dst, src, idx)
	compute.Check(src.Rank() >= 1 && src.Dim(0) == idx.NumElements(), "ScatterRows", "%v indices for %v", idx, src)
	compute.Check(dst.DType() == src.DType() && dst.Shape()[1:].Equal(src.Shape()[1:]), "ScatterRows", "%v into %v", src, dst)
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
	compute.Check(q.Rank() == 3 && k.Rank() == 3 && v.Rank() == 3, "Attention", "q %v k %v v %v must be [H, S, D]", q, k, v)
	compute.SameShape("Attention", dst, q)
	compute.SameShape("Attention", k, v)
	Hq, Sq, D := q.Dim(0), q.Dim(1), q.Dim(2)
	Hkv, Sk := k.Dim(0), k.Dim(1)
	compute.Check(k.Dim(2) == D && Hkv > 0 && Hq%Hkv == 0, "Attention", "q %v vs k %v", q, k)
	f := 4*float64(Hq)*float64(Sq)*float64(Sk)*float64(D) + 5*float64(Hq)*float64(Sq)*float64(Sk)
	b.op(f, dst, q, k, v)
}

func (b *Backend) rowNorm(op string, flopsPer float64, dst, x *compute.Tensor, params ...*compute.Tensor) {
	own(b, op, append([]*compute.Tensor{dst, x}, params...)...)
	compute.SameShape(op, dst, x)
	b.op(flopsPer*n(x), dst, append([]*compute.Tensor{x}, params...)...)
}

// RMSNorm accounts a row normalization.
func (b *Backend) RMSNorm(dst, x, w *compute.Tensor, eps float32) {
	if w != nil {
		compute.Check(w.NumElements() == x.Dim(-1), "RMSNorm", "weight %v for %v", w, x)
	}
	b.rowNorm("RMSNorm", 4, dst, x, w)
}

// LayerNorm accounts a row normalization.
func (b *Backend) LayerNorm(dst, x, w, bias *compute.Tensor, eps float32) {
	b.rowNorm("LayerNorm", 6, dst, x, w, bias)
}

// GroupNorm accounts a group normalization.
func (b *Backend) GroupNorm(dst, x, w, bias *compute.Tensor, groups int, eps float32) {
	compute.Check(groups > 0 && x.Dim(0)%groups == 0, "GroupNorm", "%d groups for %v", groups, x)
	b.rowNorm("GroupNorm", 6, dst, x, w, bias)
}

func (b *Backend) binary(op string, dst, x, y *compute.Tensor) {
	own(b, op, dst, x, y)
	compute.SameShape(op, dst, x)
	xs, ys := x.Shape(), y.Shape()
	compute.Check(len(ys) <= len(xs) && ys.Equal(xs[len(xs)-len(ys):]), op, "%v does not broadcast over %v", y, x)
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
	compute.SameShape("Unary", dst, x)
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
	compute.Check(x.Dim(-1) == 2*dst.Dim(-1) && x.NumElements() == 2*dst.NumElements(), "GLU", "%v -> %v", x, dst)
	b.op(6*n(dst), dst, x)
}

// Modulate accounts x·(1+scale)+shift (only the addressed table rows are read).
func (b *Backend) Modulate(dst, x, table, idx *compute.Tensor, shiftCol, scaleCol int) {
	own(b, "Modulate", dst, x, table, idx)
	compute.SameShape("Modulate", dst, x)
	H := x.Dim(-1)
	compute.Check(idx.NumElements()*H == x.NumElements(), "Modulate", "%v row indices for %v", idx, x)
	compute.Check(shiftCol >= 0 && shiftCol+H <= table.Dim(-1) && scaleCol >= 0 && scaleCol+H <= table.Dim(-1), "Modulate", "columns %d,%d+%d outside %v", shiftCol, scaleCol, H, table)
	b.op(3*n(x), dst, x, idx)
}

// GatedAdd accounts x + gate·y.
func (b *Backend) GatedAdd(dst, x, y, table, idx *compute.Tensor, gateCol int) {
	own(b, "GatedAdd", dst, x, y, table, idx)
	compute.SameShape("GatedAdd", dst, x, y)
	H := x.Dim(-1)
	compute.Check(idx.NumElements()*H == x.NumElements(), "GatedAdd", "%v row indices for %v", idx, x)
	compute.Check(gateCol >= 0 && gateCol+H <= table.Dim(-1), "GatedAdd", "column %d+%d outside %v", gateCol, H, table)
	b.op(2*n(x), dst, x, y, idx)
}

// RoPE accounts a rotary embedding.
func (b *Backend) RoPE(dst, x, cos, sin *compute.Tensor, rotDim int) {
	own(b, "RoPE", dst, x, cos, sin)
	compute.SameShape("RoPE", dst, x)
	compute.SameShape("RoPE", cos, sin)
	compute.Check(x.Rank() >= 2 && rotDim%2 == 0 && rotDim <= x.Dim(-1), "RoPE", "rotDim %d for %v", rotDim, x)
	compute.Check(cos.NumElements() == x.Dim(-2)*rotDim/2, "RoPE", "tables %v for %v", cos, x)
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
	compute.Check(w.Rank() == x.Rank()+1 && w.Rank() >= 3, "Conv", "x %v, w %v", x, w)
	b.op(convFLOPs(dst, w), dst, x, w, bias)
}

// ConvTranspose accounts a transposed convolution.
func (b *Backend) ConvTranspose(dst, x, w, bias *compute.Tensor, p compute.ConvParams) {
	own(b, "ConvTranspose", dst, x, w, bias)
	compute.Check(w.Rank() == x.Rank()+1 && w.Rank() >= 3, "ConvTranspose", "x %v, w %v", x, w)
	per := 1.0
	for _, d := range w.Shape()[1:] {
		per *= float64(d)
	}
	b.op(2*per*n(x), dst, x, w, bias)
}

// Snake accounts the snake activation.
func (b *Backend) Snake(dst, x, alpha, beta *compute.Tensor, logScale bool) {
	own(b, "Snake", dst, x, alpha, beta)
	compute.SameShape("Snake", dst, x)
	b.op(6*n(x), dst, x, alpha, beta)
}

// Pad accounts a padded copy.
func (b *Backend) Pad(dst, x *compute.Tensor, p compute.PadParams) {
	own(b, "Pad", dst, x)
	compute.CheckPad(dst, x, p)
	b.op(0, dst, x)
}

// normModulation checks an AdaLN pre-norm's operands for rows of width H.
func normModulation(op string, p compute.NormModulation, x *compute.Tensor) {
	H := x.Dim(-1)
	if p.Weight != nil {
		compute.Check(p.Weight.NumElements() == H, op, "weight %v for %v", p.Weight, x)
	}
	compute.Check(p.Rows.NumElements()*H == x.NumElements(), op, "%v row indices for %v", p.Rows, x)
	W := p.Table.Dim(-1)
	compute.Check(p.ShiftCol >= 0 && p.ShiftCol+H <= W && p.ScaleCol >= 0 && p.ScaleCol+H <= W, op, "columns %d,%d+%d outside %v", p.ShiftCol, p.ScaleCol, H, p.Table)
}

// RMSNormModulate accounts one pass: x and the weight read, the addressed
// table rows (as Modulate, the index tensor stands for them), dst written.
func (b *Backend) RMSNormModulate(dst, x *compute.Tensor, p compute.NormModulation) {
	own(b, "RMSNormModulate", dst, x, p.Weight, p.Table, p.Rows)
	compute.SameShape("RMSNormModulate", dst, x)
	normModulation("RMSNormModulate", p, x)
	b.op(7*n(x), dst, x, p.Weight, p.Rows)
}

// GatedAddRMSNormModulate accounts one pass writing h and n.
func (b *Backend) GatedAddRMSNormModulate(h, nt, x, y, gateTable *compute.Tensor, gateCol int, p compute.NormModulation) {
	own(b, "GatedAddRMSNormModulate", h, nt, x, y, gateTable, p.Weight, p.Table, p.Rows)
	compute.SameShape("GatedAddRMSNormModulate", h, nt, x, y)
	normModulation("GatedAddRMSNormModulate", p, x)
	compute.Check(gateCol >= 0 && gateCol+x.Dim(-1) <= gateTable.Dim(-1), "GatedAddRMSNormModulate", "gate column %d+%d outside %v", gateCol, x.Dim(-1), gateTable)
	b.opN(9*n(x), []*compute.Tensor{h, nt}, x, y, p.Weight, p.Rows)
}

// QKNormRoPE accounts one pass reading qkv and writing q, k and v.
func (b *Backend) QKNormRoPE(q, k, v, qkv *compute.Tensor, p compute.QKNormRoPEParams) {
	own(b, "QKNormRoPE", q, k, v, qkv, p.NormQ, p.NormK, p.Cos, p.Sin)
	S, H, D := compute.QKVShape(qkv, p.Layout)
	for _, t := range []*compute.Tensor{q, k, v} {
		compute.Check(t.Rank() == 3 && t.Dim(0) == H && t.Dim(1) == S && t.Dim(2) == D && t.DType() == qkv.DType(), "QKNormRoPE", "%v for qkv %v", t, qkv)
	}
	if p.Cos != nil {
		compute.SameShape("QKNormRoPE", p.Cos, p.Sin)
		compute.Check(p.RotDim%2 == 0 && p.RotDim <= D && p.Cos.NumElements() == S*p.RotDim/2, "QKNormRoPE", "tables %v, rotDim %d for %v", p.Cos, p.RotDim, qkv)
	}
	b.opN(14*n(q), []*compute.Tensor{q, k, v}, qkv, p.NormQ, p.NormK, p.Cos, p.Sin)
}
