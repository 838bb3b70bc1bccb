package testmodel

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"h3studio/engine/audiovae"
	"h3studio/engine/dit"
	"h3studio/engine/safetensors"
	"h3studio/engine/videovae"
)

// The demo checkpoint's video decoder is shaped — only its initial values;
// the decoder's code and the checkpoint layout are the model's — so that
// random latents decode to a calm, smooth, colourful picture instead of
// per-pixel noise. Its config (VideoVAEConfig) has one ViT layer of five
// heads, all reading the same values, a random projection of the latents:
//
//   - The patch embedding is weak and writes only the last dh dims of the
//     residual stream, so the attention output is the picture.
//   - The queries and keys ignore the content (zero weights) and equal a
//     fixed bias, so a head's attention score depends only on the RoPE
//     phases of two tokens: a fixed kernel over (t, y, x) built from the
//     second-slowest rotary frequency of each axis (broad), a smooth bump
//     about a third of the tile wide and a few latent frames long. Head 0 is
//     that blur of the values: a smooth field F that follows the latents
//     (the seed's noise and, through the DiT, the prompt). Head 1 has a zero
//     query: it averages the values over the window, and the output
//     projection keeps F minus (1 − tint) of that mean, so the picture
//     shows the latents' local variation with a global tint instead of one
//     colour everywhere.
//   - Heads 2, 3, 4 are the same kernel moved a quarter of a token along
//     x, y and t (a phase between the key and the query): their differences
//     with head 0 are F's gradients.
//   - A constant of zero sum in the last dims (floor) dominates the final
//     layer norm's variance, so the norm is nearly a constant scale and the
//     gradients stay the gradients of what is painted.
//   - The output projection paints each token's 16×16 pixels × 4 frames as
//     a colour (a random linear function of F around a warm grey) plus F's
//     gradients as ramps across the patch, so neighbouring patches and
//     successive frames meet without visible steps.
//
// The MLP and everything else keep videovae.Inventory's random rules (the
// MLP's gate is 0). Measured on 256×256×22 takes: neighbouring pixels
// across a patch border differ by ~0.9 levels of 255 on average, inside a
// patch by ~0.4; successive frames by ~1.7 (the VAE's clip chunking skips
// three decoded frames after frame 17: ~6).

// blurKernel is an attention kernel: the weight of each (axis, rotary
// frequency) pair in the query/key bias. Axis 0 is time, 1 rows, 2 columns;
// frequency f is the f-th of RopeDimRatio·head_dim/6 per axis (1, 0.316,
// 0.1, … with the tiny config's theta 100).
type blurKernel map[[2]int]float64

// broad is the decoder's blur: an effective support of ~600 tokens of a
// 7×16×16 window. The fastest frequency is left out (it aliases: its
// cosine comes back to 1 half a tile away); time weighs less than space, so
// the picture drifts slowly.
var broad = blurKernel{{0, 1}: 0.5, {1, 1}: 1.5, {2, 1}: 1.5}

const (
	tint  = 0.3  // the share of the window's mean the picture keeps
	shift = 0.25 // the gradient heads' offset in tokens (latent frames for t)
	gain  = 20   // scale1: the attention output over the weak embedding
	floor = 0.3  // the layer-norm floor per dim (before gain), alternating ±
	// colourGain sets the colours' spread: proj_out's colour rows have the
	// norm of dh entries N(0, colourGain²/D). Chosen by eye with floor and
	// tint: a channel of a typical take spans about ±0.1 (std) around the
	// grey in [0, 1] pixels, with almost nothing clipped.
	colourGain = 3.5
)

// VideoVAEConfig is the demo checkpoint's video VAE: videovae.TinyConfig
// (the release's geometry) with a decoder of one ViT layer of five heads,
// which the demo's weights shape into a smooth picture (see above).
func VideoVAEConfig() *videovae.Config {
	c := videovae.TinyConfig()
	c.DecoderLayers, c.DecoderHeads = 1, 5
	return c
}

// videoVAEInventory is videovae.Inventory(cfg) with the demo decoder's
// shaped initial values (deterministic: drawn from seed).
func videoVAEInventory(cfg *videovae.Config, seed uint64) (safetensors.Inventory, error) {
	inv := videovae.Inventory(cfg)
	D, H, dh := cfg.Dim(), cfg.DecoderHeads, cfg.DecoderHeadDim
	nf := cfg.RotaryDim() / 6
	if cfg.DecoderLayers != 1 || H != 5 || nf < 2 || cfg.OutChannels != 3 {
		return nil, fmt.Errorf("demo: the shaped video decoder needs 1 layer of 5 heads, ≥ 2 rotary frequencies per axis and 3 colours; config has %d layers, %d heads, %d, %d",
			cfg.DecoderLayers, H, nf, cfg.OutChannels)
	}
	rng := rand.New(rand.NewPCG(seed, 0x64656d6f))
	normal := func(n int, scale float64) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(scale * rng.NormFloat64())
		}
		return v
	}
	values := map[string][]float32{}
	set := func(name string, v []float32) { values[name] = v }

	L := cfg.LatentChannels
	// post_quant_conv undoes the latent statistics: the decoder sees the
	// DiT's normalized latents (the seed's noise moved by the velocity).
	pqw := make([]float32, L*L)
	pqb := make([]float32, L)
	for c := 0; c < L; c++ {
		pqw[c*L+c] = 1 / cfg.LatentsStd[c]
		pqb[c] = -cfg.LatentsMean[c] / cfg.LatentsStd[c]
	}
	set("post_quant_conv.weight", pqw)
	set("post_quant_conv.bias", pqb)

	// A weak patch embedding into the last dh dims only (the picture's
	// dims stay clean), with zero column sums (the layer norm's mean stays
	// 0); no register content.
	emb := make([]float32, D*L)
	for j := 0; j < L; j++ {
		col := normal(dh, 0.02/math.Sqrt(float64(L)))
		var sum float32
		for _, v := range col {
			sum += v
		}
		for i, v := range col {
			emb[(D-dh+i)*L+j] = v - sum/float32(dh)
		}
	}
	set("decoder.x_embedder.weight", emb)
	set("decoder.x_embedder.bias", make([]float32, D))
	set("decoder.register_tokens", make([]float32, cfg.DecoderRegisters*D))

	// Queries and keys: biases only; values: one random projection, shared.
	p := "decoder.transformer_blocks.0."
	w := make([]float32, 3*D*D)
	b := make([]float32, 3*D)
	vw := normal(dh*D, 1/math.Sqrt(float64(D)))
	// Heads 2–4 look `shift` tokens ahead along x, y and t: in the tile's
	// [−1, 1] coordinates that is 2·shift/n for n tokens along the axis
	// (n = 16 for a full 256-px tile, 7 latents for a decode window).
	invFreq := func(f int) float64 { return math.Pow(cfg.RopeTheta, -float64(6*f)/float64(cfg.RotaryDim())) }
	ahead := [][3]float64{{}, {}, {2: 2 * shift / 16}, {1: 2 * shift / 16}, {0: 2 * shift / 7}}
	for h := 0; h < H; h++ {
		base := h * 3 * dh
		if h != 1 {
			q, k := kernelBias(broad, dh, nf, invFreq, ahead[h])
			copy(b[base:base+dh], q)
			copy(b[base+dh:base+2*dh], k)
		}
		copy(w[(base+2*dh)*D:(base+3*dh)*D], vw)
	}
	set(p+"attn.to_qkv.weight", w)
	set(p+"attn.to_qkv.bias", b)

	// Output: M·(h0 − (1−tint)·h1) in dims [0, dh), M·(h_k − h0) for the
	// gradients in the next three blocks of dh, nothing in the last. M has
	// zero column sums, so the layer norm's mean stays ~0 and leaves the
	// gradient dims alone.
	M := make([]float64, dh*dh)
	for j := 0; j < dh; j++ {
		var sum float64
		for i := 0; i < dh; i++ {
			M[i*dh+j] = rng.NormFloat64() / math.Sqrt(float64(dh))
			sum += M[i*dh+j]
		}
		for i := 0; i < dh; i++ {
			M[i*dh+j] -= sum / float64(dh)
		}
	}
	o := make([]float32, D*D)
	put := func(outBlock, head int, coef float64) {
		for i := 0; i < dh; i++ {
			for j := 0; j < dh; j++ {
				o[(outBlock*dh+i)*D+head*dh+j] += float32(coef * M[i*dh+j])
			}
		}
	}
	put(0, 0, 1)
	put(0, 1, -(1 - tint))
	for g := 1; g <= 3; g++ {
		put(g, g+1, 1)
		put(g, 0, -1)
	}
	set(p+"attn.to_out.weight", o)
	ob := make([]float32, D)
	for i := D - dh; i < D; i++ {
		ob[i] = floor * float32(1-2*(i%2))
	}
	set(p+"attn.to_out.bias", ob)
	set(p+"scale1", konst(D, gain))
	set(p+"scale2", make([]float32, D)) // the MLP stays random but silent
	set("decoder.norm_out.weight", konst(D, 1))
	set("decoder.norm_out.bias", make([]float32, D))
	pw, pb := patchProjection(cfg, rng)
	set("decoder.proj_out.weight", pw)
	set("decoder.proj_out.bias", pb)

	return shaped(inv, values, "video VAE")
}

// shaped gives the inventory's tensors named in values exactly those
// values (InitValues); every name must be in the inventory with that many
// elements.
func shaped(inv safetensors.Inventory, values map[string][]float32, component string) (safetensors.Inventory, error) {
	for i, s := range inv {
		if v, ok := values[s.Name]; ok {
			if len(v) != s.Shape.NumElements() {
				return nil, fmt.Errorf("demo: %s %s: %d values for shape %v", component, s.Name, len(v), s.Shape)
			}
			inv[i].Init = safetensors.Init{Kind: safetensors.InitValues, Values: v}
			delete(values, s.Name)
		}
	}
	if len(values) != 0 {
		return nil, fmt.Errorf("demo: shaped values for tensors the %s does not have: %v", component, slices.Sorted(maps.Keys(values)))
	}
	return inv, nil
}

func konst(n int, c float32) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = c
	}
	return v
}

// kernelBias is the query and key bias of one head for kernel k: the first
// element of each weighted rotary pair (the pairs are (d, d + rot/2), d =
// axis·nf + f) in the query, the same pair turned by φ = −2π·invFreq(f)·
// ahead[axis] in the key, scaled so that the head's q/k RMS norm leaves them
// as they are. The score of a query at coordinate c and a key at c' is then
// Σ w·cos(2π·invFreq(f)·(c' − c − ahead)): a bump centred `ahead` past the
// query.
func kernelBias(k blurKernel, dh, nf int, invFreq func(int) float64, ahead [3]float64) (q, key []float32) {
	q, key = make([]float32, dh), make([]float32, dh)
	half := 3 * nf
	var sum float64
	for _, w := range k {
		sum += w
	}
	for af, w := range k {
		a := math.Sqrt(float64(dh) * w / sum)
		d := af[0]*nf + af[1]
		q[d] = float32(a)
		phi := -2 * math.Pi * invFreq(af[1]) * ahead[af[0]]
		key[d], key[d+half] = float32(a*math.Cos(phi)), float32(a*math.Sin(phi))
	}
	return q, key
}

// patchProjection is proj_out: a token's normalized features → its patch
// (feature order c, dt, py, px). The colour of channel c is C_c·F (F in
// dims [0, dh)) around a warm grey; the gradient dims add
// C_c·∂F·(offset from the patch centre)/shift along x, y and t.
func patchProjection(cfg *videovae.Config, rng *rand.Rand) (w, b []float32) {
	D, dh := cfg.Dim(), cfg.DecoderHeadDim
	C, pt, p := cfg.OutChannels, cfg.TemporalRatio(), cfg.SpatialRatio()
	P := C * pt * p * p
	// Random colour directions, each of the norm N(0, colourGain²/D)
	// entries have on average (no channel dominates).
	colour := make([][]float64, C)
	for c := range colour {
		colour[c] = make([]float64, dh)
		var n float64
		for d := range colour[c] {
			colour[c][d] = rng.NormFloat64()
			n += colour[c][d] * colour[c][d]
		}
		for d := range colour[c] {
			colour[c][d] *= colourGain * math.Sqrt(float64(dh)/float64(D)/n)
		}
	}
	base := []float64{0.9, -0.1, -0.3} // centres typical takes near a neutral grey
	offset := func(i, n int) float64 { return (float64(i) + 0.5 - float64(n)/2) / float64(n) }
	w = make([]float32, P*D)
	b = make([]float32, P)
	row := 0
	for c := 0; c < C; c++ {
		for dt := 0; dt < pt; dt++ {
			for py := 0; py < p; py++ {
				for px := 0; px < p; px++ {
					ramps := [3]float64{offset(px, p) / shift, offset(py, p) / shift, offset(dt, pt) / shift}
					r := w[row*D : (row+1)*D]
					for d := 0; d < dh; d++ {
						r[d] = float32(colour[c][d])
						for g, ramp := range ramps {
							r[(g+1)*dh+d] = float32(colour[c][d] * ramp)
						}
					}
					b[row] = float32(base[c])
					row++
				}
			}
		}
	}
	return w, b
}

// textScale is the demo transformer's AdaLN scale_msa for the text rows
// (the bias of that slot): text rows enter every block's attention this
// many times stronger, so the prompt visibly moves the velocity (with
// uniformly random weights ~20 text rows among ~2,000 barely do).
const textScale = 40

// ditInventory is dit.Inventory(c, OriginalLayout) with the text rows'
// attention scale raised in every block (textScale).
func ditInventory(c dit.Config, seed uint64) safetensors.Inventory {
	inv := dit.Inventory(c, dit.OriginalLayout)
	const text, scaleMSA, slots = 1, 1, 6
	for i, s := range inv {
		if !strings.HasPrefix(s.Name, "blocks.") || !strings.HasSuffix(s.Name, ".adaln_proj.linear.bias") {
			continue
		}
		v := s.Values(seed) // the inventory's own random rule, then the text slot raised
		H := c.HiddenSize
		lo := (text*slots + scaleMSA) * H
		for j := lo; j < lo+H; j++ {
			v[j] += textScale
		}
		inv[i].Init = safetensors.Init{Kind: safetensors.InitValues, Values: v}
	}
	return inv
}

// The demo checkpoint's audio decoder is shaped the same way (initial
// values only) into a soft chord instead of clipped white noise. Each
// stereo channel is decoded on its own; per channel:
//
//   - dec_in_proj takes two random combinations of the normalized latents
//     (undoing the latent statistics), a(t) and b(t) at 40 per second;
//     conv_pre smooths them over 7 latents onto 1 ± 0.2: two slow swells.
//   - ups.0 (40 → 200 samples/s) interpolates a(t) and turns b(t) into a
//     40 Hz tone (a windowed cosine of one period per input step, so
//     successive bursts add in phase); ups.1 (→ 1 kHz) is a band-pass
//     around 200 Hz that turns the constant part into a 200 Hz tone and
//     the 40 Hz tone's images into 160 and 240 Hz: the 4:5:6 major triad
//     E3–G♯3–B3, each note swelling with the latents.
//   - ups.2–6 interpolate linearly (×2 each, to 32 kHz); every residual
//     block's convolutions are silent (weight_g 0), so the blocks pass the
//     signal through; activation_post's SnakeBeta adds a touch of even
//     harmonics; conv_post sets the level (peaks around 0.3).
//
// The rest (the encoder, the activations' other parameters) keeps
// audiovae.Inventory's random rules.

const (
	swell     = 0.5 // conv_pre's gain on the smoothed latents (envelopes 1 ± ~0.2)
	toneGain  = 1.2 // the 40 Hz tone's level before the band-pass
	audioGain = 0.1 // conv_post: the output level
)

// audioVAEInventory is audiovae.Inventory(cfg) with the demo decoder's
// shaped initial values (deterministic: drawn from seed).
func audioVAEInventory(cfg *audiovae.Config, seed uint64) (safetensors.Inventory, error) {
	inv := audiovae.Inventory(cfg)
	want := []int{5, 5, 2, 2, 2, 2, 2}
	if !slices.Equal(cfg.DecoderRates, want) || cfg.SampleRate != 32000 || cfg.LatentDim < 2 || cfg.DecoderDim>>1 < 1 {
		return nil, fmt.Errorf("demo: the shaped audio decoder needs decoder rates %v at 32 kHz; config has %v at %d Hz", want, cfg.DecoderRates, cfg.SampleRate)
	}
	rng := rand.New(rand.NewPCG(seed, 0x617564))
	values := map[string][]float32{}
	specs := map[string]safetensors.Spec{}
	for _, s := range inv {
		specs[s.Name] = s
	}
	// wn sets a weight-normed tensor to w exactly: weight_v = w and
	// weight_g = |w| per output row (dim 0); an all-zero row gets a random
	// direction and g = 0.
	wn := func(name string, w []float32) {
		shape := specs[name+".weight_v"].Shape
		per := len(w) / shape[0]
		v := make([]float32, len(w))
		g := make([]float32, shape[0])
		for o := 0; o < shape[0]; o++ {
			row := w[o*per : (o+1)*per]
			var ss float64
			for _, x := range row {
				ss += float64(x) * float64(x)
			}
			if ss == 0 {
				for i := range row {
					v[o*per+i] = float32(rng.NormFloat64())
				}
				continue
			}
			copy(v[o*per:], row)
			g[o] = float32(math.Sqrt(ss))
		}
		values[name+".weight_v"], values[name+".weight_g"] = v, g
		if b, ok := specs[name+".bias"]; ok {
			values[name+".bias"] = make([]float32, b.Shape.NumElements())
		}
	}

	// dec_in_proj [LatentDim, C, 1]: rows 0 and 1 are unit-variance random
	// combinations of the normalized latents; the rest 0.
	L, C := cfg.LatentDim, cfg.LatentChannels
	pw := make([]float32, L*C)
	pb := make([]float32, L)
	for j := 0; j < 2; j++ {
		for c := 0; c < C; c++ {
			w := rng.NormFloat64() / math.Sqrt(float64(C)) / float64(cfg.LatentsStd[c])
			pw[j*C+c] = float32(w)
			pb[j] -= float32(w * float64(cfg.LatentsMean[c]))
		}
	}
	values["dec_in_proj.weight"], values["dec_in_proj.bias"] = pw, pb

	// conv_pre [D, L, 7]: out j = 1 + swell·smooth(in j) for j = 0, 1.
	D := cfg.DecoderDim
	smooth := []float64{1, 2, 3, 4, 3, 2, 1}
	cw := make([]float32, D*L*7)
	for j := 0; j < 2; j++ {
		for k, s := range smooth {
			cw[(j*L+j)*7+k] = float32(swell * s / 16)
		}
	}
	wn("decoder.conv_pre", cw)
	cb := make([]float32, D)
	cb[0], cb[1] = 1, 1
	values["decoder.conv_pre.bias"] = cb

	// The upsampling stages [cin, cout, k]: channel 0 carries the sound.
	tri := []float64{0.2, 0.4, 0.6, 0.8, 1, 0.8, 0.6, 0.4, 0.2} // ×5 linear interpolation
	for i, u := range cfg.DecoderRates {
		k := cfg.DecoderKernels[i]
		cin, cout := D>>i, D>>(i+1)
		w := make([]float32, cin*cout*k)
		switch {
		case i == 0: // a(t) interpolated, b(t) on a 40 Hz carrier
			for j := 0; j < k; j++ {
				w[j] = float32(tri[j])
				w[cout*k+j] = float32(toneGain * tri[j] * math.Cos(2*math.Pi*float64(j-4)/5))
			}
		case i == 1: // band-pass around 200 Hz
			for j := 0; j < k; j++ {
				w[j] = float32(tri[j] * math.Cos(2*math.Pi*float64(j-4)/5))
			}
		default: // ×2 linear interpolation
			copy(w, []float32{0.25, 0.75, 0.75, 0.25})
		}
		if (i < 2 && (u != 5 || k != 9)) || (i >= 2 && (u != 2 || k != 4)) {
			return nil, fmt.Errorf("demo: the shaped audio decoder needs kernels 9 and 4; stage %d has %d", i, k)
		}
		wn(fmt.Sprintf("decoder.ups.%d.0", i), w)
		for j, K := range cfg.ResblockKernels {
			name := fmt.Sprintf("decoder.resblocks.%d", i*len(cfg.ResblockKernels)+j)
			for p := range cfg.ResblockDilations[j] {
				wn(fmt.Sprintf("%s.convs1.%d", name, p), make([]float32, cout*cout*K))
				wn(fmt.Sprintf("%s.convs2.%d", name, p), make([]float32, cout*cout*K))
			}
		}
	}
	last := D >> len(cfg.DecoderRates)
	values["decoder.activation_post.act.alpha"] = konst(last, float32(math.Log(0.3)))
	values["decoder.activation_post.act.beta"] = make([]float32, last)
	post := make([]float32, last*7)
	post[3] = audioGain // channel 0, centre tap
	wn("decoder.conv_post", post)

	return shaped(inv, values, "audio VAE")
}
