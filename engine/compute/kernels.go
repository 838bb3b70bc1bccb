package compute

// Kernels is the complete operation set of the H3 pipeline. Every backend
// implements every kernel; package cpu is the reference (the executable
// specification) and computetest checks the others against it.
//
// Conventions:
//   - Destinations come first. Shapes are outermost-first; the "rows" of a
//     tensor are its elements grouped by the innermost axis.
//   - Arithmetic is float32 whatever the storage type. A result is rounded
//     once, to dst's dtype, when stored (round to nearest even), unless a
//     kernel documents intermediate roundings (those mirror the reference's
//     BF16 operator chain so that mixed-precision parity holds).
//   - Elementwise kernels allow dst to alias an input (the same view).
//   - Index tensors are I32 or I64.
//   - Shape or dtype mismatches panic: they are bugs, not conditions.
type Kernels interface {
	Padder // kernels_pad.go
	Fused  // kernels_fused.go

	// Copy converts src to dst's dtype element by element (same element
	// count; shapes may differ, as after a reshape).
	Copy(dst, src *Tensor)
	// Fill sets every element to v (rounded to dst's dtype).
	Fill(dst *Tensor, v float32)
	// Transpose permutes axes: dst.Dim(i) == src.Dim(perm[i]). Same dtype.
	Transpose(dst, src *Tensor, perm ...int)
	// GatherRows sets dst[i] = src[idx[i]] along the outermost axis.
	GatherRows(dst, src, idx *Tensor)
	// ScatterRows sets dst[idx[i]] = src[i] along the outermost axis; other
	// rows of dst are left unchanged. Indices must be distinct.
	ScatterRows(dst, src, idx *Tensor)

	// MatMul computes dst[m,n] = Σ_k x[m,k]·w[n,k] + bias[n] (bias may be
	// nil): a torch Linear with its [out, in] weight. x may have leading
	// axes; they are flattened into m. Products accumulate in float32 and
	// the bias is added before the single rounding to dst's dtype.
	MatMul(dst, x, w, bias *Tensor)
	// Attention computes softmax(q·kᵀ·scale)·v per head. q is [Hq, Sq, D],
	// k and v are [Hkv, Sk, D] with Hkv dividing Hq (grouped-query
	// attention: query head h uses kv head h/(Hq/Hkv)), dst is [Hq, Sq, D].
	// Scores, softmax and accumulation are float32.
	Attention(dst, q, k, v *Tensor, p AttentionParams)

	// RMSNorm computes x·rsqrt(mean(x²)+eps)·w over the innermost axis, in
	// float32, rounding once (torch ≥ 2.4 nn.RMSNorm). w may be nil.
	RMSNorm(dst, x, w *Tensor, eps float32)
	// LayerNorm computes (x−mean)·rsqrt(var+eps)·w + b over the innermost
	// axis (biased variance), float32, one rounding. w and b may be nil.
	LayerNorm(dst, x, w, b *Tensor, eps float32)
	// GroupNorm normalizes x [C, L...] in `groups` groups of C/groups
	// channels over all their positions, then applies the per-channel w and
	// b (either may be nil). float32, one rounding.
	GroupNorm(dst, x, w, b *Tensor, groups int, eps float32)

	// Add computes a + b. b has the shape of a or of a's innermost axes (a
	// suffix of a's shape), broadcast over the leading axes.
	Add(dst, a, b *Tensor)
	// Mul computes a · b with Add's broadcasting.
	Mul(dst, a, b *Tensor)
	// Scale computes x·alpha + beta.
	Scale(dst, x *Tensor, alpha, beta float32)
	// Unary applies op to every element.
	Unary(dst, x *Tensor, op UnaryOp)
	// Clamp limits every element to [lo, hi].
	Clamp(dst, x *Tensor, lo, hi float32)
	// GLU computes act(x[r, g+j])·x[r, u+j] for the two halves of each row of
	// x [.., 2F] into dst [.., F]; (g, u) = (0, F) when gateFirst, else (F, 0).
	// When dst is BF16 or F16 the activation result is rounded before the
	// product (torch's `act(gate) * up` on low-precision tensors).
	GLU(dst, x *Tensor, act UnaryOp, gateFirst bool)

	// Modulate computes x[r]·(1 + table[idx[r], scaleCol:+H]) +
	// table[idx[r], shiftCol:+H] for rows r of x [R, H]: AdaLN modulation
	// with a per-row modulation-table row. When dst is BF16 it rounds as the
	// BF16 reference chain does: 1+scale, the product and the sum each
	// round to BF16.
	Modulate(dst, x, table, idx *Tensor, shiftCol, scaleCol int)
	// GatedAdd computes x[r] + table[idx[r], gateCol:+H]·y[r] (a gated
	// residual). When dst is BF16 the product and the sum each round.
	GatedAdd(dst, x, y, table, idx *Tensor, gateCol int)
	// RoPE rotates the first rotDim channels of the innermost axis of x
	// [.., S, D] with rotate-half pairing (channel d pairs with d ± rotDim/2)
	// using cos, sin [S, rotDim/2]; channels ≥ rotDim pass through. When dst
	// is BF16 the two products and the sum each round (torch's
	// `x·cos + rotate_half(x)·sin` on BF16 tensors).
	RoPE(dst, x, cos, sin *Tensor, rotDim int)

	// Conv is an N-d (1–3 spatial axes) cross-correlation, batch size 1:
	// x [Cin, spatial...], w [Cout, Cin/groups, kernel...], bias [Cout] or
	// nil, dst [Cout, out...].
	Conv(dst, x, w, bias *Tensor, p ConvParams)
	// ConvTranspose is the transposed N-d convolution (the gradient of Conv
	// with respect to its input), batch size 1: x [Cin, spatial...],
	// w [Cin, Cout/groups, kernel...], bias [Cout] or nil. p.PadBefore and
	// p.PadAfter crop the full output; p.PadMode must be PadZeros.
	ConvTranspose(dst, x, w, bias *Tensor, p ConvParams)
	// Snake computes x + 1/(a+1e-9)·sin²(a·x) per channel of x [C, L] with
	// a = alpha[c] (exp(alpha[c]) when logScale) and, for SnakeBeta, 1/(b+1e-9)
	// with b = beta[c] (exp when logScale) in place of the first 1/(a+1e-9).
	// beta may be nil (plain Snake). Operation order follows the reference:
	// x + reciprocal(·)·sin(a·x)².
	Snake(dst, x, alpha, beta *Tensor, logScale bool)
}

// UnaryOp names an elementwise function.
type UnaryOp uint8

// The elementwise functions of Unary and GLU.
const (
	Identity UnaryOp = iota
	SiLU             // x·sigmoid(x)
	GELU             // exact: x·Φ(x) with erf
	GELUTanh         // tanh approximation
	Tanh
	Sigmoid
	Exp
	Neg
	Square
	Sqrt
	Rsqrt
	Sin
	Cos
	Abs
)

var unaryNames = [...]string{"identity", "silu", "gelu", "gelu_tanh", "tanh", "sigmoid", "exp", "neg", "square", "sqrt", "rsqrt", "sin", "cos", "abs"}

func (op UnaryOp) String() string {
	if int(op) < len(unaryNames) {
		return unaryNames[op]
	}
	return "unary?"
}

// AttentionParams configures Attention.
type AttentionParams struct {
	Scale  float32 // usually 1/sqrt(D)
	Causal bool    // query i attends keys j ≤ i + (Sk − Sq)
	// RoundProbs rounds the unnormalised probabilities to dst's dtype before
	// the product with v when dst is BF16/F16, as fused low-precision
	// attention kernels do (closer to torch's bf16 SDPA).
	RoundProbs bool
}

// PadMode is the border rule of a convolution.
type PadMode uint8

// Border rules.
const (
	PadZeros     PadMode = iota
	PadReflect           // mirror without repeating the edge (torch "reflect")
	PadReplicate         // repeat the edge value
)

// ConvParams configures Conv and ConvTranspose. Slices hold one value per
// spatial axis; a nil slice means 1 (Stride, Dilation) or 0 (padding).
type ConvParams struct {
	Stride    []int
	Dilation  []int
	PadBefore []int
	PadAfter  []int
	PadMode   PadMode
	Groups    int // 0 means 1
}

// At returns the per-axis values of a ConvParams slice for n axes.
func paramAt(s []int, i, def int) int {
	if s == nil {
		return def
	}
	return s[i]
}

// StrideAt is the stride of spatial axis i.
func (p ConvParams) StrideAt(i int) int { return paramAt(p.Stride, i, 1) }

// DilationAt is the dilation of spatial axis i.
func (p ConvParams) DilationAt(i int) int { return paramAt(p.Dilation, i, 1) }

// PadBeforeAt is the leading padding (crop for ConvTranspose) of axis i.
func (p ConvParams) PadBeforeAt(i int) int { return paramAt(p.PadBefore, i, 0) }

// PadAfterAt is the trailing padding (crop for ConvTranspose) of axis i.
func (p ConvParams) PadAfterAt(i int) int { return paramAt(p.PadAfter, i, 0) }

// GroupCount is the number of groups (at least 1).
func (p ConvParams) GroupCount() int {
	if p.Groups <= 0 {
		return 1
	}
	return p.Groups
}

// ConvOutSize is the output length of one spatial axis of Conv.
func ConvOutSize(in, kernel, stride, dilation, padBefore, padAfter int) int {
	return (in+padBefore+padAfter-dilation*(kernel-1)-1)/stride + 1
}

// ConvTransposeOutSize is the output length of one axis of ConvTranspose.
func ConvTransposeOutSize(in, kernel, stride, dilation, cropBefore, cropAfter int) int {
	return (in-1)*stride + dilation*(kernel-1) + 1 - cropBefore - cropAfter
}
