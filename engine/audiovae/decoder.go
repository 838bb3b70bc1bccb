package audiovae

import (
	"fmt"

	"h3studio/engine/compute"
	"h3studio/engine/safetensors"
)

// decoder is dec_in_proj + the BigVGAN decoder (diffusers
// MiniMaxH3AudioBigVGANDecoder; spec §9.7).
type decoder struct {
	cfg       *Config
	inProj    conv1d // plain Conv1d k1, latent channels → latent_dim
	convPre   conv1d
	ups       []conv1d // ConvTranspose1d
	resblocks []ampBlock
	actPost   aliasFree
	convPost  conv1d // no bias
}

// ampBlock is BigVGAN's AMPBlock1.
type ampBlock struct {
	convs1, convs2 []conv1d
	acts           []aliasFree // 2 per dilation: before convs1[p], before convs2[p]
}

// aliasFree is MiniMaxH3AudioActivation1d: ×2 upsample (replicate pad,
// transposed Kaiser-sinc filter), SnakeBeta, low-pass ×2 downsample.
type aliasFree struct {
	alpha, beta *compute.Tensor // log-scale [C]
	up          *compute.Tensor // [C, 1, K]: 2·filter, depthwise (ratio·conv_transpose folded, exact)
	down        *compute.Tensor // [C, 1, K]: filter, depthwise
	k           int
}

// tensors lists the decoder's weights.
func (d *decoder) tensors() []*compute.Tensor {
	ts := append(d.inProj.tensors(), d.convPre.tensors()...)
	ts = append(ts, d.actPost.tensors()...)
	ts = append(ts, d.convPost.tensors()...)
	for _, c := range d.ups {
		ts = append(ts, c.tensors()...)
	}
	for _, blk := range d.resblocks {
		for i := range blk.convs1 {
			ts = append(ts, blk.convs1[i].tensors()...)
			ts = append(ts, blk.convs2[i].tensors()...)
		}
		for _, a := range blk.acts {
			ts = append(ts, a.tensors()...)
		}
	}
	return ts
}

func (a aliasFree) tensors() []*compute.Tensor {
	return []*compute.Tensor{a.alpha, a.beta, a.up, a.down}
}

func loadAliasFree(w *safetensors.Binder, name string, C int) aliasFree {
	p := w.Sub(name + ".")
	a := aliasFree{alpha: p.Tensor("act.alpha", C), beta: p.Tensor("act.beta", C)}
	upInfo, _ := p.Info("upsample.filter")
	K := 12
	if len(upInfo.Shape) == 3 {
		K = upInfo.Shape[2]
	}
	if K%2 != 0 {
		p.Fail("%supsample.filter has %d taps; the ×2 resampler needs an even count", name+".", K)
		K = 12
	}
	a.k = K
	fu := p.Float32s("upsample.filter", 1, 1, K)
	fd := p.Float32s("downsample.lowpass.filter", 1, 1, K)
	if fu == nil || fd == nil {
		return a
	}
	up := make([]float32, C*K)
	down := make([]float32, C*K)
	for c := 0; c < C; c++ {
		for i := 0; i < K; i++ {
			up[c*K+i] = 2 * fu[i] // exact: a power-of-two scale
			down[c*K+i] = fd[i]
		}
	}
	var err error
	a.up, err = compute.FromFloat32(w.Backend(), compute.F32, compute.Shape{C, 1, K}, up)
	compute.Try(err)
	a.down, err = compute.FromFloat32(w.Backend(), compute.F32, compute.Shape{C, 1, K}, down)
	compute.Try(err)
	return a
}

// forward applies the alias-free SnakeBeta to x [C, L] → [C, L].
func (a aliasFree) forward(r *run, x *compute.Tensor) *compute.Tensor {
	C, L, K := x.Dim(0), x.Dim(1), a.k
	pad := K/2 - 1 // kernel/ratio − 1
	xp := r.a.New(compute.F32, C, L+2*pad)
	r.b.Pad(xp, x, compute.PadParams{Before: []int{0, pad}, After: []int{0, pad}, Modes: []compute.PadMode{compute.PadZeros, compute.PadReplicate}})
	crop := pad*2 + (K-2)/2 // pad·ratio + (K − ratio)/2, both sides (K even)
	up := r.a.New(compute.F32, C, 2*L)
	r.b.ConvTranspose(up, xp, a.up, nil, compute.ConvParams{Stride: []int{2}, Groups: C, PadBefore: []int{crop}, PadAfter: []int{crop}})
	r.a.Free(xp)
	r.b.Snake(up, up, a.alpha, a.beta, true)
	y := r.a.New(compute.F32, C, L)
	r.b.Conv(y, up, a.down, nil, compute.ConvParams{Stride: []int{2}, Groups: C, PadBefore: []int{K/2 - 1}, PadAfter: []int{K / 2}, PadMode: compute.PadReplicate})
	r.a.Free(up)
	return y
}

func loadDecoder(w *safetensors.Binder, cfg *Config) *decoder {
	d := &decoder{cfg: cfg}
	wt := w.Tensor("dec_in_proj.weight", cfg.LatentDim, cfg.LatentChannels, 1)
	bt := w.Tensor("dec_in_proj.bias", cfg.LatentDim)
	d.inProj = conv1d{w: wt, b: bt, k: 1, stride: 1, dilation: 1}
	C := cfg.DecoderDim
	d.convPre = wnConv(w, "decoder.conv_pre", C, cfg.LatentDim, 7, 1, 3, 1, true)
	for i, u := range cfg.DecoderRates {
		k := cfg.DecoderKernels[i]
		cin, cout := C>>i, C>>(i+1)
		wt, bt := weightNorm(w, fmt.Sprintf("decoder.ups.%d.0", i), []int{cin, cout, k}, true, cout)
		d.ups = append(d.ups, conv1d{w: wt, b: bt, k: k, stride: u, dilation: 1, pad: (k - u) / 2})
		for j, K := range cfg.ResblockKernels {
			name := fmt.Sprintf("decoder.resblocks.%d", i*len(cfg.ResblockKernels)+j)
			var blk ampBlock
			for p, dil := range cfg.ResblockDilations[j] {
				blk.convs1 = append(blk.convs1, wnConv(w, fmt.Sprintf("%s.convs1.%d", name, p), cout, cout, K, dil, dil*(K-1)/2, 1, true))
				blk.convs2 = append(blk.convs2, wnConv(w, fmt.Sprintf("%s.convs2.%d", name, p), cout, cout, K, 1, (K-1)/2, 1, true))
			}
			for n := 0; n < 2*len(cfg.ResblockDilations[j]); n++ {
				blk.acts = append(blk.acts, loadAliasFree(w, fmt.Sprintf("%s.activations.%d", name, n), cout))
			}
			d.resblocks = append(d.resblocks, blk)
		}
	}
	last := C >> len(cfg.DecoderRates)
	d.actPost = loadAliasFree(w, "decoder.activation_post", last)
	d.convPost = wnConv(w, "decoder.conv_post", 1, last, 7, 1, 3, 1, false)
	return d
}

// inputProjection is dec_in_proj on one channel's latents z [32, A].
func (d *decoder) inputProjection(r *run, z *compute.Tensor) *compute.Tensor {
	return d.inProj.forward(r, z)
}

// stages is the number of progress units of one channel's decode.
func (d *decoder) stages() int { return len(d.ups) + 1 }

// forward decodes h = dec_in_proj(z) [latent_dim, A] into a waveform
// [1, hop·A] clamped to [−1, 1]. step is called after every upsampling
// stage (it may cancel by returning an error).
func (d *decoder) forward(r *run, h *compute.Tensor, step func() error) (*compute.Tensor, error) {
	x := d.convPre.forward(r, h)
	r.a.Free(h)
	nk := len(d.cfg.ResblockKernels)
	for i, up := range d.ups {
		L := compute.ConvTransposeOutSize(x.Dim(1), up.k, up.stride, 1, up.pad, up.pad)
		y := r.a.New(compute.F32, up.w.Dim(1), L)
		r.b.ConvTranspose(y, x, up.w, up.b, compute.ConvParams{Stride: []int{up.stride}, PadBefore: []int{up.pad}, PadAfter: []int{up.pad}})
		r.a.Free(x)
		var acc *compute.Tensor
		for j := 0; j < nk; j++ {
			o := d.resblocks[i*nk+j].forward(r, y)
			if acc == nil {
				acc = o
			} else {
				r.b.Add(acc, acc, o)
				r.a.Free(o)
			}
		}
		r.a.Free(y)
		// residual / num_kernels: the reference divides; a product with the
		// float32 reciprocal differs by at most one rounding.
		r.b.Scale(acc, acc, 1/float32(nk), 0)
		x = acc
		if err := step(); err != nil {
			return nil, err
		}
	}
	a := d.actPost.forward(r, x)
	r.a.Free(x)
	out := d.convPost.forward(r, a)
	r.a.Free(a)
	r.b.Clamp(out, out, -1, 1)
	return out, step()
}

// forward is AMPBlock1: x ← x + convs2(act(convs1(act(x)))) per dilation.
func (blk *ampBlock) forward(r *run, in *compute.Tensor) *compute.Tensor {
	x := r.a.Like(in)
	r.b.Copy(x, in)
	for p := range blk.convs1 {
		t := blk.acts[2*p].forward(r, x)
		t2 := blk.convs1[p].forward(r, t)
		r.a.Free(t)
		t = blk.acts[2*p+1].forward(r, t2)
		r.a.Free(t2)
		t2 = blk.convs2[p].forward(r, t)
		r.a.Free(t)
		r.b.Add(x, t2, x)
		r.a.Free(t2)
	}
	return x
}
