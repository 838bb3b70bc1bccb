package videovae

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"h3studio/engine/configfile"
	"h3studio/engine/safetensors"
)

// Layout is the on-disk form of the video VAE: the snapshot layouts.
type Layout = configfile.Layout

// The two released layouts (H3-ENCODERS-VAES.md §2, §8.12).
const (
	// Original is the MiniMax release: video_vae/config.json (wrapper,
	// MiniMaxH3VideoVAE) plus video_vae/source/{config.json,
	// model.safetensors} (AutoencoderKLLegacy, CompVis tensor names,
	// per-head interleaved to_qkv, ff.w1 = [gate; up]).
	Original = configfile.Original
	// Diffusers is diffusers' vae/ folder (AutoencoderKLMiniMaxH3: renamed
	// tensors, separate to_q/to_k/to_v, ff.net.0.proj = [up; gate]).
	Diffusers = configfile.Diffusers
)

// Config is the video VAE geometry, read from either layout and validated.
// Field names follow diffusers' AutoencoderKLMiniMaxH3 config.
type Config struct {
	Layout Layout

	InChannels, OutChannels, LatentChannels int
	// Encoder (causal 3-D CNN).
	BlockOutChannels      []int
	LayersPerBlock        int
	SpatialDownsample     []int // per level
	TemporalDownsample    []int // per level
	NormGroups            int
	NormEps               float32
	SpatialPaddingReflect bool // spatial_padding_mode "reflect" (else zeros)
	// Decoder (ViT).
	DecoderLayers, DecoderHeads, DecoderHeadDim int
	DecoderRegisters                            int // from config, or from the register_tokens tensor (original layout)
	DecoderFFNHidden                            int // inner width of the gated MLP (from ff.w1's shape at load; 0 before)
	RopeTheta, RopeDimRatio                     float64
	DecoderNormEps                              float32
	// Temporal chunking (encode and decode).
	ClipLength, TokenDrop int
	// Spatial tiling (pixels): the wrapper's vae_tile_size and
	// vae_tile_overlap_min; diffusers' defaults 256 / 64.
	TileSize, TileOverlap int
	// Latent normalization: z_norm = (z − mean)/std per channel.
	LatentsMean, LatentsStd []float32
}

// SpatialRatio is the pixels per latent along H and W (16 in the release).
func (c *Config) SpatialRatio() int { return prod(c.SpatialDownsample) }

// TemporalRatio is the pixel frames per latent frame (4 in the release).
func (c *Config) TemporalRatio() int { return prod(c.TemporalDownsample) }

// Dim is the decoder's token width (heads × head dim).
func (c *Config) Dim() int { return c.DecoderHeads * c.DecoderHeadDim }

// RotaryDim is the number of rotated channels per head (0.75 × head dim).
func (c *Config) RotaryDim() int { return int(float64(c.DecoderHeadDim) * c.RopeDimRatio) }

func prod(s []int) int {
	p := 1
	for _, v := range s {
		p *= v
	}
	return p
}

// ReleasedConfig is the released video VAE (H3-ENCODERS-VAES.md §8):
// AutoencoderKLMiniMaxH3's defaults, which are the release's values, the
// decoder's MLP width (decoder_ffn_mult 4 × 2,048) and the released latent
// statistics, in the original layout. For planning without the files.
func ReleasedConfig() *Config {
	c := &Config{
		Layout: Original, InChannels: 3, OutChannels: 3, LatentChannels: 24,
		BlockOutChannels: []int{128, 256, 256, 512, 512, 1024}, LayersPerBlock: 2,
		SpatialDownsample: []int{2, 2, 2, 2, 1, 1}, TemporalDownsample: []int{1, 2, 2, 1, 1, 1},
		NormGroups: 32, NormEps: 1e-6, SpatialPaddingReflect: true,
		DecoderLayers: 36, DecoderHeads: 32, DecoderHeadDim: 64, DecoderRegisters: 4,
		RopeTheta: 100, RopeDimRatio: 0.75, DecoderNormEps: 1e-5,
		ClipLength: 17, TokenDrop: 3, TileSize: 256, TileOverlap: 64,
		LatentsMean: append([]float32(nil), releasedMean[:]...),
		LatentsStd:  append([]float32(nil), releasedStd[:]...),
	}
	c.DecoderFFNHidden = 4 * c.Dim()
	return c
}

// ReadConfig reads the config of a video VAE component. configDir holds
// config.json (the wrapper for the original layout, the diffusers config
// otherwise); weightsDir holds the weights and, for the original layout,
// the AutoencoderKLLegacy source config.json.
func ReadConfig(configDir, weightsDir string) (*Config, error) {
	path := filepath.Join(configDir, "config.json")
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("videovae: %w", err)
	}
	spath := filepath.Join(weightsDir, "config.json")
	var sraw []byte
	if class(raw) == "MiniMaxH3VideoVAE" {
		if sraw, err = os.ReadFile(spath); err != nil {
			return nil, fmt.Errorf("videovae: original layout: source config: %w", err)
		}
	}
	return ParseConfig(path, raw, spath, sraw)
}

// DecoderFFNHidden reads the decoder's MLP inner width from the first
// block's ff.w1 header in weightsDir (nothing is bound); 0 when it cannot
// be read. The original layout's config leaves that width to the weights.
func DecoderFFNHidden(weightsDir string) int {
	ck, err := safetensors.OpenDir(weightsDir)
	if err != nil {
		return 0
	}
	defer ck.Close()
	for _, n := range []string{"ff.w1", "ff.net.0.proj"} {
		if info, ok := ck.Info("decoder.transformer_blocks.0." + n + ".weight"); ok && len(info.Shape) == 2 {
			return info.Shape[0] / 2
		}
	}
	return 0
}

func class(raw []byte) string {
	var head struct {
		Class string `json:"_class_name"`
	}
	json.Unmarshal(raw, &head)
	return head.Class
}

// ParseConfig parses a config.json (path names it in errors) and, for the
// original layout's wrapper, the AutoencoderKLLegacy source config, then
// validates the result.
func ParseConfig(path string, raw []byte, sourcePath string, source []byte) (*Config, error) {
	var head struct {
		Class string `json:"_class_name"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return nil, fmt.Errorf("videovae: %s: not valid JSON: %w", path, err)
	}
	var c *Config
	var err error
	switch head.Class {
	case "MiniMaxH3VideoVAE":
		c, err = readOriginal(path, raw, sourcePath, source)
	case "AutoencoderKLMiniMaxH3":
		c, err = readDiffusers(path, raw)
	default:
		return nil, fmt.Errorf("videovae: %s: _class_name %q is neither MiniMaxH3VideoVAE (original layout) nor AutoencoderKLMiniMaxH3 (diffusers)", path, head.Class)
	}
	if err != nil {
		return nil, err
	}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("%w (%s)", err, path)
	}
	return c, nil
}

// req reports a missing required key.
func req(path, key string) error {
	return fmt.Errorf("videovae: %s: missing required key %q", path, key)
}

func readOriginal(path string, raw []byte, spath string, sraw []byte) (*Config, error) {
	var w struct {
		SourcePath *string   `json:"source_path"`
		Clip       *int      `json:"vae_clip_length"`
		Drop       *int      `json:"vae_token_drop"`
		Tile       *int      `json:"vae_tile_size"`
		Overlap    *int      `json:"vae_tile_overlap_min"`
		LatentCh   *int      `json:"latent_channels"`
		Mean       []float64 `json:"latents_mean"`
		Std        []float64 `json:"latents_std"`
	}
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, fmt.Errorf("videovae: %s: %w", path, err)
	}
	for k, p := range map[string]*int{"vae_clip_length": w.Clip, "vae_token_drop": w.Drop, "latent_channels": w.LatentCh} {
		if p == nil {
			return nil, req(path, k)
		}
	}
	var s struct {
		Class     string `json:"_class_name"`
		Ch        *int   `json:"ch"`
		ChMult    []int  `json:"ch_mult"`
		ResBlocks *int   `json:"num_res_blocks"`
		SpaceDown []int  `json:"space_down"`
		TimeDown  []int  `json:"time_down"`
		ZCh       *int   `json:"z_channels"`
		EmbedDim  *int   `json:"embed_dim"`
		InCh      *int   `json:"in_channels"`
		OutCh     *int   `json:"out_ch"`
		Padding   string `json:"padding_mode"`
		Ratio     *int   `json:"vae_ratio"`
		RatioT    *int   `json:"vae_ratio_t"`
		ViT       *struct {
			DimHead   *int     `json:"dim_head"`
			Heads     *int     `json:"heads"`
			Layers    *int     `json:"num_layers"`
			RopeRatio *float64 `json:"rope_dim_ratio"`
			RopeTheta *float64 `json:"rope_theta"`
			Norm      string   `json:"norm_type"`
			QKNorm    string   `json:"qk_norm_type"`
			Act       string   `json:"ffn_activation_fn"`
			Gated     *bool    `json:"ffn_use_gated"`
		} `json:"vit_decoder_kwargs"`
		UseViT   *bool `json:"use_vit_decoder"`
		TIsoGN   *bool `json:"use_t_isolated_gn"`
		CausalEn *bool `json:"causal_encoder"`
	}
	if err := json.Unmarshal(sraw, &s); err != nil {
		return nil, fmt.Errorf("videovae: %s: not valid JSON: %w", spath, err)
	}
	for k, p := range map[string]*int{"ch": s.Ch, "num_res_blocks": s.ResBlocks, "z_channels": s.ZCh, "in_channels": s.InCh, "out_ch": s.OutCh} {
		if p == nil {
			return nil, req(spath, k)
		}
	}
	if s.ViT == nil {
		return nil, req(spath, "vit_decoder_kwargs")
	}
	for k, p := range map[string]*int{"dim_head": s.ViT.DimHead, "heads": s.ViT.Heads, "num_layers": s.ViT.Layers} {
		if p == nil {
			return nil, req(spath, "vit_decoder_kwargs."+k)
		}
	}
	if s.UseViT != nil && !*s.UseViT {
		return nil, fmt.Errorf("videovae: %s: use_vit_decoder is false; only the ViT decoder of MiniMax-H3 is implemented", spath)
	}
	if s.TIsoGN != nil && !*s.TIsoGN {
		return nil, fmt.Errorf("videovae: %s: use_t_isolated_gn is false; MiniMax-H3's encoder normalizes each latent frame on its own", spath)
	}
	if s.CausalEn != nil && !*s.CausalEn {
		return nil, fmt.Errorf("videovae: %s: causal_encoder is false; MiniMax-H3's encoder is causal", spath)
	}
	if s.ViT.Norm != "" && s.ViT.Norm != "rms_norm" || s.ViT.QKNorm != "" && s.ViT.QKNorm != "rms_norm" {
		return nil, fmt.Errorf("videovae: %s: vit_decoder_kwargs norm_type %q / qk_norm_type %q: want rms_norm", spath, s.ViT.Norm, s.ViT.QKNorm)
	}
	if s.ViT.Act != "" && s.ViT.Act != "silu" || s.ViT.Gated != nil && !*s.ViT.Gated {
		return nil, fmt.Errorf("videovae: %s: vit_decoder_kwargs: want a gated SiLU MLP (ffn_activation_fn silu, ffn_use_gated true)", spath)
	}
	if s.EmbedDim != nil && *s.EmbedDim != *s.ZCh {
		return nil, fmt.Errorf("videovae: %s: embed_dim %d differs from z_channels %d", spath, *s.EmbedDim, *s.ZCh)
	}
	if *w.LatentCh != *s.ZCh {
		return nil, fmt.Errorf("videovae: %s latent_channels %d differs from %s z_channels %d", path, *w.LatentCh, spath, *s.ZCh)
	}
	c := &Config{
		Layout:                Original,
		InChannels:            *s.InCh,
		OutChannels:           *s.OutCh,
		LatentChannels:        *s.ZCh,
		LayersPerBlock:        *s.ResBlocks,
		SpatialDownsample:     s.SpaceDown,
		TemporalDownsample:    s.TimeDown,
		NormGroups:            32, // fixed in the bundled norm.py
		NormEps:               1e-6,
		SpatialPaddingReflect: s.Padding == "" || s.Padding == "reflect",
		DecoderLayers:         *s.ViT.Layers,
		DecoderHeads:          *s.ViT.Heads,
		DecoderHeadDim:        *s.ViT.DimHead,
		DecoderRegisters:      4, // the release; the register_tokens tensor decides at load
		RopeTheta:             100,
		RopeDimRatio:          0.75,
		DecoderNormEps:        1e-5,
		ClipLength:            *w.Clip,
		TokenDrop:             *w.Drop,
		TileSize:              256,
		TileOverlap:           64,
	}
	if s.Padding != "" && s.Padding != "reflect" && s.Padding != "zeros" {
		return nil, fmt.Errorf("videovae: %s: padding_mode %q: want reflect or zeros", spath, s.Padding)
	}
	if s.ViT.RopeTheta != nil {
		c.RopeTheta = *s.ViT.RopeTheta
	}
	if s.ViT.RopeRatio != nil {
		c.RopeDimRatio = *s.ViT.RopeRatio
	}
	if w.Tile != nil {
		c.TileSize = *w.Tile
	}
	if w.Overlap != nil {
		c.TileOverlap = *w.Overlap
	}
	for _, m := range s.ChMult {
		c.BlockOutChannels = append(c.BlockOutChannels, *s.Ch*m)
	}
	if len(s.ChMult) == 0 {
		return nil, req(spath, "ch_mult")
	}
	if s.Ratio != nil && *s.Ratio != prod(s.SpaceDown) {
		return nil, fmt.Errorf("videovae: %s: vae_ratio %d differs from the product of space_down %v", spath, *s.Ratio, s.SpaceDown)
	}
	if s.RatioT != nil && *s.RatioT != prod(s.TimeDown) {
		return nil, fmt.Errorf("videovae: %s: vae_ratio_t %d differs from the product of time_down %v", spath, *s.RatioT, s.TimeDown)
	}
	var err error
	if c.LatentsMean, c.LatentsStd, err = configfile.LatentStats(path, w.Mean, w.Std); err != nil {
		return nil, fmt.Errorf("videovae: %w", err)
	}
	return c, nil
}

func readDiffusers(path string, raw []byte) (*Config, error) {
	var d struct {
		InCh     *int      `json:"in_channels"`
		OutCh    *int      `json:"out_channels"`
		LatentCh *int      `json:"latent_channels"`
		Blocks   []int     `json:"block_out_channels"`
		Layers   *int      `json:"layers_per_block"`
		SDown    []int     `json:"spatial_downsample_factors"`
		TDown    []int     `json:"temporal_downsample_factors"`
		Groups   *int      `json:"norm_num_groups"`
		Eps      *float64  `json:"norm_eps"`
		Padding  *string   `json:"spatial_padding_mode"`
		DLayers  *int      `json:"decoder_num_layers"`
		DHeads   *int      `json:"decoder_num_attention_heads"`
		DHeadDim *int      `json:"decoder_attention_head_dim"`
		DRegs    *int      `json:"decoder_num_register_tokens"`
		DFFNMult *int      `json:"decoder_ffn_mult"`
		DTheta   *float64  `json:"decoder_rope_theta"`
		DRatio   *float64  `json:"decoder_rope_dim_ratio"`
		DEps     *float64  `json:"decoder_norm_eps"`
		Clip     *int      `json:"clip_length"`
		Drop     *int      `json:"token_drop"`
		Mean     []float64 `json:"latents_mean"`
		Std      []float64 `json:"latents_std"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, fmt.Errorf("videovae: %s: %w", path, err)
	}
	// Defaults are AutoencoderKLMiniMaxH3.__init__'s (the released values);
	// the MLP width and the statistics come from the file or the weights.
	c := ReleasedConfig()
	c.Layout, c.DecoderFFNHidden, c.LatentsMean, c.LatentsStd = Diffusers, 0, nil, nil
	setI := func(dst *int, p *int) {
		if p != nil {
			*dst = *p
		}
	}
	setI(&c.InChannels, d.InCh)
	setI(&c.OutChannels, d.OutCh)
	setI(&c.LatentChannels, d.LatentCh)
	setI(&c.LayersPerBlock, d.Layers)
	setI(&c.NormGroups, d.Groups)
	setI(&c.DecoderLayers, d.DLayers)
	setI(&c.DecoderHeads, d.DHeads)
	setI(&c.DecoderHeadDim, d.DHeadDim)
	setI(&c.DecoderRegisters, d.DRegs)
	setI(&c.ClipLength, d.Clip)
	setI(&c.TokenDrop, d.Drop)
	if d.Blocks != nil {
		c.BlockOutChannels = d.Blocks
	}
	if d.SDown != nil {
		c.SpatialDownsample = d.SDown
	}
	if d.TDown != nil {
		c.TemporalDownsample = d.TDown
	}
	if d.Eps != nil {
		c.NormEps = float32(*d.Eps)
	}
	if d.DEps != nil {
		c.DecoderNormEps = float32(*d.DEps)
	}
	if d.DTheta != nil {
		c.RopeTheta = *d.DTheta
	}
	if d.DRatio != nil {
		c.RopeDimRatio = *d.DRatio
	}
	if d.Padding != nil {
		switch *d.Padding {
		case "reflect":
		case "zeros", "constant":
			c.SpatialPaddingReflect = false
		default:
			return nil, fmt.Errorf("videovae: %s: spatial_padding_mode %q: want reflect or zeros", path, *d.Padding)
		}
	}
	if d.DFFNMult != nil {
		c.DecoderFFNHidden = *d.DFFNMult * c.Dim()
	}
	var err error
	if c.LatentsMean, c.LatentsStd, err = configfile.LatentStats(path, d.Mean, d.Std); err != nil {
		return nil, fmt.Errorf("videovae: %w", err)
	}
	return c, nil
}

// Validate checks the geometry rules the implementation relies on.
func (c *Config) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("videovae: config: "+format, args...)
	}
	switch {
	case c.InChannels < 1 || c.OutChannels < 1 || c.LatentChannels < 1:
		return bad("channel counts in %d, out %d, latent %d must be positive", c.InChannels, c.OutChannels, c.LatentChannels)
	case len(c.BlockOutChannels) == 0:
		return bad("block_out_channels is empty")
	case len(c.SpatialDownsample) != len(c.BlockOutChannels) || len(c.TemporalDownsample) != len(c.BlockOutChannels):
		return bad("%d levels of block_out_channels but %d spatial and %d temporal downsample factors", len(c.BlockOutChannels), len(c.SpatialDownsample), len(c.TemporalDownsample))
	case c.LayersPerBlock < 1:
		return bad("layers_per_block %d must be at least 1", c.LayersPerBlock)
	case c.NormGroups < 1:
		return bad("norm_num_groups %d must be positive", c.NormGroups)
	case c.DecoderLayers < 0 || c.DecoderHeads < 1 || c.DecoderHeadDim < 1:
		return bad("decoder layers %d, heads %d, head dim %d", c.DecoderLayers, c.DecoderHeads, c.DecoderHeadDim)
	case c.ClipLength < 1 || c.TokenDrop < 0:
		return bad("clip_length %d must be ≥ 1 and token_drop %d ≥ 0", c.ClipLength, c.TokenDrop)
	// Depths and lengths far beyond any released VAE (2 resnet layers per
	// level, 4 levels, 36 decoder blocks, 17-frame clips): a corrupt value
	// would otherwise build a model of a billion layers until memory runs
	// out.
	case c.LayersPerBlock > 64 || c.DecoderLayers > 4096 || len(c.BlockOutChannels) > 16 || c.ClipLength > 1<<16:
		return bad("implausibly large: layers_per_block %d (at most 64), decoder layers %d (at most 4096), %d levels (at most 16), clip_length %d (at most 65536)",
			c.LayersPerBlock, c.DecoderLayers, len(c.BlockOutChannels), c.ClipLength)
	}
	if err := configfile.CheckLatentStats(c.LatentsMean, c.LatentsStd, c.LatentChannels); err != nil {
		return bad("%v", err)
	}
	for i, ch := range c.BlockOutChannels {
		if ch < 1 || ch%c.NormGroups != 0 {
			return bad("block_out_channels[%d] = %d is not a positive multiple of norm_num_groups %d", i, ch, c.NormGroups)
		}
		if s := c.SpatialDownsample[i]; s != 1 && s != 2 {
			return bad("spatial_downsample_factors[%d] = %d: only 1 and 2 are supported", i, s)
		}
		if t := c.TemporalDownsample[i]; t < 1 {
			return bad("temporal_downsample_factors[%d] = %d must be positive", i, t)
		}
	}
	// _decode reads windows of ⌈clip/ratio⌉ + ((−drop) mod ⌈clip/ratio⌉)
	// latents every ⌈clip/ratio⌉; they stay inside the (padded) latents only
	// when token_drop is at most one clip's latents.
	if chunk := (c.ClipLength + c.TemporalRatio() - 1) / c.TemporalRatio(); c.TokenDrop > chunk {
		return bad("token_drop %d exceeds the %d latents of one %d-frame clip (temporal ratio %d)", c.TokenDrop, chunk, c.ClipLength, c.TemporalRatio())
	}
	rot := c.RotaryDim()
	if rot < 0 || rot > c.DecoderHeadDim || rot%6 != 0 {
		return bad("rotary width %d (head dim %d × rope_dim_ratio %g) must be a multiple of 6 (3 axes × cos/sin halves) within the head", rot, c.DecoderHeadDim, c.RopeDimRatio)
	}
	if !(c.RopeTheta > 0) {
		return bad("rope_theta %g must be positive", c.RopeTheta)
	}
	r := c.SpatialRatio()
	if c.TileSize < r || c.TileSize%r != 0 || c.TileOverlap < 0 || c.TileOverlap%r != 0 || c.TileOverlap >= c.TileSize {
		return bad("tile size %d / minimum overlap %d: both must be multiples of the spatial ratio %d and the overlap smaller than the tile", c.TileSize, c.TileOverlap, r)
	}
	return nil
}
