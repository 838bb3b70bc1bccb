// Package videovae implements MiniMax-H3's video VAE ("H3-VisualVAE",
// f16t4c24): the causal 3-D CNN encoder with its diagonal-Gaussian
// posterior, the ViT decoder with register tokens, the 17-frame clip
// chunking with token drop and cross-fade, and the blended spatial tiling.
//
// It mirrors diffusers' AutoencoderKLMiniMaxH3
// (src/diffusers/models/autoencoders/autoencoder_kl_minimax_h3.py at
// 58eb52c0) and the decode/encode steps of the MiniMax-H3 modular pipeline,
// as specified by shared/spec/H3-ENCODERS-VAES.md §8 with the corrections of
// shared/spec/ERRATA.md (decode in F32 on the CPU, per-head interleaved
// to_qkv weight and bias, [gate; up] ff.w1, the exact RoPE op order, decode
// of any T ≥ 3). Both checkpoint layouts load: the original release
// (video_vae/ wrapper config + video_vae/source/model.safetensors with
// CompVis names) and diffusers' vae/.
//
// Dense work (matrix products, attention, convolutions) runs on a
// compute.Backend one spatial tile at a time; geometry (tile extraction,
// blending, temporal cross-fade, pixel conversion) is host code on Volumes.
// A Model is not safe for concurrent use.
package videovae

import (
	"errors"
	"fmt"

	"h3studio/engine/compute"
	"h3studio/engine/nn"
	"h3studio/engine/safetensors"
)

// Options configure loading. The zero value loads everything in the stored
// dtype (F32).
type Options struct {
	// WeightDType converts the decoder's matrices at load (BF16 halves their
	// memory; parity is stated for F32 only). compute.Invalid keeps F32.
	WeightDType compute.DType
	// DecoderOnly skips the encoder's tensors (the generation path needs only
	// the decoder); EncoderOnly skips the decoder's.
	DecoderOnly, EncoderOnly bool
	// Residency of the decoder's transformer blocks: compute.Streaming
	// binds them one at a time for a stage across all tiles of a window
	// (Decoder.ForwardTiles) instead of keeping all resident: the decode's
	// weight storage falls to one block plus the embedder and output
	// projection; the pixels are identical.
	Residency compute.Residency
}

// Model is a loaded video VAE.
type Model struct {
	Config *Config
	b      compute.Backend
	dec    *Decoder
	enc    *Encoder
	ck     *safetensors.Checkpoint
}

// Backend is the backend the weights live on.
func (m *Model) Backend() compute.Backend { return m.b }

// Open reads the config in configDir, maps the weights in weightsDir and
// binds them on b (a snapshot.Component's ConfigDir and Dir).
func Open(b compute.Backend, configDir, weightsDir string, o *Options) (*Model, error) {
	cfg, err := ReadConfig(configDir, weightsDir)
	if err != nil {
		return nil, err
	}
	m, ck, err := safetensors.BindDir("videovae", weightsDir, b, func(w *safetensors.Binder) (*Model, error) { return Load(b, w, cfg, o) })
	if err != nil {
		return nil, err
	}
	m.ck = ck
	return m, nil
}

// Close releases the weights (views of the checkpoint and the storage
// built at load or on first use) and unmaps the checkpoint.
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

// names maps the reference (diffusers) module names to a layout's tensor
// names.
type names struct{ l Layout }

func (n names) resnet(level, i int) string {
	if n.l == Original {
		return fmt.Sprintf("encoder.down.%d.block.%d.", level, i)
	}
	return fmt.Sprintf("encoder.down_blocks.%d.resnets.%d.", level, i)
}

func (n names) shortcut() string {
	if n.l == Original {
		return "nin_shortcut"
	}
	return "conv_shortcut"
}

func (n names) downsample(level int) string {
	if n.l == Original {
		return fmt.Sprintf("encoder.down.%d.downsample.conv", level)
	}
	return fmt.Sprintf("encoder.down_blocks.%d.downsamplers.0.conv", level)
}

func (n names) embed() string {
	if n.l == Original {
		return "decoder.x_embedder"
	}
	return "decoder.proj_in"
}

// Load binds every tensor of the video VAE from w (strict accounting: a
// missing, mis-shaped or unexpected tensor is an error naming it); nil
// options are the defaults. The model's Config is a copy of cfg completed
// from the weights (the register count of the original layout, the MLP
// width); cfg itself is left as given.
func Load(b compute.Backend, w *safetensors.Binder, cfg *Config, o *Options) (m *Model, err error) {
	defer compute.Recover(&err)
	if cfg == nil {
		return nil, errors.New("videovae: Load needs a config")
	}
	if o == nil {
		o = &Options{}
	}
	if o.DecoderOnly && o.EncoderOnly {
		return nil, errors.New("videovae: DecoderOnly and EncoderOnly exclude each other")
	}
	c := *cfg // completed by loadDecoder
	cfg = &c
	m = &Model{Config: cfg, b: b}
	var ignored []string
	if !o.EncoderOnly {
		m.dec = loadDecoder(w, cfg, o)
	} else {
		ignored = append(ignored, "decoder.", "post_quant_conv.")
	}
	if !o.DecoderOnly {
		m.enc = loadEncoder(w, cfg)
	} else {
		ignored = append(ignored, "encoder.", "quant_conv.")
	}
	if cfg.Layout == Original {
		w.Skip("decoder.mask_token") // training buffer, unused (§8.12)
	}
	if err := w.Finish(ignored...); err != nil {
		return nil, fmt.Errorf("videovae: load (%s): %w", cfg.Layout, err)
	}
	return m, nil
}

// linear binds name.weight [out, in] (+ bias) converting to dt.
func linear(w *safetensors.Binder, name string, dt compute.DType, out, in int) nn.Linear {
	return nn.LoadLinear(w, name, dt, out, in, true)
}

// conv1x1 binds a 1×1×1 Conv3d as a Linear (its weight viewed as [out, in]).
func conv1x1(w *safetensors.Binder, name string, out, in int) nn.Linear {
	wt := w.Tensor(name+".weight", out, in, 1, 1, 1)
	bt := w.Tensor(name+".bias", out)
	if wt == nil {
		return nn.Linear{}
	}
	return nn.Linear{W: wt.Reshape(out, in), B: bt}
}
