package audiovae

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"h3studio/engine/compute"
	"h3studio/engine/safetensors"
)

// TinyConfig is a small audio VAE with the release's geometry (32 kHz,
// hop 800 = 40 latents per second, 32 latent channels, 8 heads, the BigVGAN
// tables) and tiny widths: the demo checkpoint's and the tests'.
func TinyConfig() *Config {
	return &Config{
		Layout: Original, EncoderDim: 8, EncoderRates: []int{2, 4, 4, 5, 5}, LatentDim: 256, LatentChannels: 32, Heads: 8,
		DecoderDim: 128, DecoderRates: []int{5, 5, 2, 2, 2, 2, 2}, DecoderKernels: []int{9, 9, 4, 4, 4, 4, 4},
		ResblockKernels: []int{3, 7, 11}, ResblockDilations: [][]int{{1, 3, 5}, {1, 3, 5}, {1, 3, 5}},
		SampleRate:  32000,
		LatentsMean: append([]float32(nil), releasedMean[:]...), LatentsStd: append([]float32(nil), releasedStd[:]...),
	}
}

// The released latent statistics (spec §9.2).
var (
	releasedMean = [32]float32{-0.020211687488382354, 0.3876466479950502, -0.04398279799186767, -0.28591514936373, 0.08179686214561671, -0.35782641352446604, 0.040623809960919084, -0.01552534501956604, -0.223362481667332, 0.1821006842509091, 0.2941778783780663, -0.07901167601970885, -0.056815072777201, -0.3699028221860095, -0.31616315591624855, 0.5905951377425391, -0.052139568068853864, 0.013673160263486295, -0.03691647864630577, 0.09732660653298163, -0.3394662328788498, -0.30685677538541667, -0.24504598907458763, -0.034698524462007344, 0.02868032184767538, -0.21217779266454084, -0.1678263169941987, 0.3221287889040614, -0.1223055851554907, 0.4356604928128464, -0.0502599202236253, 0.3979258376211797}
	releasedStd  = [32]float32{1.6895524230479284, 2.76263727217653, 1.7945344281264435, 1.6801681847309828, 1.6390226546605453, 2.7788298348882177, 1.7659090095747236, 1.6199757612137327, 2.6336525640336896, 1.8539356672817833, 2.5056497896915633, 1.811019237886178, 1.9579657790720237, 1.6685498243529284, 1.4922469314453364, 3.298670198067373, 1.9491804496832168, 1.8720003270431442, 1.8334080103291832, 1.6488070416529093, 1.6176957696319716, 1.9131449234774398, 1.5695245398428617, 1.6943659940415912, 1.8318420762504692, 1.5540637421583379, 1.9344930328968526, 1.599198216109855, 1.718045989838149, 1.6307219190837705, 1.8661226051202384, 1.5613768203168363}
)

// KaiserSincFilter is alias-free-torch's kaiser_sinc_filter1d (as diffusers
// keeps it): a Kaiser-windowed sinc low-pass of kernel taps, normalized to
// sum 1. The checkpoint stores these buffers; the decoder uses the stored
// values, this function only builds test models.
func KaiserSincFilter(cutoff, halfWidth float64, kernel int) []float32 {
	half := kernel / 2
	att := 2.285*float64(half-1)*math.Pi*(4*halfWidth) + 7.95
	var beta float64
	switch {
	case att > 50:
		beta = 0.1102 * (att - 8.7)
	case att >= 21:
		beta = 0.5842*math.Pow(att-21, 0.4) + 0.07886*(att-21)
	}
	n := float64(kernel - 1)
	f := make([]float64, kernel)
	var sum float64
	for i := range f {
		r := 2*float64(i)/n - 1
		win := besselI0(beta*math.Sqrt(1-r*r)) / besselI0(beta)
		t := float64(i - half)
		if kernel%2 == 0 {
			t += 0.5
		}
		x := 2 * cutoff * t
		sinc := 1.0
		if x != 0 {
			sinc = math.Sin(math.Pi*x) / (math.Pi * x)
		}
		f[i] = 2 * cutoff * win * sinc
		sum += f[i]
	}
	out := make([]float32, kernel)
	for i, v := range f {
		out[i] = float32(v / sum)
	}
	return out
}

// besselI0 is the modified Bessel function of the first kind, order 0.
func besselI0(x float64) float64 {
	s, term := 1.0, 1.0
	for k := 1; k < 200; k++ {
		term *= (x / 2) * (x / 2) / float64(k*k)
		s += term
		if term < 1e-17*s {
			break
		}
	}
	return s
}

// TensorShapes lists every tensor of the checkpoint for cfg (the names Load
// binds) with their shapes.
func TensorShapes(cfg *Config) map[string][]int {
	s := map[string][]int{}
	wn := func(name string, shape []int, bias bool, biasLen int) {
		s[name+".weight_v"] = shape
		s[name+".weight_g"] = []int{shape[0], 1, 1}
		if bias {
			s[name+".bias"] = []int{biasLen}
		}
	}
	d := cfg.EncoderDim
	wn("encoder.block.0", []int{d, 1, 7}, true, d)
	for i, r := range cfg.EncoderRates {
		p := fmt.Sprintf("encoder.block.%d.block.", i+1)
		for u := 0; u < 3; u++ {
			q := fmt.Sprintf("%s%d.block.", p, u)
			s[q+"0.alpha"], s[q+"2.alpha"] = []int{1, d, 1}, []int{1, d, 1}
			wn(q+"1", []int{d, d, 7}, true, d)
			wn(q+"3", []int{d, d, 1}, true, d)
		}
		s[p+"3.alpha"] = []int{1, d, 1}
		wn(p+"4", []int{2 * d, d, 2 * r}, true, 2*d)
		d *= 2
	}
	n := len(cfg.EncoderRates)
	s[fmt.Sprintf("encoder.block.%d.alpha", n+1)] = []int{1, d, 1}
	L, C := cfg.LatentDim, cfg.LatentChannels
	wn(fmt.Sprintf("encoder.block.%d", n+2), []int{L, d, 3}, true, L)
	for _, k := range []string{"norm1", "norm3"} {
		s["pre_block."+k+".weight"], s["pre_block."+k+".bias"] = []int{L}, []int{L}
	}
	for _, k := range []string{"norm2", "mlp.norm"} {
		s["pre_block."+k+".weight"], s["pre_block."+k+".bias"] = []int{C}, []int{C}
	}
	s["pre_block.attn.qkv.weight"] = []int{3 * L, L}
	s["pre_block.attn.q_bias"], s["pre_block.attn.v_bias"], s["pre_block.attn.zero_k_bias"] = []int{L}, []int{L}, []int{L}
	s["pre_block.attn.proj.weight"], s["pre_block.attn.proj.bias"] = []int{C, C}, []int{C}
	s["pre_block.proj.weight"], s["pre_block.proj.bias"] = []int{C, L}, []int{C}
	s["pre_block.mlp.w0.weight"], s["pre_block.mlp.w0.bias"] = []int{2 * C, C}, []int{2 * C}
	s["pre_block.mlp.w1.weight"], s["pre_block.mlp.w1.bias"] = []int{2 * C, C}, []int{2 * C}
	s["pre_block.mlp.w2.weight"], s["pre_block.mlp.w2.bias"] = []int{C, 2 * C}, []int{C}
	for _, k := range []string{"mean_proj", "logs_proj"} {
		s[k+".weight"], s[k+".bias"] = []int{C, C, 1}, []int{C}
	}
	s["dec_in_proj.weight"], s["dec_in_proj.bias"] = []int{L, C, 1}, []int{L}
	D := cfg.DecoderDim
	wn("decoder.conv_pre", []int{D, L, 7}, true, D)
	act := func(name string, c int) {
		s[name+".act.alpha"], s[name+".act.beta"] = []int{c}, []int{c}
		s[name+".upsample.filter"], s[name+".downsample.lowpass.filter"] = []int{1, 1, 12}, []int{1, 1, 12}
	}
	for i := range cfg.DecoderRates {
		cin, cout := D>>i, D>>(i+1)
		wn(fmt.Sprintf("decoder.ups.%d.0", i), []int{cin, cout, cfg.DecoderKernels[i]}, true, cout)
		for j, K := range cfg.ResblockKernels {
			name := fmt.Sprintf("decoder.resblocks.%d", i*len(cfg.ResblockKernels)+j)
			for p := range cfg.ResblockDilations[j] {
				wn(fmt.Sprintf("%s.convs1.%d", name, p), []int{cout, cout, K}, true, cout)
				wn(fmt.Sprintf("%s.convs2.%d", name, p), []int{cout, cout, K}, true, cout)
			}
			for a := 0; a < 2*len(cfg.ResblockDilations[j]); a++ {
				act(fmt.Sprintf("%s.activations.%d", name, a), cout)
			}
		}
	}
	last := D >> len(cfg.DecoderRates)
	act("decoder.activation_post", last)
	wn("decoder.conv_post", []int{1, last, 7}, false, 0)
	return s
}

// WriteTestModel writes an audio VAE with random weights for cfg in the
// original layout under dir (config.json, config.yaml, metadata.json,
// model.safetensors), deterministic in seed: Inventory's oracle-like
// initialisation. The original layout derives the decoder kernels as
// 2u − u mod 2, so cfg must use those. For demos and tests only.
func WriteTestModel(dir string, cfg *Config, seed uint64) error {
	if err := checkTestConfig(cfg); err != nil {
		return err
	}
	entries, err := Inventory(cfg).Entries(seed)
	if err != nil {
		return err
	}
	return WriteModel(dir, cfg, entries)
}

// Inventory is the checkpoint's tensor list for cfg (TensorShapes, in name
// order) as F32 tensors with the oracle-like initialisation rules of
// WriteTestModel: weight_v N(0, 1/fan_in), weight_g 1 + 0.1·N (conv_post
// 0.15), biases 0.05·N, Snake alpha U[0.5, 1.5), SnakeBeta log-parameters
// 0.2·N, the Kaiser filter buffers computed.
//
// The encoder's residual branches are scaled: the last conv of each of its
// U residual units has weight_g U[0.8, 1.2)/√U, so a branch adds about 1/U
// of the stream's variance and the stream stays O(1) (at most e times its
// variance over the encoder). With unit-gain branches the stream doubles
// its variance per unit (rms 0.5 → 159 at the released width) and, at
// |x| ≫ 1/α, Snake's derivative 1 + sin(2αx) is a ±1 modulation that
// amplifies any perturbation about 1.22× per Snake relative to the signal:
// the random encoder is chaotic (×2.5 per block), which a trained encoder
// is not (docs/fullscale.md measures both). A caller may change the rules
// of some tensors (the demo checkpoint shapes its decoder) and write the
// result with WriteModel.
func Inventory(cfg *Config) safetensors.Inventory {
	filter := KaiserSincFilter(0.25, 0.3, 12)
	shapes := TensorShapes(cfg)
	branch := map[string]bool{}
	for s := range cfg.EncoderRates {
		for u := 0; u < 3; u++ {
			branch[fmt.Sprintf("encoder.block.%d.block.%d.block.3.weight_g", s+1, u)] = true
		}
	}
	beta := float32(1 / math.Sqrt(float64(len(branch))))
	inv := make(safetensors.Inventory, 0, len(shapes))
	for _, name := range slices.Sorted(maps.Keys(shapes)) {
		var init safetensors.Init
		switch {
		case branch[name]:
			init = safetensors.Init{Kind: safetensors.InitUniform, Lo: 0.8 * beta, Hi: 1.2 * beta}
		case strings.HasSuffix(name, ".filter"):
			init = safetensors.Init{Kind: safetensors.InitValues, Values: filter}
		case name == "pre_block.attn.zero_k_bias":
			init = safetensors.Init{Kind: safetensors.InitConst}
		case strings.HasSuffix(name, ".act.alpha"), strings.HasSuffix(name, ".act.beta"):
			init = safetensors.Init{Kind: safetensors.InitNormal, Scale: 0.2}
		case strings.HasSuffix(name, ".alpha"):
			init = safetensors.Init{Kind: safetensors.InitUniform, Lo: 0.5, Hi: 1.5}
		case name == "decoder.conv_post.weight_g":
			init = safetensors.Init{Kind: safetensors.InitConst, Scale: 0.15}
		case strings.HasSuffix(name, ".weight_g"):
			init = safetensors.Init{Kind: safetensors.InitOnes, Scale: 0.1}
		case strings.Contains(name, "norm") && strings.HasSuffix(name, ".weight"):
			init = safetensors.Init{Kind: safetensors.InitOnes, Scale: 0.1}
		case strings.HasSuffix(name, "bias"):
			init = safetensors.Init{Kind: safetensors.InitNormal, Scale: 0.05}
		default:
			init = safetensors.Init{Kind: safetensors.InitNormal} // 1/sqrt(fan-in)
		}
		inv = append(inv, safetensors.Spec{Name: name, DType: compute.F32, Shape: compute.Shape(shapes[name]), Init: init})
	}
	return inv
}

// WriteModel writes an audio VAE in the original layout under dir
// (config.json, config.yaml, metadata.json, model.safetensors) with cfg's
// configs and the given weights (TensorShapes' names; Load checks them
// strictly). For demos and tests.
func WriteModel(dir string, cfg *Config, entries []safetensors.Entry) error {
	if err := checkTestConfig(cfg); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	mean, std := make([]float64, len(cfg.LatentsMean)), make([]float64, len(cfg.LatentsStd))
	for i := range mean {
		mean[i], std[i] = float64(cfg.LatentsMean[i]), float64(cfg.LatentsStd[i])
	}
	wrapper := map[string]any{
		"_class_name": "MiniMaxH3AudioVAE", "output_channel": 2, "sample_rate": cfg.SampleRate,
		"source_config_path": "config.yaml", "source_safetensors_path": "model.safetensors", "source_metadata_path": "metadata.json",
		"latent_channels": cfg.LatentChannels, "latents_mean": mean, "latents_std": std,
	}
	meta := map[string]any{"metadata": map[string]any{"kwargs": map[string]any{
		"attn_proj": true, "decoder_dim": cfg.DecoderDim, "decoder_rates": cfg.DecoderRates, "decoder_type": "bigvgan",
		"encoder_dim": cfg.EncoderDim, "encoder_rates": cfg.EncoderRates, "latent_dim": cfg.LatentDim,
		"sample_rate": cfg.SampleRate, "vae_latent_channels": cfg.LatentChannels,
	}}}
	for name, v := range map[string]any{"config.json": wrapper, "metadata.json": meta} {
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, name), append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	yaml := fmt.Sprintf("model_config:\n  sr: %d\n  decoder_dim: %d\n  audio_channel: 1\n  vae_latent_channels: %d\n", cfg.SampleRate, cfg.DecoderDim, cfg.LatentChannels)
	if err := os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(yaml), 0o644); err != nil {
		return err
	}
	return safetensors.Write(filepath.Join(dir, "model.safetensors"), entries, map[string]string{"format": "pt"})
}

// checkTestConfig rejects configs the original layout cannot express.
func checkTestConfig(cfg *Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	for i, u := range cfg.DecoderRates {
		if cfg.DecoderKernels[i] != 2*u-u%2 {
			return fmt.Errorf("audiovae: WriteTestModel: the original layout derives kernel %d for rate %d, config has %d", 2*u-u%2, u, cfg.DecoderKernels[i])
		}
	}
	if cfg.Heads != 8 || !slices.Equal(cfg.ResblockKernels, []int{3, 7, 11}) {
		return fmt.Errorf("audiovae: WriteTestModel: the original layout fixes 8 heads and resblock kernels [3 7 11]")
	}
	return nil
}
