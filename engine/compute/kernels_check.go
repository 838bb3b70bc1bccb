package compute

// The argument checks of the kernels, one per kernel, shared by every
// backend: each backend's kernel calls its check first, so that all
// backends accept exactly the operands the CPU reference accepts. A check
// panics (through Check) with a message naming the kernel and returns the
// sizes the kernel works with. Checks that read tensor contents (index
// ranges) stay with the backends that read them; checks of aliasing take
// the backend's overlap test, since only the backend knows its storage.

// CheckCopy panics unless Copy(dst, src) is well formed.
func CheckCopy(dst, src *Tensor) {
	Check(dst.NumElements() == src.NumElements(), "Copy", "%v into %v: element counts differ", src, dst)
}

// CheckTranspose panics unless Transpose(dst, src, perm...) is well formed.
func CheckTranspose(dst, src *Tensor, perm []int) {
	r := src.Rank()
	Check(len(perm) == r && dst.Rank() == r, "Transpose", "perm %v for %v -> %v", perm, src, dst)
	Check(dst.DType() == src.DType(), "Transpose", "dtype %v -> %v", src.DType(), dst.DType())
	seen := make([]bool, r)
	for i, p := range perm {
		Check(p >= 0 && p < r && !seen[p], "Transpose", "invalid perm %v", perm)
		seen[p] = true
		Check(dst.Dim(i) == src.Dim(p), "Transpose", "perm %v maps %v onto %v", perm, src, dst)
	}
}

// CheckGatherRows panics unless GatherRows(dst, src, idx) is well formed
// (the indices' range is the backend's to check).
func CheckGatherRows(dst, src, idx *Tensor) { checkRows("GatherRows", dst, src, idx, dst, src) }

// CheckScatterRows panics unless ScatterRows(dst, src, idx) is well formed
// (the indices' range is the backend's to check).
func CheckScatterRows(dst, src, idx *Tensor) { checkRows("ScatterRows", dst, src, idx, src, dst) }

// CheckMoveRows is CheckGatherRows (gather) or CheckScatterRows. It returns
// the tensor whose rows are moved, one per index, and the one whose rows
// the indices address: dst and src for a gather, src and dst for a scatter.
func CheckMoveRows(dst, src, idx *Tensor, gather bool) (moved, indexed *Tensor) {
	if gather {
		CheckGatherRows(dst, src, idx)
		return dst, src
	}
	CheckScatterRows(dst, src, idx)
	return src, dst
}

// checkRows checks a row gather or scatter: one index per row of moved,
// rows of indexed addressed by them.
func checkRows(op string, dst, src, idx, moved, indexed *Tensor) {
	checkIndex(op, idx)
	Check(dst.DType() == src.DType(), op, "dtype %v vs %v", src, dst)
	Check(moved.Rank() >= 1 && moved.Dim(0) == idx.NumElements(), op, "%d indices for %v", idx.NumElements(), moved)
	Check(indexed.Rank() >= 1 && dst.Shape()[1:].Equal(src.Shape()[1:]), op, "row shapes differ: %v vs %v", src, dst)
}

// checkIndex panics unless idx is an integer tensor.
func checkIndex(op string, idx *Tensor) {
	Check(idx.DType().IsInt(), op, "index tensor %v is not integer", idx)
}

// MatMulDims checks MatMul's operands — w ordinary [N, K] or quantized
// [N, K] — and returns M, N, K.
func MatMulDims(dst, x, w, bias *Tensor) (M, N, K int) {
	Check(w.Rank() == 2, "MatMul", "weight %v is not a matrix", w)
	N, K = w.Dim(0), w.Dim(1)
	if _, in, ok := w.Quant(); ok {
		K = in
	}
	Check(x.Dim(-1) == K, "MatMul", "x %v · w %vᵀ: inner sizes differ", x, w)
	M = x.NumElements() / max(K, 1)
	Check(dst.Dim(-1) == N && dst.NumElements() == M*N, "MatMul", "x %v · w %vᵀ into %v", x, w, dst)
	if bias != nil {
		Check(bias.NumElements() == N, "MatMul", "bias %v for %d outputs", bias, N)
	}
	return M, N, K
}

// AttentionDims checks Attention's operands and returns the query and kv
// head counts, the query and key lengths and the head size.
func AttentionDims(dst, q, k, v *Tensor) (Hq, Hkv, Sq, Sk, D int) {
	Check(q.Rank() == 3 && k.Rank() == 3 && v.Rank() == 3, "Attention", "q %v k %v v %v must be [H, S, D]", q, k, v)
	SameShape("Attention", dst, q)
	SameShape("Attention", k, v)
	Hq, Sq, D = q.Dim(0), q.Dim(1), q.Dim(2)
	Hkv, Sk = k.Dim(0), k.Dim(1)
	Check(k.Dim(2) == D && Hkv > 0 && Hq%Hkv == 0, "Attention", "q %v vs k %v", q, k)
	return Hq, Hkv, Sq, Sk, D
}

// rowDims are the rows and the row width of x (its innermost axis).
func rowDims(x *Tensor) (rows, D int) {
	D = x.Dim(-1)
	return x.NumElements() / max(D, 1), D
}

// checkParam panics unless the optional per-row (or per-channel) parameter
// p has n elements.
func checkParam(op, what string, p, x *Tensor, n int) {
	if p != nil {
		Check(p.NumElements() == n, op, "%s %v for %v", what, p, x)
	}
}

// RMSNormDims checks RMSNorm's operands and returns the rows and width.
func RMSNormDims(dst, x, w *Tensor) (rows, D int) {
	SameShape("RMSNorm", dst, x)
	rows, D = rowDims(x)
	checkParam("RMSNorm", "weight", w, x, D)
	return rows, D
}

// LayerNormDims checks LayerNorm's operands and returns the rows and width.
func LayerNormDims(dst, x, w, b *Tensor) (rows, D int) {
	SameShape("LayerNorm", dst, x)
	rows, D = rowDims(x)
	checkParam("LayerNorm", "weight", w, x, D)
	checkParam("LayerNorm", "bias", b, x, D)
	return rows, D
}

// GroupNormDims checks GroupNorm's operands and returns the channels and
// the positions per channel.
func GroupNormDims(dst, x, w, b *Tensor, groups int) (C, L int) {
	SameShape("GroupNorm", dst, x)
	C = x.Dim(0)
	Check(groups > 0 && C%groups == 0, "GroupNorm", "%d groups for %d channels", groups, C)
	checkParam("GroupNorm", "weight", w, x, C)
	checkParam("GroupNorm", "bias", b, x, C)
	return C, x.NumElements() / max(C, 1)
}

// BroadcastLen checks the operands of the binary kernel op (Add, Mul) and
// returns the period of b over a: b's element count, b having a's shape or
// a suffix of it.
func BroadcastLen(op string, dst, a, b *Tensor) int {
	SameShape(op, dst, a)
	as, bs := a.Shape(), b.Shape()
	Check(len(bs) <= len(as) && bs.Equal(as[len(as)-len(bs):]), op, "%v does not broadcast over %v", b, a)
	return bs.NumElements()
}

// CheckUnary panics unless Unary(dst, x, op) is well formed.
func CheckUnary(dst, x *Tensor, op UnaryOp) {
	SameShape("Unary", dst, x)
	checkUnaryOp("Unary", op)
}

func checkUnaryOp(kernel string, op UnaryOp) {
	Check(int(op) < len(unaryNames), kernel, "unknown op %v", op)
}

// GLUDims checks GLU's operands and returns the rows and the output width F.
func GLUDims(dst, x *Tensor, act UnaryOp) (rows, F int) {
	rows, F = rowDims(dst)
	Check(x.Dim(-1) == 2*F && x.NumElements() == 2*dst.NumElements(), "GLU", "%v -> %v", x, dst)
	checkUnaryOp("GLU", act)
	return rows, F
}

// tableRows checks that idx holds one integer index per row of x and
// returns the rows, the row width and the width and row count of table.
func tableRows(op string, x, table, idx *Tensor) (R, H, W, T int) {
	R, H = rowDims(x)
	checkIndex(op, idx)
	Check(idx.NumElements() == R, op, "%d row indices for %d rows", idx.NumElements(), R)
	W = table.Dim(-1)
	return R, H, W, table.NumElements() / max(W, 1)
}

// ModulateDims checks Modulate's operands and returns the rows and width of
// x and the width and rows of the table (the indices' range is the
// backend's to check).
func ModulateDims(dst, x, table, idx *Tensor, shiftCol, scaleCol int) (R, H, W, T int) {
	SameShape("Modulate", dst, x)
	R, H, W, T = tableRows("Modulate", x, table, idx)
	Check(shiftCol >= 0 && shiftCol+H <= W && scaleCol >= 0 && scaleCol+H <= W, "Modulate", "columns %d,%d+%d outside %v", shiftCol, scaleCol, H, table)
	return R, H, W, T
}

// GatedAddDims checks GatedAdd's operands and returns what ModulateDims does.
func GatedAddDims(dst, x, y, table, idx *Tensor, gateCol int) (R, H, W, T int) {
	SameShape("GatedAdd", dst, x, y)
	R, H, W, T = tableRows("GatedAdd", x, table, idx)
	Check(gateCol >= 0 && gateCol+H <= W, "GatedAdd", "column %d+%d outside %v", gateCol, H, table)
	return R, H, W, T
}

// RoPEDims checks RoPE's operands and returns the rows, the positions S and
// the head size D of x [.., S, D].
func RoPEDims(dst, x, cos, sin *Tensor, rotDim int) (rows, S, D int) {
	SameShape("RoPE", dst, x)
	Check(x.Rank() >= 2, "RoPE", "x %v must be [.., S, D]", x)
	rows, D = rowDims(x)
	S = x.Dim(-2)
	checkRotation("RoPE", cos, sin, rotDim, S, D)
	return rows, S, D
}

// checkRotation checks rotary tables cos, sin [S, rotDim/2] for heads of D.
func checkRotation(op string, cos, sin *Tensor, rotDim, S, D int) {
	SameShape(op, cos, sin)
	Check(rotDim%2 == 0 && rotDim <= D, op, "rotDim %d for head size %d", rotDim, D)
	Check(cos.NumElements() == S*(rotDim/2), op, "tables %v for %d rows × %d", cos, S, rotDim/2)
}

// SnakeDims checks Snake's operands and returns the channels and the
// positions per channel.
func SnakeDims(dst, x, alpha, beta *Tensor) (C, L int) {
	SameShape("Snake", dst, x)
	C = x.Dim(0)
	Check(alpha.NumElements() == C, "Snake", "alpha %v for %v", alpha, x)
	checkParam("Snake", "beta", beta, x, C)
	return C, x.NumElements() / max(C, 1)
}

// ConvGeom is the geometry of a convolution that ConvDims or
// ConvTransposeDims checked.
type ConvGeom struct {
	Spatial         int   // spatial axes, 1 to 3
	In, Out, Kernel []int // sizes per spatial axis
	// InElems, OutElems and KernelElems are the products of In, Out and
	// Kernel.
	InElems, OutElems, KernelElems int
	Groups                         int
	Cin, Cout                      int // channels
	CinG, CoutG                    int // channels per group
}

// ConvDims checks Conv's operands and returns their geometry.
func ConvDims(dst, x, w, bias *Tensor, p ConvParams) ConvGeom {
	g := convGeom("Conv", dst, x, w, p)
	g.Cin, g.Cout = x.Dim(0), w.Dim(0)
	G := g.Groups
	Check(g.Cin%G == 0 && g.Cout%G == 0 && w.Dim(1) == g.Cin/G && dst.Dim(0) == g.Cout, "Conv", "channels: x %v w %v dst %v groups %d", x, w, dst, G)
	g.CinG, g.CoutG = g.Cin/G, g.Cout/G
	for a := 0; a < g.Spatial; a++ {
		want := ConvOutSize(g.In[a], g.Kernel[a], p.StrideAt(a), p.DilationAt(a), p.PadBeforeAt(a), p.PadAfterAt(a))
		Check(g.Out[a] == want, "Conv", "axis %d: output %d, want %d (x %v w %v)", a, g.Out[a], want, x, w)
	}
	Check(bias == nil || bias.NumElements() == g.Cout, "Conv", "bias %v for %d channels", bias, g.Cout)
	return g
}

// ConvTransposeDims checks ConvTranspose's operands and returns their
// geometry.
func ConvTransposeDims(dst, x, w, bias *Tensor, p ConvParams) ConvGeom {
	g := convGeom("ConvTranspose", dst, x, w, p)
	Check(p.PadMode == PadZeros, "ConvTranspose", "only zero padding")
	G := g.Groups
	g.Cin, g.CoutG = x.Dim(0), w.Dim(1)
	g.Cout, g.CinG = g.CoutG*G, g.Cin/G
	Check(w.Dim(0) == g.Cin && g.Cin%G == 0 && dst.Dim(0) == g.Cout, "ConvTranspose", "channels: x %v w %v dst %v groups %d", x, w, dst, G)
	for a := 0; a < g.Spatial; a++ {
		want := ConvTransposeOutSize(g.In[a], g.Kernel[a], p.StrideAt(a), p.DilationAt(a), p.PadBeforeAt(a), p.PadAfterAt(a))
		Check(g.Out[a] == want, "ConvTranspose", "axis %d: output %d, want %d (x %v w %v)", a, g.Out[a], want, x, w)
	}
	Check(bias == nil || bias.NumElements() == g.Cout, "ConvTranspose", "bias %v for %d channels", bias, g.Cout)
	return g
}

// convGeom checks the ranks of a convolution and reads its spatial sizes.
func convGeom(op string, dst, x, w *Tensor, p ConvParams) ConvGeom {
	n := x.Rank() - 1
	Check(n >= 1 && n <= 3 && w.Rank() == n+2 && dst.Rank() == n+1, op, "x %v w %v dst %v: want [C, spatial…] with 1–3 spatial axes", x, w, dst)
	g := ConvGeom{Spatial: n, KernelElems: 1, InElems: 1, OutElems: 1, Groups: p.GroupCount()}
	for a := 0; a < n; a++ {
		g.In = append(g.In, x.Dim(a+1))
		g.Out = append(g.Out, dst.Dim(a+1))
		g.Kernel = append(g.Kernel, w.Dim(a+2))
		g.KernelElems *= w.Dim(a + 2)
		g.InElems *= x.Dim(a + 1)
		g.OutElems *= dst.Dim(a + 1)
	}
	return g
}

// CheckPad panics (through Check) unless Pad(dst, x, p) is well formed:
// equal ranks and dtypes, one parameter per axis, dst.Dim(a) ==
// Before + x.Dim(a) + After, reflect borders shorter than their axis, and
// no reflect or replicate border on an empty axis.
func CheckPad(dst, x *Tensor, p PadParams) {
	r := x.Rank()
	Check(dst.Rank() == r && r >= 1, "Pad", "x %v into dst %v: ranks differ", x, dst)
	Check(dst.DType() == x.DType(), "Pad", "dtype %v -> %v", x.DType(), dst.DType())
	Check((p.Before == nil || len(p.Before) == r) && (p.After == nil || len(p.After) == r) && (p.Modes == nil || len(p.Modes) == r),
		"Pad", "parameters %+v for rank %d", p, r)
	for a := 0; a < r; a++ {
		lo, hi := p.BeforeAt(a), p.AfterAt(a)
		Check(lo >= 0 && hi >= 0 && dst.Dim(a) == lo+x.Dim(a)+hi, "Pad", "axis %d: %d + %d + %d != %d (x %v dst %v)", a, lo, x.Dim(a), hi, dst.Dim(a), x, dst)
		if p.ModeAt(a) == PadReflect {
			Check(lo < x.Dim(a) && hi < x.Dim(a), "Pad", "axis %d: reflect padding %d/%d needs more than %d elements", a, lo, hi, x.Dim(a))
		}
		if p.ModeAt(a) != PadZeros {
			Check(x.Dim(a) > 0, "Pad", "axis %d: cannot %v-pad an empty axis", a, p.ModeAt(a))
		}
	}
}

// NormModulationDims checks an AdaLN pre-norm p over the rows of x for the
// fused kernel op and returns what ModulateDims does.
func NormModulationDims(op string, x *Tensor, p NormModulation) (R, H, W, T int) {
	R, H, W, T = tableRows(op, x, p.Table, p.Rows)
	checkParam(op, "weight", p.Weight, x, H)
	Check(p.ShiftCol >= 0 && p.ShiftCol+H <= W && p.ScaleCol >= 0 && p.ScaleCol+H <= W, op,
		"columns %d,%d+%d outside %v", p.ShiftCol, p.ScaleCol, H, p.Table)
	return R, H, W, T
}

// RMSNormModulateDims checks RMSNormModulate's operands and returns what
// ModulateDims does.
func RMSNormModulateDims(dst, x *Tensor, p NormModulation) (R, H, W, T int) {
	SameShape("RMSNormModulate", dst, x)
	return NormModulationDims("RMSNormModulate", x, p)
}

// GatedAddRMSNormModulateDims checks GatedAddRMSNormModulate's operands
// (overlap tells whether two tensors share storage) and returns what
// ModulateDims does for p and the width and rows of gateTable.
func GatedAddRMSNormModulateDims(h, n, x, y, gateTable *Tensor, gateCol int, p NormModulation, overlap func(a, b *Tensor) bool) (R, H, W, T, GW, GT int) {
	const op = "GatedAddRMSNormModulate"
	SameShape(op, h, n, x, y)
	Check(!overlap(n, h) && !overlap(n, x) && !overlap(n, y), op, "n %v overlaps h, x or y", n)
	R, H, W, T = NormModulationDims(op, x, p)
	GW = gateTable.Dim(-1)
	Check(gateCol >= 0 && gateCol+H <= GW, op, "gate column %d+%d outside %v", gateCol, H, gateTable)
	return R, H, W, T, GW, gateTable.NumElements() / max(GW, 1)
}

// QKNormRoPEDims checks QKNormRoPE's operands (overlap tells whether two
// tensors share storage) and returns the positions, heads and head size.
func QKNormRoPEDims(q, k, v, qkv *Tensor, p QKNormRoPEParams, overlap func(a, b *Tensor) bool) (S, Hs, D int) {
	const op = "QKNormRoPE"
	S, Hs, D = QKVShape(qkv, p.Layout)
	dt := qkv.DType()
	for _, t := range []*Tensor{q, k, v} {
		Check(t.Rank() == 3 && t.Dim(0) == Hs && t.Dim(1) == S && t.Dim(2) == D && t.DType() == dt, op,
			"%v for qkv %v: want %v[%d, %d, %d]", t, qkv, dt, Hs, S, D)
		Check(!overlap(t, qkv), op, "%v overlaps qkv %v", t, qkv)
	}
	Check(!overlap(q, k) && !overlap(q, v) && !overlap(k, v), op, "q, k and v overlap")
	for _, w := range []*Tensor{p.NormQ, p.NormK} {
		Check(w == nil || w.NumElements() == D, op, "norm weight %v for heads of %d", w, D)
	}
	if p.Cos != nil {
		checkRotation(op, p.Cos, p.Sin, p.RotDim, S, D)
	}
	return S, Hs, D
}

// Overlap reports whether a and b view overlapping bytes of one Buffer: the
// aliasing test of a backend whose distinct buffers never share memory.
func Overlap(a, b *Tensor) bool {
	ba, oa := a.Buffer()
	bb, ob := b.Buffer()
	if ba != bb || a.Bytes() == 0 || b.Bytes() == 0 {
		return false
	}
	return oa < ob+b.Bytes() && ob < oa+a.Bytes()
}
