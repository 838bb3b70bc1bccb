// Package audiovae implements MiniMax-H3's audio VAE ("H3-AudioVAE"): the
// DAC-lineage waveform encoder with its causal-attention projection and
// posterior heads, and the BigVGAN decoder with anti-aliased SnakeBeta
// activations. It is mono; stereo is a batch of two channels, never mixed.
//
// It mirrors diffusers' AutoencoderKLMiniMaxH3Audio
// (src/diffusers/models/autoencoders/autoencoder_kl_minimax_h3_audio.py at
// 58eb52c0) and the pipeline's audio decode step, as specified by
// shared/spec/H3-ENCODERS-VAES.md §9 with ERRATA F5 (the reference's
// operation order: x + (β + 1e-9)⁻¹·sin²(αx); W = v·(g/‖v‖)). Weight norm is
// folded once at load. Both layouts load (the tensor names are identical;
// the original layout's BigVGAN tables are derived as the converter does).
// A Model is not safe for concurrent use.
package audiovae

import (
	"errors"
	"fmt"
	"math"

	"h3studio/engine/compute"
	"h3studio/engine/nn"
	"h3studio/engine/safetensors"
)

// Options configure loading; the zero value loads everything.
type Options struct {
	// DecoderOnly skips the encoder, pre_block and posterior heads;
	// EncoderOnly skips dec_in_proj and the decoder.
	DecoderOnly, EncoderOnly bool
}

// Model is a loaded audio VAE.
type Model struct {
	Config *Config
	b      compute.Backend
	dec    *decoder
	enc    *encoder
	ck     *safetensors.Checkpoint
}

// Open reads the config in configDir, maps the weights in weightsDir and
// binds them on b (a snapshot.Component's ConfigDir and Dir).
func Open(b compute.Backend, configDir, weightsDir string, o *Options) (*Model, error) {
	cfg, err := ReadConfig(configDir)
	if err != nil {
		return nil, err
	}
	m, ck, err := safetensors.BindDir("audiovae", weightsDir, b, func(w *safetensors.Binder) (*Model, error) { return Load(b, w, cfg, o) })
	if err != nil {
		return nil, err
	}
	m.ck = ck
	return m, nil
}

// Close releases the weights (views of the checkpoint and the tensors
// folded at load) and unmaps the checkpoint.
func (m *Model) Close() error {
	if m.dec != nil {
		m.b.Free(m.dec.tensors()...)
		m.dec = nil
	}
	m.ReleaseEncoder()
	if m.ck != nil {
		err := m.ck.Close()
		m.ck = nil
		return err
	}
	return nil
}

// CanEncode reports whether the encoder is loaded (not DecoderOnly, not
// released).
func (m *Model) CanEncode() bool { return m.enc != nil }

// ReleaseEncoder frees the encoder's weights; the decoder stays usable.
func (m *Model) ReleaseEncoder() {
	if m.enc != nil {
		m.b.Free(m.enc.tensors()...)
		m.enc = nil
	}
}

// Load binds every tensor (strict accounting); nil options are the
// defaults. The model keeps its own copy of cfg.
func Load(b compute.Backend, w *safetensors.Binder, cfg *Config, o *Options) (m *Model, err error) {
	defer compute.Recover(&err)
	if cfg == nil {
		return nil, errors.New("audiovae: Load needs a config")
	}
	if o == nil {
		o = &Options{}
	}
	if o.DecoderOnly && o.EncoderOnly {
		return nil, errors.New("audiovae: DecoderOnly and EncoderOnly exclude each other")
	}
	c := *cfg
	cfg = &c
	m = &Model{Config: cfg, b: b}
	var ignored []string
	if o.EncoderOnly {
		ignored = append(ignored, "decoder.", "dec_in_proj.")
	} else {
		m.dec = loadDecoder(w, cfg)
	}
	if o.DecoderOnly {
		ignored = append(ignored, "encoder.", "pre_block.", "mean_proj.", "logs_proj.")
	} else {
		m.enc = loadEncoder(w, cfg)
	}
	if err := w.Finish(ignored...); err != nil {
		return nil, fmt.Errorf("audiovae: load (%s): %w", cfg.Layout, err)
	}
	return m, nil
}

// conv1d is a Conv1d or ConvTranspose1d with its folded weight.
type conv1d struct {
	w, b     *compute.Tensor
	k        int
	stride   int
	dilation int
	pad      int // both sides (Conv) or the crop (ConvTranspose)
}

// weightNorm binds name.weight_v / weight_g (and name.bias when bias) and
// folds them once: W = v·(g/‖v‖), the norm over every axis but the first
// (torch.nn.utils.weight_norm, dim 0; ERRATA F5's order), in float64 and
// rounded once: the folded weights are the exact ones rounded to float32.
func weightNorm(w *safetensors.Binder, name string, shape []int, bias bool, biasLen int) (wt, bt *compute.Tensor) {
	v := w.Float32s(name+".weight_v", shape...)
	g := w.Float32s(name+".weight_g", shape[0], 1, 1)
	if bias {
		bt = w.Tensor(name+".bias", biasLen)
	}
	if v == nil || g == nil {
		return nil, bt
	}
	t, err := compute.FromFloat32(w.Backend(), compute.F32, compute.Shape(shape), foldWeightNorm(v, g))
	compute.Try(err)
	return t.SetName(name + ".weight(folded)"), bt
}

// foldWeightNorm returns v·(g/‖v‖) per row of v (len(g) rows), computed in
// float64 and rounded once.
func foldWeightNorm(v, g []float32) []float32 {
	per := len(v) / len(g)
	out := make([]float32, len(v))
	for o := range g {
		row := v[o*per : (o+1)*per]
		var ss float64
		for _, x := range row {
			ss += float64(x) * float64(x)
		}
		scale := float64(g[o]) / math.Sqrt(ss)
		for i, x := range row {
			out[o*per+i] = float32(float64(x) * scale)
		}
	}
	return out
}

// wnConv binds a weight-normed Conv1d [out, in, k].
func wnConv(w *safetensors.Binder, name string, out, in, k, dilation, pad, stride int, bias bool) conv1d {
	wt, bt := weightNorm(w, name, []int{out, in, k}, bias, out)
	return conv1d{w: wt, b: bt, k: k, stride: stride, dilation: dilation, pad: pad}
}

func (c conv1d) tensors() []*compute.Tensor { return []*compute.Tensor{c.w, c.b} }

// forward computes the Conv1d of x [C, L] (zero padding).
func (c conv1d) forward(r *run, x *compute.Tensor) *compute.Tensor {
	L := compute.ConvOutSize(x.Dim(1), c.k, c.stride, c.dilation, c.pad, c.pad)
	y := r.a.New(compute.F32, c.w.Dim(0), L)
	r.b.Conv(y, x, c.w, c.b, compute.ConvParams{Stride: []int{c.stride}, Dilation: []int{c.dilation}, PadBefore: []int{c.pad}, PadAfter: []int{c.pad}})
	return y
}

// run is one forward pass's scratch state.
type run struct {
	b compute.Backend
	a *nn.Arena
}
