package compute

// Fused is the family of fused DiT kernels: semantic operations, each
// defined as a sequence of the unfused kernels it replaces (and bit-identical
// to that sequence on the CPU reference: intermediate results round to the
// destination's dtype exactly where the sequence stores them). A backend runs
// the sequence in one pass over each row, saving dispatches and the global
// reads and writes of the intermediates. Model code keeps the unfused
// sequence selectable as a named oracle (house rule 10).
//
// The fusions are those of the MiniMax-H3 block (H3-DIT §9.3): the AdaLN
// pre-norm (RMSNorm, then modulation by the row's table row), the gated
// residual followed by the next AdaLN pre-norm (inside a block and across
// blocks, as h3.c's "exact DiT fusions"), and the QK-norm and rotary
// embedding read straight from the QKV projection's output.
type Fused interface {
	// RMSNormModulate is
	//
	//	RMSNorm(dst, x, p.Weight, p.Eps)
	//	Modulate(dst, dst, p.Table, p.Rows, p.ShiftCol, p.ScaleCol)
	//
	// for x [R, H] (leading axes flatten into R): the normalised row is
	// rounded to dst's dtype before the modulation, as the sequence stores
	// it. dst may be the same view as x.
	RMSNormModulate(dst, x *Tensor, p NormModulation)

	// GatedAddRMSNormModulate is
	//
	//	GatedAdd(h, x, y, gateTable, p.Rows, gateCol)
	//	RMSNormModulate(n, h, p)
	//
	// the gated residual update of the hidden state followed by the AdaLN
	// pre-norm of the next sub-layer, whose modulation table p.Table may
	// differ from gateTable (the next block's); both are addressed by
	// p.Rows. h may be the same view as x; n must not overlap h, x or y.
	GatedAddRMSNormModulate(h, n, x, y, gateTable *Tensor, gateCol int, p NormModulation)

	// QKNormRoPE splits a QKV projection into heads and applies the
	// per-head QK-norm and rotary embedding of attention:
	//
	//	Q, K, V = the three parts of qkv as [Hs, S, D] (p.Layout)
	//	RMSNorm(q, Q, p.NormQ, p.Eps); RoPE(q, q, p.Cos, p.Sin, p.RotDim)
	//	RMSNorm(k, K, p.NormK, p.Eps); RoPE(k, k, p.Cos, p.Sin, p.RotDim)
	//	Copy(v, V)
	//
	// q, k and v are [Hs, S, D] with qkv's dtype and must not overlap qkv or
	// each other. Without p.Cos (and p.Sin) there is no rotation.
	QKNormRoPE(q, k, v, qkv *Tensor, p QKNormRoPEParams)
}

// NormModulation is an AdaLN pre-norm: RMSNorm with Weight (nil: none) and
// Eps over the innermost axis of a [R, H] operand, then modulation by
// Table [T, W] (any float dtype): row r uses table row Rows[r] (an I32 or
// I64 tensor [R]), columns [ShiftCol, ShiftCol+H) and [ScaleCol, ScaleCol+H)
// (x·(1 + scale) + shift; see Kernels.Modulate for the BF16 chain).
type NormModulation struct {
	Weight             *Tensor
	Eps                float32
	Table, Rows        *Tensor
	ShiftCol, ScaleCol int
}

// QKVLayout is the arrangement of a QKV projection's output.
type QKVLayout uint8

// QKV layouts, with S positions, Hs heads of D channels.
const (
	// QKVInterleaved is [S, Hs, 3, D]: per position and head, q then k then
	// v: the original H3 checkpoint's per-head interleaved attn.qkv_proj
	// (H3-DIT §3.2) as one matrix product writes it.
	QKVInterleaved QKVLayout = iota
	// QKVPlanar is [3, S, Hs, D]: the q, k and v projections (diffusers'
	// to_q, to_k, to_v) written one after the other.
	QKVPlanar
	// QKVPacked is [S, 3, Hs, D]: per position q, k and v each over all
	// heads, one fused projection read as torch's reshape(S, 3, Hs, D)
	// (the Qwen3-VL vision tower, the audio VAE encoder). QKNormRoPE does
	// not take it; nn.SplitHeads does.
	QKVPacked
)

// QKNormRoPEParams configures QKNormRoPE.
type QKNormRoPEParams struct {
	Layout QKVLayout
	// NormQ and NormK are the [D] weights of the per-head RMSNorm (nil: no
	// weight), Eps its epsilon.
	NormQ, NormK *Tensor
	Eps          float32
	// Cos and Sin [S, RotDim/2] rotate the first RotDim channels of each
	// head as Kernels.RoPE does; nil for no rotary embedding.
	Cos, Sin *Tensor
	RotDim   int
}

// QKVShape returns (S, Hs, D) of a QKV projection output in layout l.
func QKVShape(qkv *Tensor, l QKVLayout) (S, heads, D int) {
	Check(qkv.Rank() == 4, "QKNormRoPE", "qkv %v must have 4 axes", qkv)
	switch l {
	case QKVInterleaved:
		Check(qkv.Dim(2) == 3, "QKNormRoPE", "interleaved qkv %v must be [S, heads, 3, D]", qkv)
		return qkv.Dim(0), qkv.Dim(1), qkv.Dim(3)
	case QKVPlanar:
		Check(qkv.Dim(0) == 3, "QKNormRoPE", "planar qkv %v must be [3, S, heads, D]", qkv)
		return qkv.Dim(1), qkv.Dim(2), qkv.Dim(3)
	case QKVPacked:
		Check(false, "QKNormRoPE", "qkv %v: the packed layout is not fused (split it with nn.SplitHeads)", qkv)
	}
	panic("compute: QKNormRoPE: unknown QKV layout")
}
