package nn

import (
	"h3studio/engine/compute"
	"h3studio/engine/safetensors"
)

// RMSNorm is torch nn.RMSNorm over the last axis: x·rsqrt(mean(x²)+Eps),
// times W when W is set.
type RMSNorm struct {
	W   *compute.Tensor // [width] or nil
	Eps float32
}

// Forward records dst = RMSNorm(x).
func (n RMSNorm) Forward(k compute.Kernels, dst, x *compute.Tensor) { k.RMSNorm(dst, x, n.W, n.Eps) }

// LayerNorm is torch nn.LayerNorm over the last axis with an affine weight
// and bias (either may be nil).
type LayerNorm struct {
	W, B *compute.Tensor // [width]
	Eps  float32
}

// LoadLayerNorm binds name.weight and name.bias [width].
func LoadLayerNorm(w *safetensors.Binder, name string, width int, eps float32) LayerNorm {
	return LayerNorm{W: w.Tensor(name+".weight", width), B: w.Tensor(name+".bias", width), Eps: eps}
}

// Tensors are the weight and bias (nil where absent).
func (n LayerNorm) Tensors() []*compute.Tensor { return []*compute.Tensor{n.W, n.B} }

// Forward records dst = LayerNorm(x).
func (n LayerNorm) Forward(k compute.Kernels, dst, x *compute.Tensor) {
	k.LayerNorm(dst, x, n.W, n.B, n.Eps)
}

// GatedMLP is the bias-free gated feed-forward of the H3 transformers: one
// projection to [2·F] (gate and value halves), act(gate)·value, and a down
// projection back: y = Down(GLU(Up(x))).
type GatedMLP struct {
	Up   Linear // [2·F, in]
	Down Linear // [out, F]
	// GateFirst is true when Up's rows are [gate; value], false for
	// [value; gate].
	GateFirst bool
	Act       compute.UnaryOp
}

// Hidden is the gated width F.
func (m GatedMLP) Hidden() int { return m.Down.In() }

// Tensors are both projections' weights and biases (nil where absent).
func (m GatedMLP) Tensors() []*compute.Tensor { return append(m.Up.Tensors(), m.Down.Tensors()...) }

// Forward records dst [S, out] = Down(act(gate)·value) of x [S, in], with
// up [S, 2·F] and gated [S, F] as scratch.
func (m GatedMLP) Forward(k compute.Kernels, dst, x, up, gated *compute.Tensor) {
	m.Up.Forward(k, up, x)
	k.GLU(gated, up, m.Act, m.GateFirst)
	m.Down.Forward(k, dst, gated)
}

// MLP is the two-layer feed-forward y = Down(act(Up(x))).
type MLP struct {
	Up, Down Linear
	Act      compute.UnaryOp
}

// Tensors are both projections' weights and biases (nil where absent).
func (m MLP) Tensors() []*compute.Tensor { return append(m.Up.Tensors(), m.Down.Tensors()...) }

// Forward records dst [S, out] = Down(act(Up(x))) of x [S, in], with h
// [S, Up.Out()] as scratch (the activation is applied in place).
func (m MLP) Forward(k compute.Kernels, dst, x, h *compute.Tensor) {
	m.Up.Forward(k, h, x)
	k.Unary(h, h, m.Act)
	m.Down.Forward(k, dst, h)
}

// SplitHeads records the heads-first qkv [3, H, S, D] of a QKV projection p
// in layout l (compute.QKVInterleaved [S, H, 3, D], compute.QKVPlanar
// [3, S, H, D] or compute.QKVPacked [S, 3, H, D]).
func SplitHeads(k compute.Kernels, qkv, p *compute.Tensor, l compute.QKVLayout) {
	switch l {
	case compute.QKVInterleaved:
		k.Transpose(qkv, p, 2, 1, 0, 3)
	case compute.QKVPlanar:
		k.Transpose(qkv, p, 0, 2, 1, 3)
	case compute.QKVPacked:
		k.Transpose(qkv, p, 1, 2, 0, 3)
	default:
		compute.Check(false, "SplitHeads", "unknown QKV layout %d", l)
	}
}

// MergeHeads records dst [S, H, D] = att [H, S, D] with the heads moved
// last (torch's transpose(1, 2) before the output projection) and returns
// dst viewed as [S, H·D].
func MergeHeads(k compute.Kernels, dst, att *compute.Tensor) *compute.Tensor {
	k.Transpose(dst, att, 1, 0, 2)
	S, H, D := dst.Dim(0), dst.Dim(1), dst.Dim(2)
	return dst.Reshape(S, H*D)
}

// AttendOut records multi-head attention over heads-first q [Hq, S, D],
// k and v [Hkv, S', D] and its output projection: dst [S, out] =
// Out(merge(Attention(q, k, v))). att [Hq, S, D] and attT [S, Hq, D] are
// the caller's scratch (a workspace reused by every layer).
func AttendOut(k compute.Kernels, dst, att, attT, q, kk, v *compute.Tensor, p compute.AttentionParams, out Linear) {
	k.Attention(att, q, kk, v, p)
	out.Forward(k, dst, MergeHeads(k, attT, att))
}

// Attend is AttendOut on a's scratch, freeing as it goes to keep the peak
// at two of its steps' tensors: inputs (the storage q, k and v are views
// of) right after the attention, the attention output after the head
// merge, the merged heads after the projection. It returns a new [S, out]
// tensor of q's dtype owned by a.
func Attend(k compute.Kernels, a *Arena, q, kk, v *compute.Tensor, p compute.AttentionParams, out Linear, inputs ...*compute.Tensor) *compute.Tensor {
	H, S, D := q.Dim(0), q.Dim(1), q.Dim(2)
	att := a.New(q.DType(), H, S, D)
	k.Attention(att, q, kk, v, p)
	a.Free(inputs...)
	attT := a.New(q.DType(), S, H, D)
	merged := MergeHeads(k, attT, att)
	a.Free(att)
	dst := a.New(q.DType(), S, out.Out())
	out.Forward(k, dst, merged)
	a.Free(attT)
	return dst
}
