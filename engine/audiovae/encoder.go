package audiovae

import (
	"fmt"
	"math"

	"h3studio/engine/compute"
	"h3studio/engine/nn"
	"h3studio/engine/safetensors"
)

// encoder is the DAC waveform encoder, the attention projection pre_block
// and the posterior heads (spec §9.4–§9.6).
type encoder struct {
	cfg     *Config
	convIn  conv1d
	blocks  []encBlock
	snake   *compute.Tensor // Snake alpha before the last conv
	convOut conv1d
	pre     preBlock
	mean    nn.Linear // mean_proj (Conv1d k1) as a Linear
	logs    nn.Linear
}

// encBlock is MiniMaxH3AudioEncoderBlock: three residual units, Snake, a
// strided conv.
type encBlock struct {
	units []resUnit
	snake *compute.Tensor
	down  conv1d
}

// resUnit is MiniMaxH3AudioResidualUnit.
type resUnit struct {
	snake1, snake2 *compute.Tensor
	conv1, conv2   conv1d
}

// preBlock is MiniMaxH3AudioAttnProjection.
type preBlock struct {
	norm1, norm2, norm3 nn.LayerNorm
	qkv                 nn.Linear // bias = [q_bias; zero_k_bias; v_bias]
	pool                *compute.Tensor
	attnProj            nn.Linear
	proj                nn.Linear
	mlpNorm             nn.LayerNorm
	mlp                 nn.GatedMLP // Up = [w0; w1] stacked: GELU-tanh gate first; Down = w2
}

// tensors lists the encoder's weights.
func (e *encoder) tensors() []*compute.Tensor {
	ts := append(e.convIn.tensors(), e.snake)
	ts = append(ts, e.convOut.tensors()...)
	ts = append(ts, e.mean.Tensors()...)
	ts = append(ts, e.logs.Tensors()...)
	for _, blk := range e.blocks {
		for _, u := range blk.units {
			ts = append(ts, u.snake1, u.snake2)
			ts = append(ts, u.conv1.tensors()...)
			ts = append(ts, u.conv2.tensors()...)
		}
		ts = append(ts, blk.snake)
		ts = append(ts, blk.down.tensors()...)
	}
	pr := &e.pre
	ts = append(ts, pr.norm1.W, pr.norm1.B, pr.norm2.W, pr.norm2.B, pr.norm3.W, pr.norm3.B, pr.pool, pr.mlpNorm.W, pr.mlpNorm.B)
	for _, l := range []nn.Linear{pr.qkv, pr.attnProj, pr.proj, pr.mlp.Up, pr.mlp.Down} {
		ts = append(ts, l.Tensors()...)
	}
	return ts
}

func snakeAlpha(w *safetensors.Binder, name string, c int) *compute.Tensor {
	return w.Tensor(name, 1, c, 1)
}

func loadEncoder(w *safetensors.Binder, cfg *Config) *encoder {
	e := &encoder{cfg: cfg}
	d := cfg.EncoderDim
	e.convIn = wnConv(w, "encoder.block.0", d, 1, 7, 1, 3, 1, true)
	for s, stride := range cfg.EncoderRates {
		p := fmt.Sprintf("encoder.block.%d.block.", s+1)
		var blk encBlock
		for u, dil := range []int{1, 3, 9} {
			q := fmt.Sprintf("%s%d.block.", p, u)
			blk.units = append(blk.units, resUnit{
				snake1: snakeAlpha(w, q+"0.alpha", d),
				conv1:  wnConv(w, q+"1", d, d, 7, dil, 3*dil, 1, true),
				snake2: snakeAlpha(w, q+"2.alpha", d),
				conv2:  wnConv(w, q+"3", d, d, 1, 1, 0, 1, true),
			})
		}
		blk.snake = snakeAlpha(w, p+"3.alpha", d)
		blk.down = wnConv(w, p+"4", 2*d, d, 2*stride, 1, (stride+1)/2, stride, true)
		e.blocks = append(e.blocks, blk)
		d *= 2
	}
	n := len(cfg.EncoderRates)
	e.snake = snakeAlpha(w, fmt.Sprintf("encoder.block.%d.alpha", n+1), d)
	e.convOut = wnConv(w, fmt.Sprintf("encoder.block.%d", n+2), cfg.LatentDim, d, 3, 1, 1, 1, true)

	L, C := cfg.LatentDim, cfg.LatentChannels
	pb := w.Sub("pre_block.")
	pr := &e.pre
	pr.norm1 = nn.LoadLayerNorm(pb, "norm1", L, 1e-5)
	pr.norm3 = nn.LoadLayerNorm(pb, "norm3", L, 1e-5)
	pr.norm2 = nn.LoadLayerNorm(pb, "norm2", C, 1e-5)
	pr.qkv.W = pb.Tensor("attn.qkv.weight", 3*L, L)
	qb := pb.Float32s("attn.q_bias", L)
	kb := pb.Float32s("attn.zero_k_bias", L)
	vb := pb.Float32s("attn.v_bias", L)
	if qb != nil && kb != nil && vb != nil {
		t, err := compute.FromFloat32(w.Backend(), compute.F32, compute.Shape{3 * L}, append(append(append([]float32(nil), qb...), kb...), vb...))
		compute.Try(err)
		pr.qkv.B = t
	}
	pr.attnProj = nn.LoadLinear(pb, "attn.proj", compute.Invalid, C, C, true)
	pr.proj = nn.LoadLinear(pb, "proj", compute.Invalid, C, L, true)
	pr.mlpNorm = nn.LoadLayerNorm(pb, "mlp.norm", C, 1e-5)
	w0 := pb.Float32s("mlp.w0.weight", 2*C, C)
	w1 := pb.Float32s("mlp.w1.weight", 2*C, C)
	b0 := pb.Float32s("mlp.w0.bias", 2*C)
	b1 := pb.Float32s("mlp.w1.bias", 2*C)
	if w0 != nil && w1 != nil && b0 != nil && b1 != nil {
		wt, err := compute.FromFloat32(w.Backend(), compute.F32, compute.Shape{4 * C, C}, append(append([]float32(nil), w0...), w1...))
		compute.Try(err)
		bt, err := compute.FromFloat32(w.Backend(), compute.F32, compute.Shape{4 * C}, append(append([]float32(nil), b0...), b1...))
		compute.Try(err)
		pr.mlp.Up = nn.Linear{W: wt, B: bt}
	}
	pr.mlp.Down = nn.LoadLinear(pb, "mlp.w2", compute.Invalid, C, 2*C, true)
	pr.mlp.GateFirst, pr.mlp.Act = true, compute.GELUTanh
	// Head mean and adaptive average pooling (head_dim → latent channels)
	// as one matrix over the [H·head_dim] row of each time step.
	H, hd := cfg.Heads, L/cfg.Heads
	pool := make([]float32, C*H*hd)
	for j := 0; j < C; j++ {
		s := j * hd / C
		en := ((j+1)*hd + C - 1) / C
		for h := 0; h < H; h++ {
			for i := s; i < en; i++ {
				pool[j*H*hd+h*hd+i] = float32(1 / (float64(H) * float64(en-s)))
			}
		}
	}
	t, err := compute.FromFloat32(w.Backend(), compute.F32, compute.Shape{C, H * hd}, pool)
	compute.Try(err)
	pr.pool = t

	mw := w.Tensor("mean_proj.weight", C, C, 1)
	lw := w.Tensor("logs_proj.weight", C, C, 1)
	e.mean.B = w.Tensor("mean_proj.bias", C)
	e.logs.B = w.Tensor("logs_proj.bias", C)
	if mw != nil && lw != nil {
		e.mean.W, e.logs.W = mw.Reshape(C, C), lw.Reshape(C, C)
	}
	return e
}

// snake applies Snake (raw alpha) to x [C, L] into a new tensor.
func (r *run) snake(x, alpha *compute.Tensor) *compute.Tensor {
	y := r.a.Like(x)
	r.b.Snake(y, x, alpha, nil, false)
	return y
}

// forward encodes one mono waveform x [1, S] (S a multiple of the hop)
// into the posterior mean and log-std [C, A].
func (e *encoder) forward(r *run, x *compute.Tensor) (mean, logs *compute.Tensor) {
	h := e.convIn.forward(r, x)
	for _, blk := range e.blocks {
		for _, u := range blk.units {
			t := r.snake(h, u.snake1)
			t2 := u.conv1.forward(r, t)
			r.a.Free(t)
			t = r.snake(t2, u.snake2)
			r.a.Free(t2)
			t2 = u.conv2.forward(r, t)
			r.a.Free(t)
			r.b.Add(t2, h, t2)
			r.a.Free(h)
			h = t2
		}
		t := r.snake(h, blk.snake)
		r.a.Free(h)
		h = blk.down.forward(r, t)
		r.a.Free(t)
	}
	t := r.snake(h, e.snake)
	r.a.Free(h)
	h = e.convOut.forward(r, t) // [L, A]
	r.a.Free(t)

	cfg := e.cfg
	L, C, A := cfg.LatentDim, cfg.LatentChannels, h.Dim(1)
	H, hd := cfg.Heads, L/cfg.Heads
	xt := r.a.New(compute.F32, A, L)
	r.b.Transpose(xt, h, 1, 0)
	r.a.Free(h)
	pr := &e.pre
	n := r.a.New(compute.F32, A, L)
	pr.norm3.Forward(r.b, n, xt)
	base := r.a.New(compute.F32, A, C)
	pr.proj.Forward(r.b, base, n)
	pr.norm1.Forward(r.b, n, xt)
	r.a.Free(xt)
	qkv := r.a.New(compute.F32, A, 3*L)
	pr.qkv.Forward(r.b, qkv, n)
	r.a.Free(n)
	heads := r.a.New(compute.F32, 3, H, A, hd)
	nn.SplitHeads(r.b, heads, qkv.Reshape(A, 3, H, hd), compute.QKVPacked)
	r.a.Free(qkv)
	pooled := nn.Attend(r.b, r.a, heads.Row(0), heads.Row(1), heads.Row(2),
		compute.AttentionParams{Scale: float32(1 / math.Sqrt(float64(hd))), Causal: true}, nn.Linear{W: pr.pool}, heads)
	a := r.a.New(compute.F32, A, C)
	pr.attnProj.Forward(r.b, a, pooled)
	r.b.Add(base, base, a)
	// base + mlp(norm2(base)); the MLP norms its input first.
	m := r.a.New(compute.F32, A, C)
	pr.norm2.Forward(r.b, m, base)
	pr.mlpNorm.Forward(r.b, pooled, m)
	g := r.a.New(compute.F32, A, 4*C)
	gated := r.a.New(compute.F32, A, 2*C)
	pr.mlp.Forward(r.b, m, pooled, g, gated)
	r.b.Add(base, base, m)
	mr := r.a.New(compute.F32, A, C)
	e.mean.Forward(r.b, mr, base)
	lr := r.a.New(compute.F32, A, C)
	e.logs.Forward(r.b, lr, base)
	mean = r.a.New(compute.F32, C, A)
	logs = r.a.New(compute.F32, C, A)
	r.b.Transpose(mean, mr, 1, 0)
	r.b.Transpose(logs, lr, 1, 0)
	return mean, logs
}
