package videovae

import (
	"context"
	"fmt"
	"math"

	"h3studio/engine/compute"
	"h3studio/engine/nn"
	"h3studio/engine/safetensors"
)

// Decoder is the ViT decoder with its post_quant_conv: one latent window
// tile [24, Tw, h, w] in, ImageNet-normalized pixels [3, 4·Tw, 16h, 16w]
// out. Mirrors diffusers MiniMaxH3VideoViTDecoder3d (spec §8.8).
type Decoder struct {
	cfg       *Config
	postQuant nn.Linear // 1×1×1 Conv3d as a Linear [24, 24]
	embed     nn.Linear // x_embedder / proj_in [D, 24]
	registers *compute.Tensor
	blocks    []vitBlock
	normOut   nn.LayerNorm
	projOut   nn.Linear // [C·pt·p·p, D]
	ropeCache map[[3]int][2]*compute.Tensor

	// Streamed decode (Options.Residency): blocks is empty and each
	// block is bound from w for one stage across a window's tiles.
	stream bool
	w      *safetensors.Binder
	dt     compute.DType
}

// vitBlock is MiniMaxH3VideoTransformerBlock with its bound weights.
type vitBlock struct {
	norm1, norm2   nn.RMSNorm
	qkNorm         nn.RMSNorm // per head, no weight
	qkv            nn.Linear  // original: per-head interleaved [h: q k v] rows (weight and bias)
	q, k, v        nn.Linear  // diffusers: separate projections
	layout         compute.QKVLayout
	out            nn.Linear
	scale1, scale2 *compute.Tensor
	ff             nn.GatedMLP // w1: original [gate; up]; diffusers [up; gate]
	heads, headDim int
	rotDim         int
}

func loadDecoder(w *safetensors.Binder, cfg *Config, o *Options) *Decoder {
	D, L := cfg.Dim(), cfg.LatentChannels
	r, rt := cfg.SpatialRatio(), cfg.TemporalRatio()
	dt := o.WeightDType
	d := &Decoder{cfg: cfg, ropeCache: map[[3]int][2]*compute.Tensor{}}
	d.postQuant = conv1x1(w, "post_quant_conv", L, L)
	d.embed = linear(w, names{cfg.Layout}.embed(), compute.Invalid, D, L)
	if info, ok := w.Info("decoder.register_tokens"); ok && info.Shape.Equal(compute.Shape{1, info.Shape.Dim(-2), D}) {
		if cfg.Layout == Original {
			cfg.DecoderRegisters = info.Shape[1]
		}
	}
	if t := w.Tensor("decoder.register_tokens", 1, cfg.DecoderRegisters, D); t != nil {
		d.registers = t.Reshape(cfg.DecoderRegisters, D)
	}
	// The gated MLP's inner width comes from the first block's w1.
	w1name := "ff.w1"
	if cfg.Layout == Diffusers {
		w1name = "ff.net.0.proj"
	}
	if info, ok := w.Info("decoder.transformer_blocks.0." + w1name + ".weight"); ok && len(info.Shape) == 2 && info.Shape[0]%2 == 0 {
		if cfg.DecoderFFNHidden != 0 && cfg.DecoderFFNHidden != info.Shape[0]/2 {
			w.Fail("decoder.transformer_blocks.0.%s.weight %v: config gives an MLP width of %d", w1name, info.Shape, cfg.DecoderFFNHidden)
		}
		cfg.DecoderFFNHidden = info.Shape[0] / 2
	}
	F := cfg.DecoderFFNHidden
	if F <= 0 && cfg.DecoderLayers > 0 {
		w.Fail("cannot infer the decoder MLP width: decoder.transformer_blocks.0.%s.weight is missing or not [2·F, %d]", w1name, D)
		F = 1
	}
	d.stream, d.w, d.dt = o.Residency == compute.Streaming, w, dt
	for i := 0; i < cfg.DecoderLayers; i++ {
		blk := d.loadBlock(i)
		if d.stream { // bound here to check the checkpoint, then per stage
			d.freeBlock(blk)
			continue
		}
		d.blocks = append(d.blocks, blk)
	}
	d.normOut = nn.LoadLayerNorm(w, "decoder.norm_out", D, cfg.DecoderNormEps)
	d.projOut = linear(w, "decoder.proj_out", compute.Invalid, cfg.OutChannels*rt*r*r, D)
	return d
}

// loadBlock binds decoder block i.
func (d *Decoder) loadBlock(i int) vitBlock {
	cfg, dt := d.cfg, d.dt
	D, F := cfg.Dim(), max(cfg.DecoderFFNHidden, 1)
	p := d.w.Sub(fmt.Sprintf("decoder.transformer_blocks.%d.", i))
	eps := cfg.DecoderNormEps
	blk := vitBlock{heads: cfg.DecoderHeads, headDim: cfg.DecoderHeadDim, rotDim: cfg.RotaryDim(), qkNorm: nn.RMSNorm{Eps: eps}}
	blk.ff.Act = compute.SiLU
	blk.norm1 = nn.RMSNorm{W: p.Tensor("norm1.weight", D), Eps: eps}
	blk.norm2 = nn.RMSNorm{W: p.Tensor("norm2.weight", D), Eps: eps}
	blk.scale1 = p.Tensor("scale1", D)
	blk.scale2 = p.Tensor("scale2", D)
	if cfg.Layout == Original {
		blk.layout = compute.QKVInterleaved
		blk.qkv = linear(p, "attn.to_qkv", dt, 3*D, D)
		blk.out = linear(p, "attn.to_out", dt, D, D)
		blk.ff.Up = linear(p, "ff.w1", dt, 2*F, D)
		blk.ff.GateFirst = true
		blk.ff.Down = linear(p, "ff.w2", dt, D, F)
	} else {
		blk.layout = compute.QKVPlanar
		blk.q = linear(p, "attn.to_q", dt, D, D)
		blk.k = linear(p, "attn.to_k", dt, D, D)
		blk.v = linear(p, "attn.to_v", dt, D, D)
		blk.out = linear(p, "attn.to_out.0", dt, D, D)
		blk.ff.Up = linear(p, "ff.net.0.proj", dt, 2*F, D)
		blk.ff.Down = linear(p, "ff.net.2", dt, D, F)
	}
	return blk
}

// freeBlock frees a streamed block's weights and drops the pages of the
// mapped checkpoint they were bound from (safetensors.Binder.Release), so
// that a block bound for one stage stops occupying memory after it: without
// the release every block's pages stay resident once read, and a streamed
// decode holds the whole decoder (9 GiB at the released size) by its end.
func (d *Decoder) freeBlock(blk vitBlock) { d.w.Free(blk.tensors()...) }

// tensors lists a block's bound tensors.
func (blk *vitBlock) tensors() []*compute.Tensor {
	var ts []*compute.Tensor
	for _, t := range []*compute.Tensor{blk.norm1.W, blk.norm2.W, blk.scale1, blk.scale2} {
		if t != nil {
			ts = append(ts, t)
		}
	}
	for _, l := range []nn.Linear{blk.qkv, blk.q, blk.k, blk.v, blk.out, blk.ff.Up, blk.ff.Down} {
		for _, t := range []*compute.Tensor{l.W, l.B} {
			if t != nil {
				ts = append(ts, t)
			}
		}
	}
	return ts
}

// tensors lists the decoder's storage: its weights (the resident blocks')
// and the cached RoPE tables.
func (d *Decoder) tensors() []*compute.Tensor {
	ts := append(d.postQuant.Tensors(), d.embed.Tensors()...)
	ts = append(ts, d.registers)
	ts = append(ts, d.normOut.Tensors()...)
	ts = append(ts, d.projOut.Tensors()...)
	for i := range d.blocks {
		ts = append(ts, d.blocks[i].tensors()...)
	}
	for _, cs := range d.ropeCache {
		ts = append(ts, cs[0], cs[1])
	}
	return ts
}

// ropeTables returns cos, sin [S, rot/2] for a tile of Tw×h×w tokens plus
// the register and zero tokens (position 0). Op order (ERRATA §3.2):
// inv_freq = 1/(θ^arange(0, 1, 6/rot)) in F32; coord = f32(f32(k+0.5)/size)·2 − 1;
// angle = (f32(2π)·coord)·inv_freq; cos/sin in F32.
func ropeTables(cfg *Config, tw, h, w int) (cos, sin []float32) {
	rot := cfg.RotaryDim()
	nf := rot / 6
	invFreq := make([]float32, nf)
	step := 6 / float64(rot)
	theta := float32(cfg.RopeTheta)
	for f := range invFreq {
		e := float32(float64(f) * step)
		invFreq[f] = 1 / float32(math.Pow(float64(theta), float64(e)))
	}
	coords := func(size int) []float32 {
		c := make([]float32, size)
		for k := range c {
			c[k] = 2*(float32(float64(k)+0.5)/float32(size)) - 1
		}
		return c
	}
	ct, cy, cx := coords(tw), coords(h), coords(w)
	twoPi := float32(2 * math.Pi)
	S := tw*h*w + cfg.DecoderRegisters + 1
	half := 3 * nf
	cos = make([]float32, S*half)
	sin = make([]float32, S*half)
	for i := range cos {
		cos[i] = 1 // suffix tokens: angle 0
	}
	n := 0
	for t := 0; t < tw; t++ {
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				row := n * half
				for a, c := range [3]float32{ct[t], cy[y], cx[x]} {
					base := float32(twoPi * c)
					for f := 0; f < nf; f++ {
						ang := float32(base * invFreq[f])
						cos[row+a*nf+f] = float32(math.Cos(float64(ang)))
						sin[row+a*nf+f] = float32(math.Sin(float64(ang)))
					}
				}
				n++
			}
		}
	}
	return cos, sin
}

func (d *Decoder) rope(b compute.Backend, tw, h, w int) (cos, sin *compute.Tensor) {
	key := [3]int{tw, h, w}
	if t, ok := d.ropeCache[key]; ok {
		return t[0], t[1]
	}
	c, s := ropeTables(d.cfg, tw, h, w)
	half := d.cfg.RotaryDim() / 2
	S := len(c) / max(half, 1)
	ct, err := compute.FromFloat32(b, compute.F32, compute.Shape{S, half}, c)
	compute.Try(err)
	st, err := compute.FromFloat32(b, compute.F32, compute.Shape{S, half}, s)
	compute.Try(err)
	for k, v := range d.ropeCache { // keep one geometry resident
		b.Free(v[0], v[1])
		delete(d.ropeCache, k)
	}
	d.ropeCache[key] = [2]*compute.Tensor{ct, st}
	return ct, st
}

// tokens converts a latent tile [C, T, h, w] to token rows [T·h·w, C] in
// (t, y, x) order.
func tokens(z *Volume) []float32 {
	n := z.T * z.H * z.W
	out := make([]float32, n*z.C)
	for c := 0; c < z.C; c++ {
		src := z.Data[c*n : (c+1)*n]
		for i, v := range src {
			out[i*z.C+c] = v
		}
	}
	return out
}

// Forward decodes one latent tile z [24, Tw, h, w] (de-normalized) into
// pixels [3, pt·Tw, p·h, p·w] in ImageNet-normalized space:
// decoder(post_quant_conv(z)). Allocation failures panic with
// *compute.AllocError (see compute.Recover).
func (d *Decoder) Forward(b compute.Backend, z *Volume) (out *Volume, err error) {
	outs, err := d.ForwardTiles(context.Background(), b, []*Volume{z}, nil)
	if err != nil {
		return nil, err
	}
	return outs[0], nil
}

// ForwardTiles decodes tiles of one shape. Resident, it runs them one after
// another; streamed (Options.Residency) it runs stage by stage across
// all of them — embed every tile, then bind each block, run it on every
// tile and release it, then the output projection per tile — so one block's
// weights are bound at a time. Each tile sees the same kernels on the same
// shapes in the same order either way, so the pixels are bit-identical.
// emit, when set, receives each finished tile (and the result then holds
// nil for it). ctx is checked before each tile (resident) or stage (streamed).
func (d *Decoder) ForwardTiles(ctx context.Context, b compute.Backend, zs []*Volume, emit func(i int, pix *Volume) error) (outs []*Volume, err error) {
	defer compute.Recover(&err)
	cfg := d.cfg
	for _, z := range zs {
		if z.C != cfg.LatentChannels {
			return nil, fmt.Errorf("videovae: decoder input has %d channels, want %d", z.C, cfg.LatentChannels)
		}
		if z.T != zs[0].T || z.H != zs[0].H || z.W != zs[0].W {
			return nil, fmt.Errorf("videovae: decoder tiles of different shapes")
		}
	}
	outs = make([]*Volume, len(zs))
	if len(zs) == 0 {
		return outs, nil
	}
	sa := nn.NewArena(b)
	defer sa.Release()
	var sc *blockScratch
	scratch := func(S int) *blockScratch {
		if sc == nil {
			sc = d.newScratch(sa, S)
		}
		return sc
	}
	finish := func(i int, st *tileState) error {
		pix, err := d.finish(b, st)
		if err != nil {
			return err
		}
		if emit != nil {
			return emit(i, pix)
		}
		outs[i] = pix
		return nil
	}
	if !d.stream {
		for i, z := range zs {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			st := d.begin(b, z)
			err := func() error {
				defer st.release()
				for j := range d.blocks {
					d.blocks[j].Forward(b, st.x, st.cos, st.sin, scratch(st.S))
				}
				return finish(i, st)
			}()
			if err != nil {
				return nil, err
			}
		}
		return outs, nil
	}
	sts := make([]*tileState, len(zs))
	defer func() {
		for _, st := range sts {
			if st != nil {
				st.release()
			}
		}
	}()
	for i, z := range zs {
		sts[i] = d.begin(b, z)
	}
	for j := 0; j < cfg.DecoderLayers; j++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		blk := d.loadBlock(j)
		if err := d.w.Err(); err != nil {
			return nil, fmt.Errorf("videovae: binding decoder block %d: %w", j, err)
		}
		for _, st := range sts {
			blk.Forward(b, st.x, st.cos, st.sin, scratch(st.S))
		}
		d.freeBlock(blk)
	}
	for i, st := range sts {
		sts[i] = nil // finish releases it
		if err := finish(i, st); err != nil {
			return nil, err
		}
	}
	return outs, nil
}

// blockScratch is the scratch of a block's forward over S tokens, shared by
// the tiles of one ForwardTiles (they have one shape).
type blockScratch struct {
	nrm, qkvRaw, qkv, qkr      *compute.Tensor
	att, attT, proj, up, gated *compute.Tensor
}

func (d *Decoder) newScratch(a *nn.Arena, S int) *blockScratch {
	cfg := d.cfg
	D, H, dh, F := cfg.Dim(), cfg.DecoderHeads, cfg.DecoderHeadDim, cfg.DecoderFFNHidden
	return &blockScratch{
		nrm: a.New(compute.F32, S, D), qkvRaw: a.New(compute.F32, S*3*D), qkv: a.New(compute.F32, 3, H, S, dh),
		qkr: a.New(compute.F32, 2, H, S, dh), att: a.New(compute.F32, H, S, dh), attT: a.New(compute.F32, S, H, dh),
		proj: a.New(compute.F32, S, D), up: a.New(compute.F32, S, 2*F), gated: a.New(compute.F32, S, F),
	}
}

// tileState is one tile between stages: its hidden state x [S, D] (held by
// the tile's arena) and its rotary tables.
type tileState struct {
	b        compute.Backend
	z        *Volume
	n, S     int
	x        *compute.Tensor
	cos, sin *compute.Tensor
}

func (st *tileState) release() {
	if st.x != nil {
		st.b.Free(st.x)
		st.x = nil
	}
}

// begin embeds a tile: post_quant_conv, x_embedder, register and zero tokens.
func (d *Decoder) begin(b compute.Backend, z *Volume) *tileState {
	cfg := d.cfg
	a := nn.NewArena(b)
	D := cfg.Dim()
	R := cfg.DecoderRegisters
	n := z.T * z.H * z.W
	S := n + R + 1
	st := &tileState{b: b, z: z, n: n, S: S}
	tok := a.New(compute.F32, n, cfg.LatentChannels)
	compute.Try(b.Upload(tok, compute.EncodeFloat32(compute.F32, tokens(z))))
	pq := a.New(compute.F32, n, cfg.LatentChannels)
	d.postQuant.Forward(b, pq, tok)
	x := a.New(compute.F32, S, D)
	d.embed.Forward(b, x.Rows(0, n), pq)
	if R > 0 {
		b.Copy(x.Rows(n, n+R), d.registers)
	}
	b.Fill(x.Rows(n+R, S), 0)
	st.cos, st.sin = d.rope(b, z.T, z.H, z.W)
	st.x = a.Keep(x)
	a.Release() // the token rows
	return st
}

// Forward runs the block on the hidden state x [S, D] in place, rotating
// q and k by cos, sin [S, rot/2]: pre-norm attention with per-head q/k
// RMSNorm and a layer-scaled residual, then the pre-norm gated MLP with a
// layer-scaled residual.
func (blk *vitBlock) Forward(b compute.Backend, x, cos, sin *compute.Tensor, sc *blockScratch) {
	S, D := x.Dim(0), x.Dim(1)
	H, dh := blk.heads, blk.headDim
	nrm, qkvRaw, qkv, proj := sc.nrm, sc.qkvRaw, sc.qkv, sc.proj
	blk.norm1.Forward(b, nrm, x)
	if blk.layout == compute.QKVInterleaved {
		blk.qkv.Forward(b, qkvRaw.Reshape(S, 3*D), nrm)
		nn.SplitHeads(b, qkv, qkvRaw.Reshape(S, H, 3, dh), blk.layout)
	} else {
		r3 := qkvRaw.Reshape(3, S, D)
		blk.q.Forward(b, r3.Row(0), nrm)
		blk.k.Forward(b, r3.Row(1), nrm)
		blk.v.Forward(b, r3.Row(2), nrm)
		nn.SplitHeads(b, qkv, qkvRaw.Reshape(3, S, H, dh), blk.layout)
	}
	qk := qkv.Rows(0, 2)
	blk.qkNorm.Forward(b, sc.qkr, qk) // F32
	b.RoPE(qk, sc.qkr, cos, sin, blk.rotDim)
	nn.AttendOut(b, proj, sc.att, sc.attT, qk.Row(0), qk.Row(1), qkv.Row(2),
		compute.AttentionParams{Scale: float32(1 / math.Sqrt(float64(dh)))}, blk.out)
	b.Mul(proj, proj, blk.scale1)
	b.Add(x, x, proj)
	blk.norm2.Forward(b, nrm, x)
	blk.ff.Forward(b, proj, nrm, sc.up, sc.gated)
	b.Mul(proj, proj, blk.scale2)
	b.Add(x, x, proj)
}

// finish applies norm_out and proj_out over the patch tokens only (the
// reference computes them for every token and then drops the 5 suffix
// tokens) and unpatchifies; it releases the tile's state.
func (d *Decoder) finish(b compute.Backend, st *tileState) (*Volume, error) {
	defer st.release()
	cfg, n, z := d.cfg, st.n, st.z
	a := nn.NewArena(b)
	defer a.Release()
	xn := a.New(compute.F32, n, cfg.Dim())
	d.normOut.Forward(b, xn, st.x.Rows(0, n))
	P := d.projOut.Out()
	rows := a.New(compute.F32, n, P)
	d.projOut.Forward(b, rows, xn)
	host, err := compute.ToFloat32(rows)
	if err != nil {
		return nil, fmt.Errorf("videovae: decoder: %w", err)
	}
	return unpatchify(host, cfg.OutChannels, cfg.TemporalRatio(), cfg.SpatialRatio(), z.T, z.H, z.W), nil
}

// unpatchify maps token rows [T·h·w, C·pt·p·p] (feature order c, dt, py, px)
// to pixels [C, pt·T, p·h, p·w]: frame pt·t+dt, row p·y+py, column p·x+px.
func unpatchify(rows []float32, C, pt, p, T, h, w int) *Volume {
	o := NewVolume(C, pt*T, p*h, p*w)
	P := C * pt * p * p
	tok := 0
	for t := 0; t < T; t++ {
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				r := rows[tok*P : (tok+1)*P]
				tok++
				i := 0
				for c := 0; c < C; c++ {
					for dt := 0; dt < pt; dt++ {
						for py := 0; py < p; py++ {
							dst := o.index(c, pt*t+dt, p*y+py, p*x)
							copy(o.Data[dst:dst+p], r[i:i+p])
							i += p
						}
					}
				}
			}
		}
	}
	return o
}
