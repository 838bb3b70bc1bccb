package dit

import (
	"math"

	"h3studio/engine/compute"
	"h3studio/engine/nn"
	"h3studio/engine/safetensors"
)

// This file holds the layers of transformer_minimax_h3.py, one struct and one
// Forward each: MiniMaxH3Attention (+ MiniMaxH3AttnProcessor), the SwiGLU
// FeedForward, MiniMaxH3TokenRefinerBlock, MiniMaxH3TransformerBlock and
// MiniMaxH3AdaLayerNormOut. Activations are [rows, width] tensors of the
// model's activation dtype (BF16 for the released mixed precision, F32 for
// the float32 oracle); every kernel rounds where torch's BF16 operator chain
// rounds (compute.Kernels documents the chains).

// Attention is MiniMaxH3Attention: QKV projection, per-head RMSNorm of q and
// k, optional rotary embedding, full bidirectional attention, output
// projection. No biases.
type Attention struct {
	// QKV is the original per-head interleaved projection [3·Inner, hidden]:
	// rows [h·3D, h·3D+D) are head h's q, then its k, then its v (H3-DIT
	// §3.2). Nil for the diffusers layout, which has Q, K and V.
	QKV     *compute.Tensor
	Q, K, V *compute.Tensor // [Inner, hidden] each (diffusers layout)
	NormQ   *compute.Tensor // [HeadDim]
	NormK   *compute.Tensor // [HeadDim]
	Out     *compute.Tensor // [hidden, Inner]

	heads, headDim int
	eps            float32
	fused          bool // QKNormRoPE (else oracle dit-unfused-qk-rope)

	qkvLoRA [][]nn.LowRank // per update: its q, k, v parts (adapters.go)
	outLoRA []nn.LowRank
}

func bindAttention(w *safetensors.Binder, n names, c Config, dt compute.DType, q compute.QuantFormat, fz fusions) *Attention {
	a := &Attention{heads: c.Heads, headDim: c.HeadDim, eps: c.QKNormEps, fused: fz.qk}
	if n.orig() {
		a.QKV = bindWeight(w, n.qkvFused(), dt, q, 3*c.Inner(), c.HiddenSize)
	} else {
		s := n.qkvSplit()
		a.Q = bindWeight(w, s[0], dt, q, c.Inner(), c.HiddenSize)
		a.K = bindWeight(w, s[1], dt, q, c.Inner(), c.HiddenSize)
		a.V = bindWeight(w, s[2], dt, q, c.Inner(), c.HiddenSize)
	}
	a.NormQ = w.TensorAs(n.qNorm()+".weight", dt, c.HeadDim)
	a.NormK = w.TensorAs(n.kNorm()+".weight", dt, c.HeadDim)
	a.Out = bindWeight(w, n.attnOut(), dt, q, c.HiddenSize, c.Inner())
	return a
}

func (at *Attention) tensors() []*compute.Tensor {
	return []*compute.Tensor{at.QKV, at.Q, at.K, at.V, at.NormQ, at.NormK, at.Out}
}

// Activation chunking (numerically neutral: the chunked operations are
// row-wise or head-wise).
const (
	qkvHeadGroup = 8    // heads projected together from the interleaved QKV
	ffRowChunk   = 2048 // rows of one feed-forward pass
)

// Rotary holds the rotary tables of one packed layout: cos and sin of the
// 3·RopeFreqDim angles of every row, [rows, RotaryDim/2], in the activation
// dtype (torch casts the float32 tables to the q/k dtype).
type Rotary struct {
	Cos, Sin *compute.Tensor
	Dim      int // rotated channels per head
}

// Forward computes attn(x) for x [S, hidden] into a new [S, hidden] tensor.
// It mirrors MiniMaxH3AttnProcessor: project, unflatten heads, norm_q/norm_k,
// rotary embedding (when rope is non-nil), SDPA, flatten, to_out.
func (at *Attention) Forward(k compute.Kernels, a *nn.Arena, x *compute.Tensor, rope *Rotary) *compute.Tensor {
	S, dt := x.Dim(0), x.DType()
	H, D := at.heads, at.headDim
	qkv := a.New(dt, 3, H, S, D) // q, k, v as [H, S, D] each
	downs := qkvDowns(k, a, x, at.qkvLoRA)
	if at.fused {
		at.projectFused(k, a, x, qkv, rope, downs)
	} else if at.QKV != nil {
		// The interleaved projection, a group of heads at a time (the
		// weight rows of heads [h0, h1) are contiguous): project to
		// [S, g, 3, D], transpose to [3, g, S, D], copy q, k, v into place.
		g := min(H, qkvHeadGroup)
		p := a.New(dt, S, g, 3, D)
		tp := a.New(dt, 3, g, S, D)
		for h0 := 0; h0 < H; h0 += g {
			n := min(g, H-h0)
			pv, tv := p.Reshape(S, g*3*D), tp
			if n < g {
				pv = a.New(dt, S, n*3*D)
				tv = a.New(dt, 3, n, S, D)
			}
			k.MatMul(pv, x, at.QKV.Rows(h0*3*D, (h0+n)*3*D), nil)
			addQKVInterleaved(k, a, pv.Reshape(S, n, 3, D), downs, at.qkvLoRA, h0, n, D)
			nn.SplitHeads(k, tv, pv.Reshape(S, n, 3, D), compute.QKVInterleaved)
			for c := 0; c < 3; c++ {
				k.Copy(qkv.Row(c).Rows(h0, h0+n), tv.Row(c))
			}
			if n < g {
				a.Free(pv, tv)
			}
		}
		a.Free(p, tp)
	} else {
		// One projection at a time: a [S, H, D] scratch instead of [3, S, H, D].
		p := a.New(dt, S, H, D)
		for i, w := range []*compute.Tensor{at.Q, at.K, at.V} {
			k.MatMul(p.Reshape(S, H*D), x, w, nil)
			addQKVPart(k, a, p.Reshape(S, H*D), downs, at.qkvLoRA, i, 0, H*D)
			k.Transpose(qkv.Row(i), p, 1, 0, 2)
		}
		a.Free(p)
	}
	releaseDowns(a, x, downs)
	q, kk, v := qkv.Row(0), qkv.Row(1), qkv.Row(2)
	if !at.fused {
		k.RMSNorm(q, q, at.NormQ, at.eps)
		k.RMSNorm(kk, kk, at.NormK, at.eps)
		if rope != nil {
			k.RoPE(q, q, rope.Cos, rope.Sin, rope.Dim)
			k.RoPE(kk, kk, rope.Cos, rope.Sin, rope.Dim)
		}
	}
	return nn.Attend(k, a, q, kk, v, compute.AttentionParams{
		Scale:      float32(1 / math.Sqrt(float64(D))),
		RoundProbs: dt != compute.F32,
	}, nn.Linear{W: at.Out, LoRA: at.outLoRA}, qkv)
}

// projectFused projects x into qkv [3, H, S, D] a group of heads at a time
// and splits, QK-normalises and rotates each group with one QKNormRoPE:
// the original layout's interleaved projection lands as [S, g, 3, D]
// (compute.QKVInterleaved), the diffusers layout's three projections as
// [3, S, g, D] (compute.QKVPlanar).
func (at *Attention) projectFused(k compute.Kernels, a *nn.Arena, x, qkv *compute.Tensor, rope *Rotary, downs []*compute.Tensor) {
	S, dt := x.Dim(0), x.DType()
	H, D := at.heads, at.headDim
	p := compute.QKNormRoPEParams{NormQ: at.NormQ, NormK: at.NormK, Eps: at.eps}
	if rope != nil {
		p.Cos, p.Sin, p.RotDim = rope.Cos, rope.Sin, rope.Dim
	}
	g := min(H, qkvHeadGroup)
	scratch := a.New(dt, 3*S*g*D)
	for h0 := 0; h0 < H; h0 += g {
		n := min(g, H-h0)
		part := scratch.Rows(0, 3*S*n*D) // the tail group uses a prefix
		if at.QKV != nil {
			p.Layout = compute.QKVInterleaved
			k.MatMul(part.Reshape(S, n*3*D), x, at.QKV.Rows(h0*3*D, (h0+n)*3*D), nil)
			part = part.Reshape(S, n, 3, D)
			addQKVInterleaved(k, a, part, downs, at.qkvLoRA, h0, n, D)
		} else {
			p.Layout = compute.QKVPlanar
			part = part.Reshape(3, S, n, D)
			for i, w := range []*compute.Tensor{at.Q, at.K, at.V} {
				k.MatMul(part.Row(i).Reshape(S, n*D), x, w.Rows(h0*D, (h0+n)*D), nil)
				addQKVPart(k, a, part.Row(i).Reshape(S, n*D), downs, at.qkvLoRA, i, h0*D, (h0+n)*D)
			}
		}
		k.QKNormRoPE(qkv.Row(0).Rows(h0, h0+n), qkv.Row(1).Rows(h0, h0+n), qkv.Row(2).Rows(h0, h0+n), part, p)
	}
	a.Free(scratch)
}

// FeedForward is the bias-free SwiGLU feed-forward: proj to [2·FFN], silu of
// the gate half times the value half, down projection. Up is mlp.fc1 /
// ff.net.0.proj (GateFirst for the original layout's [gate; value], not
// for diffusers' [value; gate]), Down mlp.fc2 / ff.net.2; their LoRA
// updates are set by adapters.go.
type FeedForward struct {
	nn.GatedMLP
}

func bindFeedForward(w *safetensors.Binder, n names, c Config, dt compute.DType, q compute.QuantFormat) *FeedForward {
	return &FeedForward{nn.GatedMLP{
		Up:        nn.Linear{W: bindWeight(w, n.fc1(), dt, q, 2*c.FFNDim, c.HiddenSize)},
		Down:      nn.Linear{W: bindWeight(w, n.fc2(), dt, q, c.HiddenSize, c.FFNDim)},
		GateFirst: n.gateFirst(),
		Act:       compute.SiLU,
	}}
}

// Forward computes ff(x) for x [S, hidden] into a new [S, hidden] tensor.
// The feed-forward runs ffRowChunk rows at a time (it is row-wise), so its
// 3·FFN-wide intermediates never exist for the whole sequence.
func (f *FeedForward) Forward(k compute.Kernels, a *nn.Arena, x *compute.Tensor) *compute.Tensor {
	S, dt := x.Dim(0), x.DType()
	F := inWidth(f.Down.W)
	out := a.New(dt, S, x.Dim(1))
	rc := min(S, ffRowChunk)
	u := a.New(dt, rc, 2*F)
	g := a.New(dt, rc, F)
	for r0 := 0; r0 < S; r0 += rc {
		n := min(rc, S-r0)
		f.GatedMLP.Forward(k, out.Rows(r0, r0+n), x.Rows(r0, r0+n), u.Rows(0, n), g.Rows(0, n))
	}
	a.Free(u, g)
	return out
}

// RefinerBlock is MiniMaxH3TokenRefinerBlock: a plain pre-norm block, no
// AdaLN, no rotary embedding.
type RefinerBlock struct {
	Norm1, Norm2 nn.RMSNorm
	Attn         *Attention
	FF           *FeedForward
}

func bindRefinerBlock(w *safetensors.Binder, n names, c Config, dt compute.DType, q compute.QuantFormat, fz fusions) *RefinerBlock {
	return &RefinerBlock{
		Norm1: nn.RMSNorm{W: w.TensorAs("norm1.weight", dt, c.HiddenSize), Eps: c.NormEps},
		Norm2: nn.RMSNorm{W: w.TensorAs("norm2.weight", dt, c.HiddenSize), Eps: c.NormEps},
		Attn:  bindAttention(w, n, c, dt, q, fz),
		FF:    bindFeedForward(w, n, c, dt, q),
	}
}

func (r *RefinerBlock) tensors() []*compute.Tensor {
	return append(r.Attn.tensors(), r.Norm1.W, r.Norm2.W, r.FF.Up.W, r.FF.Down.W)
}

// Forward updates h [L, hidden] in place:
// h = h + attn(norm1(h)); h = h + ff(norm2(h)).
func (r *RefinerBlock) Forward(k compute.Kernels, a *nn.Arena, h *compute.Tensor) {
	n := a.Like(h)
	r.Norm1.Forward(k, n, h)
	y := r.Attn.Forward(k, a, n, nil)
	k.Add(h, h, y)
	a.Free(y)
	r.Norm2.Forward(k, n, h)
	y = r.FF.Forward(k, a, n)
	k.Add(h, h, y)
	a.Free(y, n)
}

// Block is MiniMaxH3TransformerBlock without its AdaLN projection, which is
// evaluated once per request into a modulation table (Tables).
type Block struct {
	Norm1, Norm2 *compute.Tensor
	Attn         *Attention
	FF           *FeedForward
	eps          float32
	hidden       int
	fz           fusions
}

func bindBlock(w *safetensors.Binder, n names, c Config, dt compute.DType, q compute.QuantFormat, fz fusions) *Block {
	return &Block{
		Norm1:  w.TensorAs("norm1.weight", dt, c.HiddenSize),
		Norm2:  w.TensorAs("norm2.weight", dt, c.HiddenSize),
		Attn:   bindAttention(w, n, c, dt, q, fz),
		FF:     bindFeedForward(w, n, c, dt, q),
		eps:    c.NormEps,
		hidden: c.HiddenSize,
		fz:     fz,
	}
}

func (b *Block) tensors() []*compute.Tensor {
	return append(b.Attn.tensors(), b.Norm1, b.Norm2, b.FF.Up.W, b.FF.Down.W)
}

// Modulation addresses one block's modulation table for the rows of a
// forward: Table is [timesteps·3, 6·hidden] (row = timestep·3 + tag, columns
// [shift_msa|scale_msa|gate_msa|shift_mlp|scale_mlp|gate_mlp]) and Rows holds
// each packed row's table row.
type Modulation struct {
	Table *compute.Tensor
	Rows  *compute.Tensor // [S] integer
}

// preNorm is the AdaLN pre-norm with norm weight w and the shift and scale
// of slots (shift, shift+1) of m.
func (b *Block) preNorm(w *compute.Tensor, m Modulation, shiftSlot int) compute.NormModulation {
	return compute.NormModulation{Weight: w, Eps: b.eps, Table: m.Table, Rows: m.Rows,
		ShiftCol: shiftSlot * b.hidden, ScaleCol: (shiftSlot + 1) * b.hidden}
}

// Links are the optional hand-offs between consecutive blocks (h3.c's
// cross-block fusion): a block's MLP residual gate also writes the next
// block's attention input, which that block then takes as given.
type Links struct {
	// In, when non-nil, already holds this block's attention input
	// norm1(h)·(1 + scale_msa) + shift_msa (the block also uses it as its
	// scratch for the MLP input).
	In *compute.Tensor
	// Next, when non-nil, is the block that runs next on the same rows with
	// modulation NextMod: the MLP residual also writes Next's attention
	// input into NextIn [S, hidden] (which may be In; without In the block
	// uses NextIn as its scratch).
	Next    *Block
	NextMod Modulation
	NextIn  *compute.Tensor
}

// Forward updates the packed hidden state h [S, hidden] in place, as
// MiniMaxH3TransformerBlock.forward:
//
//	n = norm1(h)·(1 + scale_msa) + shift_msa
//	h = h + gate_msa·attn(n)
//	n = norm2(h)·(1 + scale_mlp) + shift_mlp
//	h = h + gate_mlp·ff(n)
//
// with the fused kernels (RMSNormModulate for the first line, the residual
// gate and the next pre-norm in one GatedAddRMSNormModulate) unless their
// oracles are selected, and the hand-offs of l.
func (b *Block) Forward(k compute.Kernels, a *nn.Arena, h *compute.Tensor, m Modulation, rope *Rotary, l Links) {
	H := b.hidden
	n := l.In
	if n == nil {
		n = l.NextIn // the hand-off buffer doubles as this block's scratch
		if n == nil {
			n = a.Like(h)
		}
		adaLN(k, b.fz.adaLN, n, h, b.preNorm(b.Norm1, m, SlotShiftMSA))
	}
	y := b.Attn.Forward(k, a, n, rope)
	if b.fz.gate {
		k.GatedAddRMSNormModulate(h, n, h, y, m.Table, SlotGateMSA*H, b.preNorm(b.Norm2, m, SlotShiftMLP))
	} else {
		k.GatedAdd(h, h, y, m.Table, m.Rows, SlotGateMSA*H)
		adaLN(k, b.fz.adaLN, n, h, b.preNorm(b.Norm2, m, SlotShiftMLP))
	}
	a.Free(y)
	y = b.FF.Forward(k, a, n)
	if nb := l.Next; nb != nil {
		k.GatedAddRMSNormModulate(h, l.NextIn, h, y, m.Table, SlotGateMLP*H, nb.preNorm(nb.Norm1, l.NextMod, SlotShiftMSA))
	} else {
		k.GatedAdd(h, h, y, m.Table, m.Rows, SlotGateMLP*H)
	}
	a.Free(y)
	if n != l.In && n != l.NextIn {
		a.Free(n)
	}
}

// AdaLNOut is MiniMaxH3AdaLayerNormOut without its projection (evaluated
// once per request into Tables.Final): RMSNorm, then shift/scale by the
// row's timestep only.
type AdaLNOut struct {
	Norm  *compute.Tensor
	eps   float32
	fused bool // RMSNormModulate (else oracle dit-unfused-adaln)
}

// Forward writes norm(h)·(1 + scale) + shift into a new tensor like h; final
// is [timesteps, 2·hidden] = [shift | scale], rows [S] the timestep index of
// each row.
func (o *AdaLNOut) Forward(k compute.Kernels, a *nn.Arena, h, final, rows *compute.Tensor) *compute.Tensor {
	H := h.Dim(-1)
	n := a.Like(h)
	adaLN(k, o.fused, n, h, compute.NormModulation{Weight: o.Norm, Eps: o.eps, Table: final, Rows: rows, ShiftCol: 0, ScaleCol: H})
	return n
}
