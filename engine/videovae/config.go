package videovae

import (
	"fmt"
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
	// WeightsFile is the weights file the original wrapper names
	// (source_safetensors_path, model.safetensors by default); "" for the
	// diffusers layout, whose folder's shards are the weights.
	WeightsFile string
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

// ReadConfig reads and validates the config of a video VAE component.
// configDir holds config.json (the wrapper for the original layout, the
// diffusers config otherwise); weightsDir holds the weights and, for the
// original layout, the AutoencoderKLLegacy source config.json. A problem
// with a file's field is a *configfile.Error naming the file and field.
func ReadConfig(configDir, weightsDir string) (*Config, error) {
	o, err := configfile.Read(filepath.Join(configDir, "config.json"))
	if err != nil {
		return nil, err
	}
	return fromObjects(o, func() (*configfile.Object, error) {
		return configfile.Read(filepath.Join(weightsDir, "config.json"))
	})
}

// ParseConfig is ReadConfig over bytes: config.json (path names it in
// errors) and, for the original layout's wrapper, the AutoencoderKLLegacy
// source config.
func ParseConfig(path string, raw []byte, sourcePath string, source []byte) (*Config, error) {
	o, err := configfile.Parse(path, raw)
	if err != nil {
		return nil, err
	}
	return fromObjects(o, func() (*configfile.Object, error) { return configfile.Parse(sourcePath, source) })
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

// isOriginal reports whether config.json is the original wrapper: its
// class says so, or, without a known class, it has the wrapper's keys.
func isOriginal(o *configfile.Object) bool {
	switch c, _ := o.Class(); c {
	case "MiniMaxH3VideoVAE":
		return true
	case "AutoencoderKLMiniMaxH3":
		return false
	}
	return o.Has("source_path") || o.Has("vae_clip_length") || o.Has("vae_token_drop")
}

// fromObjects reads config.json, and for the original layout the source
// config that source() reads, into a validated Config.
func fromObjects(o *configfile.Object, source func() (*configfile.Object, error)) (*Config, error) {
	var c *Config
	if isOriginal(o) {
		c = wrapperFrom(o)
		if err := o.Err(); err != nil {
			return nil, err
		}
		s, err := source()
		if err != nil {
			return nil, err
		}
		if sourceFrom(s, c); s.Err() != nil {
			return nil, s.Err()
		}
	} else if c = diffusersFrom(o); o.Err() != nil {
		return nil, o.Err()
	}
	if err := c.checkChunking(o); err != nil {
		return nil, err
	}
	if err := c.check(); err != nil {
		return nil, &configfile.Error{Path: o.Path, Rule: err.Error()}
	}
	return c, nil
}

// requireClass records a missing _class_name (ClassName checks a present one).
func requireClass(o *configfile.Object, class string) {
	if o.ClassName(class); o.Err() == nil && !o.Has("_class_name") {
		o.Fail("_class_name", "is missing; this file must describe %s", class)
	}
}

// wrapperFrom reads the original wrapper config (MiniMaxH3VideoVAE).
func wrapperFrom(o *configfile.Object) *Config {
	c := ReleasedConfig()
	c.Layout = Original
	requireClass(o, "MiniMaxH3VideoVAE")
	src := o.OptStr("source_path", "source")
	c.WeightsFile = o.OptStr("source_safetensors_path", "model.safetensors")
	if o.Err() == nil && !configfile.PlainName(src) {
		o.Fail("source_path", "must name a folder inside video_vae/, got %q", src)
	}
	if o.Err() == nil && !configfile.PlainName(c.WeightsFile) {
		o.Fail("source_safetensors_path", "must name a file inside the source folder, got %q", c.WeightsFile)
	}
	c.LatentChannels = o.PosInt("latent_channels")
	c.LatentsMean, c.LatentsStd = latentStats(o, c.LatentChannels)
	c.ClipLength = o.IntIn("vae_clip_length", 1, 1<<16)
	c.TokenDrop = o.IntIn("vae_token_drop", 0, 1<<16)
	c.TileSize = o.OptInt("vae_tile_size", 16, 1<<16, 256)
	c.TileOverlap = o.OptInt("vae_tile_overlap_min", 0, 1<<16, 64)
	return c
}

// latentStats reads latents_mean and latents_std, one per latent channel.
func latentStats(o *configfile.Object, channels int) (mean, std []float32) {
	m := o.Floats("latents_mean", channels)
	s := o.Floats("latents_std", channels)
	o.CheckStd(s)
	return f32s(m), f32s(s)
}

// f32s converts as torch.tensor(list) does: the nearest float32 of each.
func f32s(v []float64) []float32 {
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x)
	}
	return out
}

// sourceFrom reads the original source config (AutoencoderKLLegacy) into c,
// which holds the wrapper's values.
func sourceFrom(s *configfile.Object, c *Config) {
	s.ClassName("AutoencoderKLLegacy")
	if e := s.PosInt("embed_dim"); s.Err() == nil && e != c.LatentChannels {
		s.Fail("embed_dim", "is %d but the wrapper's latent_channels is %d", e, c.LatentChannels)
	}
	ch := s.PosInt("ch")
	mult := s.Ints("ch_mult", -1, 1)
	c.SpatialDownsample = s.Ints("space_down", -1, 1)
	c.TemporalDownsample = s.Ints("time_down", -1, 1)
	spatial, temporal := configfile.Product(c.SpatialDownsample), configfile.Product(c.TemporalDownsample)
	if s.Has("vae_ratio") {
		if r := s.PosInt("vae_ratio"); s.Err() == nil && r != spatial {
			s.Fail("vae_ratio", "is %d but space_down multiplies to %d", r, spatial)
		}
	}
	if s.Has("vae_ratio_t") {
		if r := s.PosInt("vae_ratio_t"); s.Err() == nil && r != temporal {
			s.Fail("vae_ratio_t", "is %d but time_down multiplies to %d", r, temporal)
		}
	}
	if !s.OptBool("use_vit_decoder", true) && s.Err() == nil {
		s.Fail("use_vit_decoder", "is false; only the ViT decoder of MiniMax-H3 is implemented")
	}
	k := s.Sub("vit_decoder_kwargs", false)
	c.DecoderLayers = k.PosInt("num_layers")
	c.DecoderHeads = k.PosInt("heads")
	c.DecoderHeadDim = k.PosInt("dim_head")
	c.RopeTheta = k.PosFloat("rope_theta")
	c.RopeDimRatio = k.PosFloat("rope_dim_ratio")
	for _, f := range []string{"norm_type", "qk_norm_type"} {
		if v := k.OptStr(f, "rms_norm"); k.Err() == nil && v != "rms_norm" {
			k.Fail(f, "is %q; want rms_norm", v)
		}
	}
	if v := k.OptStr("ffn_activation_fn", "silu"); k.Err() == nil && v != "silu" {
		k.Fail("ffn_activation_fn", "is %q; want silu (a gated SiLU MLP)", v)
	}
	if !k.OptBool("ffn_use_gated", true) && k.Err() == nil {
		k.Fail("ffn_use_gated", "is false; want a gated SiLU MLP")
	}
	c.LayersPerBlock = s.PosInt("num_res_blocks")
	if z := s.PosInt("z_channels"); s.Err() == nil && z != c.LatentChannels {
		s.Fail("z_channels", "is %d but the wrapper's latent_channels is %d", z, c.LatentChannels)
	}
	c.InChannels = s.PosInt("in_channels")
	c.OutChannels = s.PosInt("out_ch")
	switch p := s.OptStr("padding_mode", "reflect"); {
	case s.Err() != nil:
	case p == "reflect" || p == "zeros":
		c.SpatialPaddingReflect = p == "reflect"
	default:
		s.Fail("padding_mode", "is %q; want reflect or zeros", p)
	}
	if !s.OptBool("use_t_isolated_gn", true) && s.Err() == nil {
		s.Fail("use_t_isolated_gn", "is false; MiniMax-H3's encoder normalizes each latent frame on its own")
	}
	if !s.OptBool("causal_encoder", true) && s.Err() == nil {
		s.Fail("causal_encoder", "is false; MiniMax-H3's encoder is causal")
	}
	c.BlockOutChannels = nil
	for _, m := range mult {
		c.BlockOutChannels = append(c.BlockOutChannels, ch*m)
	}
	// The release's register count; the register_tokens tensor decides at
	// load, as the decoder MLP width does (ff.w1's shape).
	c.DecoderRegisters, c.DecoderFFNHidden = 4, 0
}

// diffusersFrom reads vae/config.json (AutoencoderKLMiniMaxH3). Absent
// optional keys take AutoencoderKLMiniMaxH3.__init__'s defaults, the
// released values; the MLP width comes from the file or the weights.
func diffusersFrom(o *configfile.Object) *Config {
	c := ReleasedConfig()
	c.Layout, c.DecoderFFNHidden = Diffusers, 0
	requireClass(o, "AutoencoderKLMiniMaxH3")
	c.LatentChannels = o.PosInt("latent_channels")
	c.LatentsMean, c.LatentsStd = latentStats(o, c.LatentChannels)
	c.BlockOutChannels = o.Ints("block_out_channels", -1, 1)
	c.LayersPerBlock = o.PosInt("layers_per_block")
	c.SpatialDownsample = o.Ints("spatial_downsample_factors", -1, 1)
	c.TemporalDownsample = o.Ints("temporal_downsample_factors", -1, 1)
	c.DecoderLayers = o.PosInt("decoder_num_layers")
	c.DecoderHeads = o.PosInt("decoder_num_attention_heads")
	c.DecoderHeadDim = o.PosInt("decoder_attention_head_dim")
	c.ClipLength = o.OptInt("clip_length", 1, 1<<16, c.ClipLength)
	c.TokenDrop = o.OptInt("token_drop", 0, 1<<16, c.TokenDrop)
	const most = 1 << 40
	c.InChannels = o.OptInt("in_channels", 1, most, c.InChannels)
	c.OutChannels = o.OptInt("out_channels", 1, most, c.OutChannels)
	c.NormGroups = o.OptInt("norm_num_groups", 1, most, c.NormGroups)
	c.NormEps = float32(o.OptFloat("norm_eps", float64(c.NormEps)))
	c.DecoderRegisters = o.OptInt("decoder_num_register_tokens", 0, most, c.DecoderRegisters)
	c.DecoderNormEps = float32(o.OptFloat("decoder_norm_eps", float64(c.DecoderNormEps)))
	c.RopeTheta = o.OptFloat("decoder_rope_theta", c.RopeTheta)
	c.RopeDimRatio = o.OptFloat("decoder_rope_dim_ratio", c.RopeDimRatio)
	switch p := o.OptStr("spatial_padding_mode", "reflect"); {
	case o.Err() != nil:
	case p == "reflect" || p == "zeros" || p == "constant":
		c.SpatialPaddingReflect = p == "reflect"
	default:
		o.Fail("spatial_padding_mode", "is %q; want reflect or zeros", p)
	}
	if o.Has("decoder_ffn_mult") {
		c.DecoderFFNHidden = o.IntIn("decoder_ffn_mult", 1, 64) * c.Dim()
	}
	return c
}

// checkChunking checks the chunking and tiling values of config.json (o)
// against the compression factors, naming the file's field: token_drop at
// most one clip's latents (its decode windows would read past the
// latents); the original wrapper's tile size a multiple of the spatial
// ratio and its minimum overlap a smaller one. Validate holds the same
// rules for a Config built in code.
func (c *Config) checkChunking(o *configfile.Object) error {
	drop, tile, overlap := "vae_token_drop", "vae_tile_size", "vae_tile_overlap_min"
	if c.Layout != Original {
		drop = "token_drop"
	}
	fail := func(field, format string, args ...any) error {
		return &configfile.Error{Path: o.Path, Field: field, Rule: fmt.Sprintf(format, args...)}
	}
	if len(c.TemporalDownsample) > 0 && c.TokenDrop > c.clipLatents() {
		return fail(drop, "%d exceeds the %d latents of one %d-frame clip (temporal compression %d)", c.TokenDrop, c.clipLatents(), c.ClipLength, c.TemporalRatio())
	}
	if r := c.SpatialRatio(); c.Layout == Original && r > 0 {
		if c.TileSize%r != 0 {
			return fail(tile, "%d is not a multiple of the spatial compression %d", c.TileSize, r)
		}
		if c.TileOverlap%r != 0 || c.TileOverlap >= c.TileSize {
			return fail(overlap, "%d must be a multiple of the spatial compression %d smaller than the tile size %d", c.TileOverlap, r, c.TileSize)
		}
	}
	return nil
}

// clipLatents is the latents of one clip, ⌈clip/temporal ratio⌉.
func (c *Config) clipLatents() int {
	return (c.ClipLength + c.TemporalRatio() - 1) / c.TemporalRatio()
}

// Summary is the one-line description the snapshot report prints.
func (c *Config) Summary() string {
	return fmt.Sprintf("%d latent channels, %d× spatial, %d× temporal, %d-layer ViT decoder",
		c.LatentChannels, c.SpatialRatio(), c.TemporalRatio(), c.DecoderLayers)
}

// Validate checks the geometry rules the implementation relies on.
func (c *Config) Validate() error {
	if err := c.check(); err != nil {
		return fmt.Errorf("videovae: config: %w", err)
	}
	return nil
}

// check is Validate's rules, the error unprefixed: ReadConfig reports it
// as a problem of the config file.
func (c *Config) check() error {
	bad := fmt.Errorf
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
	if chunk := c.clipLatents(); c.TokenDrop > chunk {
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
