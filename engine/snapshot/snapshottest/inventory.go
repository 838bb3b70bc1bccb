// Package snapshottest writes MiniMax-H3 snapshots for tests and
// benchmarks: the released tensor inventory at full size, as sparse files
// (real headers, zero-filled data that occupies no disk), in the original
// release layout with the released configurations.
//
// The inventories are derived from the released configs and the spec
// (shared/spec/H3-DIT.md §3.1, H3-ENCODERS-VAES.md §6.3, §7.8, §8.4, §8.12,
// §9.9) and reproduce the released tensor counts and byte totals:
// transformer 535 tensors / 66,280,430,144 bytes, text encoder 1,058 /
// 66,714,780,128, video VAE 560 / 10,415,484,128, audio VAE 1,087 /
// 605,306,340 (151,326,585 parameters). Tensor names follow the original
// release; the order inside the files is the writer's, not necessarily the
// release's.
package snapshottest

import (
	"fmt"

	"h3studio/engine/compute"
)

// Tensor is one inventory entry.
type Tensor struct {
	Name  string
	DType compute.DType
	Shape []int
}

// Bytes is the size of the tensor's data.
func (t Tensor) Bytes() int64 {
	n := int64(t.DType.Size())
	for _, d := range t.Shape {
		n *= int64(d)
	}
	return n
}

// Totals sums an inventory's tensors and bytes.
func Totals(ts []Tensor) (tensors int, params, bytes int64) {
	for _, t := range ts {
		p := int64(1)
		for _, d := range t.Shape {
			p *= int64(d)
		}
		params += p
		bytes += t.Bytes()
	}
	return len(ts), params, bytes
}

type inv struct{ ts []Tensor }

func (v *inv) add(dt compute.DType, name string, shape ...int) {
	v.ts = append(v.ts, Tensor{Name: name, DType: dt, Shape: shape})
}

// biased adds the layer p's weight of shape [out, in…] and its bias [out].
func (v *inv) biased(dt compute.DType, p string, out int, in ...int) {
	v.add(dt, p+".weight", append([]int{out}, in...)...)
	v.add(dt, p+".bias", out)
}

// Released DiT dimensions (H3-DIT.md §1.3).
const (
	ditHidden    = 5376
	ditLayers    = 50
	ditRefiner   = 2
	ditHeads     = 56
	ditHeadDim   = 128
	ditFFN       = 14336
	ditTextDim   = 5120
	ditFreq      = 256
	ditTimeHid   = 5376
	ditTimeEmbed = 2688
	ditRopeFreq  = 16
)

// TransformerInventory is the original-layout DiT (H3-DIT.md §3.1): BF16
// blocks, F32 patch projections, time MLP, heads and rope.inv_freq.
func TransformerInventory() []Tensor {
	var v inv
	bf, f := compute.BF16, compute.F32
	inner := ditHeads * ditHeadDim
	v.biased(bf, "condition_proj", ditHidden, ditTextDim)
	v.biased(f, "video_patch_proj", ditHidden, 96)
	v.biased(f, "audio_patch_proj", ditHidden, 32)
	v.biased(f, "time_embedder.proj_in", ditTimeHid, ditFreq)
	v.biased(f, "time_embedder.proj_out", ditTimeEmbed, ditTimeHid)
	v.add(f, "rope.inv_freq", ditRopeFreq)
	block := func(p string, adaln bool) {
		v.add(bf, p+"norm1.weight", ditHidden)
		v.add(bf, p+"norm2.weight", ditHidden)
		v.add(bf, p+"attn.qkv_proj.weight", 3*inner, ditHidden)
		v.add(bf, p+"attn.q_norm.weight", ditHeadDim)
		v.add(bf, p+"attn.k_norm.weight", ditHeadDim)
		v.add(bf, p+"attn.out_proj.weight", ditHidden, inner)
		v.add(bf, p+"mlp.fc1.weight", 2*ditFFN, ditHidden)
		v.add(bf, p+"mlp.fc2.weight", ditHidden, ditFFN)
		if adaln {
			v.biased(bf, p+"adaln_proj.linear", 18*ditHidden, ditTimeEmbed)
		}
	}
	for i := range ditRefiner {
		block(fmt.Sprintf("token_refiner.blocks.%d.", i), false)
	}
	v.add(bf, "token_refiner.final_norm.weight", ditHidden)
	for i := range ditLayers {
		block(fmt.Sprintf("blocks.%d.", i), true)
	}
	v.add(bf, "final_layer.norm.weight", ditHidden)
	v.biased(bf, "final_layer.adaln_proj.linear", 2*ditHidden, ditTimeEmbed)
	v.biased(f, "final_layer.video_out", 96, ditHidden)
	v.biased(f, "final_layer.audio_out", 32, ditHidden)
	return v.ts
}

// TextEncoderInventory is the full Qwen3-VL-32B checkpoint the release
// ships (all 64 language layers, the final norm, lm_head and the vision
// tower; H3 uses layers 0–49), all BF16.
func TextEncoderInventory() []Tensor {
	var v inv
	bf := compute.BF16
	const (
		hidden, layers, q, kv, head, inter, vocab = 5120, 64, 8192, 1024, 128, 25600, 151936
		vh, vdepth, vinter, vmerge, vout          = 1152, 27, 4304, 4608, 5120
	)
	lm := "model.language_model."
	v.add(bf, lm+"embed_tokens.weight", vocab, hidden)
	for i := range layers {
		p := fmt.Sprintf("%slayers.%d.", lm, i)
		v.add(bf, p+"input_layernorm.weight", hidden)
		v.add(bf, p+"self_attn.q_proj.weight", q, hidden)
		v.add(bf, p+"self_attn.k_proj.weight", kv, hidden)
		v.add(bf, p+"self_attn.v_proj.weight", kv, hidden)
		v.add(bf, p+"self_attn.q_norm.weight", head)
		v.add(bf, p+"self_attn.k_norm.weight", head)
		v.add(bf, p+"self_attn.o_proj.weight", hidden, q)
		v.add(bf, p+"post_attention_layernorm.weight", hidden)
		v.add(bf, p+"mlp.gate_proj.weight", inter, hidden)
		v.add(bf, p+"mlp.up_proj.weight", inter, hidden)
		v.add(bf, p+"mlp.down_proj.weight", hidden, inter)
	}
	v.add(bf, lm+"norm.weight", hidden)
	v.add(bf, "lm_head.weight", vocab, hidden)
	vis := "model.visual."
	v.biased(bf, vis+"patch_embed.proj", vh, 3, 2, 16, 16)
	v.add(bf, vis+"pos_embed.weight", 2304, vh)
	for i := range vdepth {
		p := fmt.Sprintf("%sblocks.%d.", vis, i)
		for _, n := range []string{"norm1", "norm2"} {
			v.biased(bf, p+n, vh)
		}
		v.biased(bf, p+"attn.qkv", 3*vh, vh)
		v.biased(bf, p+"attn.proj", vh, vh)
		v.biased(bf, p+"mlp.linear_fc1", vinter, vh)
		v.biased(bf, p+"mlp.linear_fc2", vh, vinter)
	}
	merger := func(p string, normWidth int) {
		v.biased(bf, p+"norm", normWidth)
		v.biased(bf, p+"linear_fc1", vmerge, vmerge)
		v.biased(bf, p+"linear_fc2", vout, vmerge)
	}
	merger(vis+"merger.", vh)
	for k := range 3 {
		merger(fmt.Sprintf("%sdeepstack_merger_list.%d.", vis, k), vmerge)
	}
	return v.ts
}

// VideoVAEInventory is the original video VAE (video_vae/source), F32: the
// causal CNN encoder (ch 128, ch_mult [1,2,2,4,4,8], 2 ResNets per level,
// downsampling at levels 0–3) and the 36-block ViT decoder (width 2048).
func VideoVAEInventory() []Tensor {
	var v inv
	f := compute.F32
	conv := func(p string, out, in, k int) {
		v.biased(f, p, out, in, k, k, k)
	}
	norm := func(p string, c int) {
		v.biased(f, p, c)
	}
	chMult := []int{1, 2, 2, 4, 4, 8}
	const ch, resnets, downLevels = 128, 2, 4
	conv("encoder.conv_in", ch, 3, 3)
	in := ch
	for l, m := range chMult {
		out := ch * m
		for b := range resnets {
			p := fmt.Sprintf("encoder.down.%d.block.%d", l, b)
			norm(p+".norm1", in)
			conv(p+".conv1", out, in, 3)
			norm(p+".norm2", out)
			conv(p+".conv2", out, out, 3)
			if in != out {
				conv(p+".nin_shortcut", out, in, 1)
			}
			in = out
		}
		if l < downLevels {
			conv(fmt.Sprintf("encoder.down.%d.downsample.conv", l), out, out, 3)
		}
	}
	norm("encoder.norm_out", in)
	conv("encoder.conv_out", 48, in, 3)
	conv("quant_conv", 48, 48, 1)

	const dim, blocks, ffn = 2048, 36, 8192
	conv("post_quant_conv", 24, 24, 1)
	v.biased(f, "decoder.x_embedder", dim, 24)
	v.add(f, "decoder.register_tokens", 1, 4, dim)
	for i := range blocks {
		p := fmt.Sprintf("decoder.transformer_blocks.%d.", i)
		v.add(f, p+"norm1.weight", dim)
		v.add(f, p+"norm2.weight", dim)
		v.biased(f, p+"attn.to_qkv", 3*dim, dim)
		v.biased(f, p+"attn.to_out", dim, dim)
		v.add(f, p+"scale1", dim)
		v.add(f, p+"scale2", dim)
		v.biased(f, p+"ff.w1", 2*ffn, dim)
		v.biased(f, p+"ff.w2", dim, ffn)
	}
	norm("decoder.norm_out", dim)
	v.biased(f, "decoder.proj_out", 3072, dim)
	v.add(f, "decoder.mask_token", 1, 1, dim)
	return v.ts
}

// AudioVAEInventory is the original audio VAE, F32: the DAC-style encoder
// (encoder_dim 64, rates [2,4,4,5,5], latent_dim 2048) with the attention
// projection, the mean/logs heads, and the BigVGAN decoder (decoder_dim
// 1024, rates [5,5,2,2,2,2,2], kernels 2u − u mod 2, resblocks [3,7,11]).
func AudioVAEInventory() []Tensor {
	var v inv
	f := compute.F32
	wn := func(p string, out, in, k int, bias bool) { // weight-normalised conv
		v.add(f, p+".weight_v", out, in, k)
		v.add(f, p+".weight_g", out, 1, 1)
		if bias {
			v.add(f, p+".bias", out)
		}
	}
	const encDim, latent, decDim, channels = 64, 2048, 1024, 32
	encRates := []int{2, 4, 4, 5, 5}
	decRates := []int{5, 5, 2, 2, 2, 2, 2}
	wn("encoder.block.0", encDim, 1, 7, true)
	c := encDim
	for s, r := range encRates {
		p := fmt.Sprintf("encoder.block.%d.", s+1)
		for u := range 3 {
			q := fmt.Sprintf("%sblock.%d.block.", p, u)
			v.add(f, q+"0.alpha", 1, c, 1)
			wn(q+"1", c, c, 7, true)
			v.add(f, q+"2.alpha", 1, c, 1)
			wn(q+"3", c, c, 1, true)
		}
		v.add(f, p+"block.3.alpha", 1, c, 1)
		wn(p+"block.4", 2*c, c, 2*r, true)
		c *= 2
	}
	n := len(encRates)
	v.add(f, fmt.Sprintf("encoder.block.%d.alpha", n+1), 1, c, 1)
	wn(fmt.Sprintf("encoder.block.%d", n+2), latent, c, 3, true)

	ln := func(p string, w int) {
		v.biased(f, p, w)
	}
	ln("pre_block.norm1", latent)
	ln("pre_block.norm2", channels)
	ln("pre_block.norm3", latent)
	v.add(f, "pre_block.attn.qkv.weight", 3*latent, latent)
	v.add(f, "pre_block.attn.q_bias", latent)
	v.add(f, "pre_block.attn.v_bias", latent)
	v.add(f, "pre_block.attn.zero_k_bias", latent)
	v.biased(f, "pre_block.attn.proj", channels, channels)
	v.biased(f, "pre_block.proj", channels, latent)
	ln("pre_block.mlp.norm", channels)
	for _, w := range []string{"w0", "w1"} {
		v.biased(f, "pre_block.mlp."+w, 2*channels, channels)
	}
	v.biased(f, "pre_block.mlp.w2", channels, 2*channels)
	for _, h := range []string{"mean_proj", "logs_proj"} {
		v.biased(f, h, channels, channels, 1)
	}
	v.biased(f, "dec_in_proj", latent, channels, 1)

	wn("decoder.conv_pre", decDim, latent, 7, true)
	act := func(p string, c int) {
		v.add(f, p+".act.alpha", c)
		v.add(f, p+".act.beta", c)
		v.add(f, p+".upsample.filter", 1, 1, 12)
		v.add(f, p+".downsample.lowpass.filter", 1, 1, 12)
	}
	cin := decDim
	for i, u := range decRates {
		cout := cin / 2
		k := 2*u - u%2
		v.add(f, fmt.Sprintf("decoder.ups.%d.0.weight_v", i), cin, cout, k)
		v.add(f, fmt.Sprintf("decoder.ups.%d.0.weight_g", i), cin, 1, 1)
		v.add(f, fmt.Sprintf("decoder.ups.%d.0.bias", i), cout)
		for j, kk := range []int{3, 7, 11} {
			p := fmt.Sprintf("decoder.resblocks.%d.", 3*i+j)
			for _, cv := range []string{"convs1", "convs2"} {
				for q := range 3 {
					wn(fmt.Sprintf("%s%s.%d", p, cv, q), cout, cout, kk, true)
				}
			}
			for a := range 6 {
				act(fmt.Sprintf("%sactivations.%d", p, a), cout)
			}
		}
		cin = cout
	}
	act("decoder.activation_post", cin)
	wn("decoder.conv_post", 1, cin, 7, false)
	return v.ts
}
