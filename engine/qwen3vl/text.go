package qwen3vl

import (
	"fmt"
	"math"

	"h3studio/engine/compute"
	"h3studio/engine/nn"
	"h3studio/engine/safetensors"
)

// layerWeights are one decoder layer's tensors (transformers'
// Qwen3VLTextDecoderLayer).
type layerWeights struct {
	index            int
	inNorm, postNorm *compute.Tensor // [hidden]
	qNorm, kNorm     *compute.Tensor // [head_dim]
	q, k, v, o       nn.Linear
	gate, up, down   nn.Linear
	tensors          []*compute.Tensor // everything bound, for Free
	bytes            int64
}

// bindLayer binds decoder layer i from w (a binder at the checkpoint root or
// over the layer's streamed bytes). Errors are recorded in w.
func bindLayer(w *safetensors.Binder, c *Config, i int) *layerWeights {
	t := c.Text
	d, q, kv := t.HiddenSize, t.NumHeads*t.HeadDim, t.NumKVHeads*t.HeadDim
	lw := w.Sub(LayerPrefix(i))
	l := &layerWeights{
		index:    i,
		inNorm:   lw.Tensor("input_layernorm.weight", d),
		postNorm: lw.Tensor("post_attention_layernorm.weight", d),
		qNorm:    lw.Tensor("self_attn.q_norm.weight", t.HeadDim),
		kNorm:    lw.Tensor("self_attn.k_norm.weight", t.HeadDim),
		q:        nn.LoadLinear(lw, "self_attn.q_proj", compute.Invalid, q, d, false),
		k:        nn.LoadLinear(lw, "self_attn.k_proj", compute.Invalid, kv, d, false),
		v:        nn.LoadLinear(lw, "self_attn.v_proj", compute.Invalid, kv, d, false),
		o:        nn.LoadLinear(lw, "self_attn.o_proj", compute.Invalid, d, q, false),
		gate:     nn.LoadLinear(lw, "mlp.gate_proj", compute.Invalid, t.IntermediateSize, d, false),
		up:       nn.LoadLinear(lw, "mlp.up_proj", compute.Invalid, t.IntermediateSize, d, false),
		down:     nn.LoadLinear(lw, "mlp.down_proj", compute.Invalid, d, t.IntermediateSize, false),
	}
	for _, x := range []*compute.Tensor{l.inNorm, l.postNorm, l.qNorm, l.kNorm, l.q.W, l.k.W, l.v.W, l.o.W, l.gate.W, l.up.W, l.down.W} {
		if x != nil {
			l.tensors = append(l.tensors, x)
			l.bytes += x.Bytes()
		}
	}
	return l
}

// textWorkspace holds one sequence's activation buffers, allocated once and
// reused by every layer.
type textWorkspace struct {
	x, q, k, v *compute.Tensor // [L, hidden], [L, Hq·D], [L, Hkv·D] ×2
	qT, kT, vT *compute.Tensor // [Hq, L, D], [Hkv, L, D] ×2
	att, attT  *compute.Tensor // [Hq, L, D], [L, Hq, D]
	o          *compute.Tensor // [L, hidden]
	gate, up   *compute.Tensor // [L, intermediate]
	cos, sin   *compute.Tensor // [L, D/2] rotary tables in the activation dtype
	padIdx     *compute.Tensor // [P] I64 positions of the vision pads (nil: none)
	padRows    *compute.Tensor // [P, hidden]
	deepstack  []*compute.Tensor
	ap         compute.AttentionParams
	act        compute.DType
}

func newTextWorkspace(a *nn.Arena, c *Config, L int, act compute.DType) *textWorkspace {
	t := c.Text
	D := t.HeadDim
	return &textWorkspace{
		x: a.New(act, L, t.HiddenSize), q: a.New(act, L, t.NumHeads*D),
		k: a.New(act, L, t.NumKVHeads*D), v: a.New(act, L, t.NumKVHeads*D),
		qT: a.New(act, t.NumHeads, L, D), kT: a.New(act, t.NumKVHeads, L, D), vT: a.New(act, t.NumKVHeads, L, D),
		att: a.New(act, t.NumHeads, L, D), attT: a.New(act, L, t.NumHeads, D),
		o: a.New(act, L, t.HiddenSize), gate: a.New(act, L, t.IntermediateSize), up: a.New(act, L, t.IntermediateSize),
		cos: a.New(act, L, D/2), sin: a.New(act, L, D/2),
		ap:  compute.AttentionParams{Scale: float32(1 / math.Sqrt(float64(D))), Causal: true, RoundProbs: act != compute.F32},
		act: act,
	}
}

// qwenRMSNorm is Qwen3VLTextRMSNorm: statistics in float32, the normalized
// value rounded to the activation dtype, then multiplied by the weight and
// rounded again (two roundings in BF16; H3-ENCODERS-VAES.md §6.6 — not the
// one-rounding torch nn.RMSNorm of the DiT, ERRATA F3).
func qwenRMSNorm(k compute.Kernels, dst, x, w *compute.Tensor, eps float32) {
	k.RMSNorm(dst, x, nil, eps)
	k.Mul(dst, dst, w)
}

// forward runs decoder layer l on the residual stream h [L, hidden] in
// place. Mirrors Qwen3VLTextDecoderLayer.forward (pre-norm attention and
// SwiGLU MLP with residual adds), with Qwen3VLTextAttention's per-head q/k
// RMSNorm before the interleaved M-RoPE and causal grouped-query attention.
func (l *layerWeights) forward(b compute.Backend, c *Config, h *compute.Tensor, ws *textWorkspace, tr tracer) {
	t := c.Text
	L := h.Dim(0)
	D := t.HeadDim
	eps := float32(t.RMSNormEps)
	sub := tr.on() && l.index == 0
	name := func(s string) string { return fmt.Sprintf("layer%d.%s", l.index, s) }

	qwenRMSNorm(b, ws.x, h, l.inNorm, eps)
	if sub {
		tr.put(name("input_layernorm"), ws.x)
	}
	l.q.Forward(b, ws.q, ws.x)
	l.k.Forward(b, ws.k, ws.x)
	l.v.Forward(b, ws.v, ws.x)
	qh := ws.q.Reshape(L*t.NumHeads, D)
	kh := ws.k.Reshape(L*t.NumKVHeads, D)
	qwenRMSNorm(b, qh, qh, l.qNorm, eps)
	qwenRMSNorm(b, kh, kh, l.kNorm, eps)
	if sub {
		tr.put(name("q_norm"), ws.q.Reshape(L, t.NumHeads, D))
		tr.put(name("k_norm"), ws.k.Reshape(L, t.NumKVHeads, D))
	}
	b.Transpose(ws.qT, ws.q.Reshape(L, t.NumHeads, D), 1, 0, 2)
	b.Transpose(ws.kT, ws.k.Reshape(L, t.NumKVHeads, D), 1, 0, 2)
	b.Transpose(ws.vT, ws.v.Reshape(L, t.NumKVHeads, D), 1, 0, 2)
	b.RoPE(ws.qT, ws.qT, ws.cos, ws.sin, D)
	b.RoPE(ws.kT, ws.kT, ws.cos, ws.sin, D)
	nn.AttendOut(b, ws.o, ws.att, ws.attT, ws.qT, ws.kT, ws.vT, ws.ap, l.o)
	if sub {
		tr.put(name("self_attn"), ws.o)
	}
	b.Add(h, h, ws.o)

	qwenRMSNorm(b, ws.x, h, l.postNorm, eps)
	if sub {
		tr.put(name("post_attention_layernorm"), ws.x)
	}
	l.gate.Forward(b, ws.gate, ws.x)
	l.up.Forward(b, ws.up, ws.x)
	b.Unary(ws.gate, ws.gate, compute.SiLU)
	b.Mul(ws.gate, ws.gate, ws.up)
	l.down.Forward(b, ws.o, ws.gate)
	if sub {
		tr.put(name("mlp"), ws.o)
	}
	b.Add(h, h, ws.o)

	// Deepstack: after layers 0..k−1 add feature k at the vision pad rows.
	if ws.padIdx != nil && l.index < len(ws.deepstack) {
		tr.put(name("pre_deepstack"), h)
		b.GatherRows(ws.padRows, h, ws.padIdx)
		b.Add(ws.padRows, ws.padRows, ws.deepstack[l.index])
		b.ScatterRows(h, ws.padRows, ws.padIdx)
	}
	tr.put(fmt.Sprintf("layer%d", l.index), h)
}

// tracer forwards intermediates to an optional callback.
type tracer struct {
	b  compute.Backend
	fn func(name string, t *compute.Tensor)
}

func (tr tracer) on() bool { return tr.fn != nil }

func (tr tracer) put(name string, t *compute.Tensor) {
	if tr.fn != nil {
		tr.fn(name, t)
	}
}

// putHost hands host values to the callback as a temporary F32 tensor.
func (tr tracer) putHost(name string, v []float32, shape ...int) {
	if tr.fn == nil {
		return
	}
	t := compute.MustAlloc(tr.b, compute.F32, shape...)
	defer tr.b.Free(t)
	upload(tr.b, t, v)
	tr.fn(name, t)
}
