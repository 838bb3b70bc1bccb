package videovae

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"h3studio/engine/compute"
	"h3studio/engine/safetensors"
)

// TinyConfig is a small video VAE with the release's geometry (16× spatial,
// 4× temporal, 24 latent channels, 17/3 clip chunking, 256/64 tiles, the
// released latent statistics) and tiny widths: the demo checkpoint's and
// the tests'. A 256×256×22 decode is one window of one tile of 1,797 tokens.
func TinyConfig() *Config {
	return &Config{
		Layout: Original, InChannels: 3, OutChannels: 3, LatentChannels: 24,
		BlockOutChannels: []int{32, 32, 32, 64}, LayersPerBlock: 1,
		SpatialDownsample: []int{2, 2, 2, 2}, TemporalDownsample: []int{1, 2, 2, 1},
		NormGroups: 32, NormEps: 1e-6, SpatialPaddingReflect: true,
		DecoderLayers: 2, DecoderHeads: 2, DecoderHeadDim: 32, DecoderRegisters: 4, DecoderFFNHidden: 128,
		RopeTheta: 100, RopeDimRatio: 0.75, DecoderNormEps: 1e-5,
		ClipLength: 17, TokenDrop: 3, TileSize: 256, TileOverlap: 64,
		LatentsMean: append([]float32(nil), releasedMean[:]...),
		LatentsStd:  append([]float32(nil), releasedStd[:]...),
	}
}

// The released latent statistics (spec §8.2).
var (
	releasedMean = [24]float32{0.858090341091156, -0.9606591463088989, 1.0661640167236328, -0.5090325474739075, -0.2727581858634949, -1.3675414323806763, -0.2553254961967468, -0.26907554268836975, -0.5376840829849243, -0.0464097298681736, 0.6657370328903198, 0.19690127670764923, -0.5460608005523682, -0.4035342037677765, -0.23683024942874908, 0.25928452610969543, -0.30133944749832153, 0.211341992020607, -1.1206848621368408, 0.3581933379173279, -0.04225143790245056, 0.2604829967021942, 0.22864092886447906, 0.7056031823158264}
	releasedStd  = [24]float32{1.2223774194717407, 1.2767263650894165, 1.6831774711608887, 1.7549455165863037, 1.5636216402053833, 2.194143533706665, 0.9653137922286987, 1.0569885969161987, 0.841948926448822, 0.7729952931404114, 1.8955937623977661, 0.946841835975647, 0.7996809482574463, 0.44988900423049927, 0.7197399735450745, 0.6936293244361877, 2.961095094680786, 2.7694199085235596, 3.0496184825897217, 2.1088054180145264, 3.276226282119751, 3.1627357006073, 2.2816812992095947, 2.6127843856811523}
)

// TensorShapes lists every tensor of the original layout for cfg (the
// names Load binds), with their shapes.
func TensorShapes(cfg *Config) map[string][]int {
	s := map[string][]int{}
	conv := func(name string, out, in, k int) {
		s[name+".weight"] = []int{out, in, k, k, k}
		s[name+".bias"] = []int{out}
	}
	ch := cfg.BlockOutChannels
	conv("encoder.conv_in", ch[0], cfg.InChannels, 3)
	in := ch[0]
	n := names{Original}
	for l, out := range ch {
		for i := 0; i < cfg.LayersPerBlock; i++ {
			p := n.resnet(l, i)
			cin := out
			if i == 0 {
				cin = in
			}
			s[p+"norm1.weight"], s[p+"norm1.bias"] = []int{cin}, []int{cin}
			conv(p+"conv1", out, cin, 3)
			s[p+"norm2.weight"], s[p+"norm2.bias"] = []int{out}, []int{out}
			conv(p+"conv2", out, out, 3)
			if cin != out {
				conv(p+"nin_shortcut", out, cin, 1)
			}
		}
		if cfg.SpatialDownsample[l]*cfg.TemporalDownsample[l] > 1 {
			conv(n.downsample(l), out, out, 3)
		}
		in = out
	}
	last := ch[len(ch)-1]
	s["encoder.norm_out.weight"], s["encoder.norm_out.bias"] = []int{last}, []int{last}
	L := cfg.LatentChannels
	conv("encoder.conv_out", 2*L, last, 3)
	conv("quant_conv", 2*L, 2*L, 1)
	conv("post_quant_conv", L, L, 1)
	D, F := cfg.Dim(), cfg.DecoderFFNHidden
	s["decoder.x_embedder.weight"], s["decoder.x_embedder.bias"] = []int{D, L}, []int{D}
	s["decoder.register_tokens"] = []int{1, cfg.DecoderRegisters, D}
	s["decoder.mask_token"] = []int{1, 1, D}
	for i := 0; i < cfg.DecoderLayers; i++ {
		p := fmt.Sprintf("decoder.transformer_blocks.%d.", i)
		for _, k := range []string{"norm1.weight", "norm2.weight", "scale1", "scale2", "attn.to_out.bias", "ff.w2.bias"} {
			s[p+k] = []int{D}
		}
		s[p+"attn.to_qkv.weight"], s[p+"attn.to_qkv.bias"] = []int{3 * D, D}, []int{3 * D}
		s[p+"attn.to_out.weight"] = []int{D, D}
		s[p+"ff.w1.weight"], s[p+"ff.w1.bias"] = []int{2 * F, D}, []int{2 * F}
		s[p+"ff.w2.weight"] = []int{D, F}
	}
	P := cfg.OutChannels * cfg.TemporalRatio() * cfg.SpatialRatio() * cfg.SpatialRatio()
	s["decoder.norm_out.weight"], s["decoder.norm_out.bias"] = []int{D}, []int{D}
	s["decoder.proj_out.weight"], s["decoder.proj_out.bias"] = []int{P, D}, []int{P}
	return s
}

// WriteTestModel writes a video VAE with random weights for cfg in the
// original layout under dir (dir/config.json, dir/source/config.json,
// dir/source/model.safetensors), deterministic in seed: Inventory's
// oracle-like initialisation, so decoded frames have natural-looking
// statistics. For demos and tests only.
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

// Inventory is the original layout's tensor list for cfg (TensorShapes, in
// name order) as F32 tensors with the oracle-like initialisation rules of
// WriteTestModel (weights N(0, 1/fan_in), norm scales 1 + 0.1·N, biases
// 0.05·N, layer scales U[0.15, 0.45), registers N(0, 1), the mask token
// 0). A caller may change the rules of some tensors (the demo checkpoint
// shapes its decoder) and write the result with WriteModel.
func Inventory(cfg *Config) safetensors.Inventory {
	shapes := TensorShapes(cfg)
	inv := make(safetensors.Inventory, 0, len(shapes))
	for _, name := range slices.Sorted(maps.Keys(shapes)) {
		var init safetensors.Init
		switch {
		case name == "decoder.mask_token":
			init = safetensors.Init{Kind: safetensors.InitConst}
		case name == "decoder.register_tokens":
			init = safetensors.Init{Kind: safetensors.InitNormal, Scale: 1}
		case hasSuffix(name, "scale1", "scale2"):
			init = safetensors.Init{Kind: safetensors.InitUniform, Lo: 0.15, Hi: 0.45}
		case hasSuffix(name, "norm1.weight", "norm2.weight", "norm_out.weight"):
			init = safetensors.Init{Kind: safetensors.InitOnes, Scale: 0.1}
		case hasSuffix(name, ".bias"):
			init = safetensors.Init{Kind: safetensors.InitNormal, Scale: 0.05}
		default:
			init = safetensors.Init{Kind: safetensors.InitNormal} // 1/sqrt(fan-in)
		}
		inv = append(inv, safetensors.Spec{Name: name, DType: compute.F32, Shape: compute.Shape(shapes[name]), Init: init})
	}
	return inv
}

// checkTestConfig rejects configs the original layout's writer cannot
// express.
func checkTestConfig(cfg *Config) error {
	if cfg.DecoderFFNHidden <= 0 {
		return fmt.Errorf("videovae: WriteTestModel: DecoderFFNHidden must be set")
	}
	return cfg.Validate()
}

// WriteModel writes a video VAE in the original layout under dir
// (dir/config.json, dir/source/config.json, dir/source/model.safetensors)
// with cfg's configs and the given weights (TensorShapes' names; Load
// checks them strictly). For demos and tests.
func WriteModel(dir string, cfg *Config, entries []safetensors.Entry) error {
	if err := checkTestConfig(cfg); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(dir, "source"), 0o755); err != nil {
		return err
	}
	mult := make([]int, len(cfg.BlockOutChannels))
	for i, c := range cfg.BlockOutChannels {
		mult[i] = c / cfg.BlockOutChannels[0]
		if mult[i]*cfg.BlockOutChannels[0] != c {
			return fmt.Errorf("videovae: WriteTestModel: block_out_channels %v are not multiples of the first", cfg.BlockOutChannels)
		}
	}
	padding := "reflect"
	if !cfg.SpatialPaddingReflect {
		padding = "zeros"
	}
	source := map[string]any{
		"_class_name": "AutoencoderKLLegacy", "ch": cfg.BlockOutChannels[0], "ch_mult": mult,
		"num_res_blocks": cfg.LayersPerBlock, "space_down": cfg.SpatialDownsample, "time_down": cfg.TemporalDownsample,
		"z_channels": cfg.LatentChannels, "embed_dim": cfg.LatentChannels, "in_channels": cfg.InChannels, "out_ch": cfg.OutChannels,
		"padding_mode": padding, "vae_ratio": cfg.SpatialRatio(), "vae_ratio_t": cfg.TemporalRatio(),
		"causal_encoder": true, "causal_decoder": false, "use_3d_conv": true, "use_t_isolated_gn": true, "use_vit_decoder": true,
		"pixel_norm_type": "imagenet", "scaling_factor": 1.0, "shift_factor": 0.0,
		"vit_decoder_kwargs": map[string]any{
			"dim_head": cfg.DecoderHeadDim, "heads": cfg.DecoderHeads, "num_layers": cfg.DecoderLayers,
			"rope_dim_ratio": cfg.RopeDimRatio, "rope_theta": cfg.RopeTheta, "norm_type": "rms_norm", "qk_norm_type": "rms_norm",
			"ffn_activation_fn": "silu", "ffn_use_gated": true, "norm_affine": true, "qk_norm_affine": false,
		},
	}
	wrapper := map[string]any{
		"_class_name": "MiniMaxH3VideoVAE", "source_path": "source", "source_class_name": "AutoencoderKLLegacy",
		"source_safetensors_path": "model.safetensors", "latent_channels": cfg.LatentChannels,
		"vae_clip_length": cfg.ClipLength, "vae_token_drop": cfg.TokenDrop, "vae_encoder_tiling": 1, "vae_decoder_tiling": 1,
		"vae_tile_size": cfg.TileSize, "vae_tile_overlap_min": cfg.TileOverlap,
		"latents_mean": f64s(cfg.LatentsMean), "latents_std": f64s(cfg.LatentsStd),
	}
	if err := writeJSON(filepath.Join(dir, "source", "config.json"), source); err != nil {
		return err
	}
	if err := writeJSON(filepath.Join(dir, "config.json"), wrapper); err != nil {
		return err
	}
	return safetensors.Write(filepath.Join(dir, "source", "model.safetensors"), entries, map[string]string{"format": "pt"})
}

func hasSuffix(s string, sufs ...string) bool {
	for _, x := range sufs {
		if len(s) >= len(x) && s[len(s)-len(x):] == x {
			return true
		}
	}
	return false
}

// f64s widens float32 statistics for JSON (they parse back to the same
// float32 values).
func f64s(v []float32) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
