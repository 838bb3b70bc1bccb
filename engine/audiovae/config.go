package audiovae

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"h3studio/engine/configfile"
)

// Layout is the on-disk form of the audio VAE: the snapshot layouts.
type Layout = configfile.Layout

// The released layouts (H3-ENCODERS-VAES.md §2, §9.1). Tensor names are
// identical in both; only the configs differ.
const (
	// Original: audio_vae/config.json (MiniMaxH3AudioVAE wrapper),
	// metadata.json (DAC kwargs), model.safetensors. BigVGAN's fixed tables
	// are not stored: kernels 2u − u mod 2, resblocks [3, 7, 11] × [1, 3, 5],
	// 8 attention heads (diffusers' converter).
	Original = configfile.Original
	// Diffusers: audio_vae/config.json (AutoencoderKLMiniMaxH3Audio) with
	// every value, diffusion_pytorch_model.safetensors.
	Diffusers = configfile.Diffusers
)

// Config is the audio VAE geometry. Field names follow diffusers'
// AutoencoderKLMiniMaxH3Audio.
type Config struct {
	Layout            Layout
	EncoderDim        int
	EncoderRates      []int
	LatentDim         int // encoder trunk / decoder input width (2048)
	LatentChannels    int // 32
	Heads             int // pre_block attention heads (8)
	DecoderDim        int // BigVGAN initial channels (1024)
	DecoderRates      []int
	DecoderKernels    []int
	ResblockKernels   []int
	ResblockDilations [][]int
	SampleRate        int
	LatentsMean       []float32
	LatentsStd        []float32
}

// Hop is the samples per latent frame (800 in the release).
func (c *Config) Hop() int {
	p := 1
	for _, r := range c.EncoderRates {
		p *= r
	}
	return p
}

// ReleasedConfig is the released audio VAE (H3-ENCODERS-VAES.md §9):
// DAC encoder_dim 64, rates [2, 4, 4, 5, 5] (hop 800), latent_dim 2048,
// 32 latent channels, 8 heads, the BigVGAN decoder (decoder_dim 1024, rates
// [5, 5, 2, 2, 2, 2, 2], kernels 2u − u mod 2, resblocks [3, 7, 11] ×
// [1, 3, 5]) at 32 kHz and the released latent statistics, in the original
// layout. For planning without the files.
func ReleasedConfig() *Config {
	c := &Config{
		Layout: Original, EncoderDim: 64, EncoderRates: []int{2, 4, 4, 5, 5}, LatentDim: 2048, LatentChannels: 32, Heads: 8,
		DecoderDim: 1024, DecoderRates: []int{5, 5, 2, 2, 2, 2, 2},
		ResblockKernels: []int{3, 7, 11}, ResblockDilations: [][]int{{1, 3, 5}, {1, 3, 5}, {1, 3, 5}},
		SampleRate:  32000,
		LatentsMean: append([]float32(nil), releasedMean[:]...),
		LatentsStd:  append([]float32(nil), releasedStd[:]...),
	}
	for _, u := range c.DecoderRates {
		c.DecoderKernels = append(c.DecoderKernels, 2*u-u%2)
	}
	return c
}

// ReadConfig reads the config of the audio VAE folder dir (either layout).
func ReadConfig(dir string) (*Config, error) {
	path := filepath.Join(dir, "config.json")
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("audiovae: %w", err)
	}
	var head struct {
		Class    string `json:"_class_name"`
		Metadata string `json:"source_metadata_path"`
	}
	json.Unmarshal(raw, &head)
	var mpath string
	var meta []byte
	if head.Class == "MiniMaxH3AudioVAE" {
		name := "metadata.json"
		if head.Metadata != "" {
			name = filepath.Base(head.Metadata)
		}
		mpath = filepath.Join(dir, name)
		if meta, err = os.ReadFile(mpath); err != nil {
			return nil, fmt.Errorf("audiovae: original layout: %w", err)
		}
	}
	return ParseConfig(path, raw, mpath, meta)
}

// ParseConfig parses config.json (path names it in errors) and, for the
// original layout, metadata.json, then validates the result.
func ParseConfig(path string, raw []byte, metaPath string, meta []byte) (*Config, error) {
	var d struct {
		Class     string    `json:"_class_name"`
		EncDim    *int      `json:"encoder_dim"`
		EncRates  []int     `json:"encoder_rates"`
		LatentDim *int      `json:"latent_dim"`
		LatentCh  *int      `json:"latent_channels"`
		Heads     *int      `json:"num_attention_heads"`
		DecDim    *int      `json:"decoder_dim"`
		DecRates  []int     `json:"decoder_rates"`
		DecK      []int     `json:"decoder_kernel_sizes"`
		RBK       []int     `json:"resblock_kernel_sizes"`
		RBD       [][]int   `json:"resblock_dilation_sizes"`
		SR        *int      `json:"sampling_rate"`
		SR2       *int      `json:"sample_rate"`
		Mean      []float64 `json:"latents_mean"`
		Std       []float64 `json:"latents_std"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, fmt.Errorf("audiovae: %s: not valid JSON: %w", path, err)
	}
	// Released BigVGAN tables (diffusers' defaults and converter); the
	// statistics come from the file.
	c := ReleasedConfig()
	c.Layout, c.LatentsMean, c.LatentsStd = 0, nil, nil
	switch d.Class {
	case "AutoencoderKLMiniMaxH3Audio":
		c.Layout = Diffusers
		setI(&c.EncoderDim, d.EncDim)
		setI(&c.LatentDim, d.LatentDim)
		setI(&c.LatentChannels, d.LatentCh)
		setI(&c.Heads, d.Heads)
		setI(&c.DecoderDim, d.DecDim)
		setI(&c.SampleRate, d.SR)
		if d.EncRates != nil {
			c.EncoderRates = d.EncRates
		}
		if d.DecRates != nil {
			c.DecoderRates = d.DecRates
			if d.DecK == nil {
				return nil, fmt.Errorf("audiovae: %s: decoder_rates given without decoder_kernel_sizes", path)
			}
		}
		if d.DecK != nil {
			c.DecoderKernels = d.DecK
		}
		if d.RBK != nil {
			c.ResblockKernels = d.RBK
		}
		if d.RBD != nil {
			c.ResblockDilations = d.RBD
		}
	case "MiniMaxH3AudioVAE":
		c.Layout = Original
		setI(&c.LatentChannels, d.LatentCh)
		setI(&c.SampleRate, d.SR2)
		if err := parseMetadata(metaPath, meta, c); err != nil {
			return nil, err
		}
		if d.SR2 != nil && *d.SR2 != c.SampleRate {
			return nil, fmt.Errorf("audiovae: %s: sample_rate %d differs from %s's sample_rate %d", path, *d.SR2, metaPath, c.SampleRate)
		}
	default:
		return nil, fmt.Errorf("audiovae: %s: _class_name %q is neither MiniMaxH3AudioVAE (original layout) nor AutoencoderKLMiniMaxH3Audio (diffusers)", path, d.Class)
	}
	var err error
	if c.LatentsMean, c.LatentsStd, err = configfile.LatentStats(path, d.Mean, d.Std); err != nil {
		return nil, fmt.Errorf("audiovae: %w", err)
	}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("%w (%s)", err, path)
	}
	return c, nil
}

func setI(dst *int, p *int) {
	if p != nil {
		*dst = *p
	}
}

func parseMetadata(path string, raw []byte, c *Config) error {
	var m struct {
		Metadata struct {
			Kwargs struct {
				AttnProj  *bool  `json:"attn_proj"`
				DecDim    *int   `json:"decoder_dim"`
				DecRates  []int  `json:"decoder_rates"`
				DecType   string `json:"decoder_type"`
				EncDim    *int   `json:"encoder_dim"`
				EncRates  []int  `json:"encoder_rates"`
				LatentDim *int   `json:"latent_dim"`
				LatentCh  *int   `json:"vae_latent_channels"`
				SR        *int   `json:"sample_rate"`
			} `json:"kwargs"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return fmt.Errorf("audiovae: %s: not valid JSON: %w", path, err)
	}
	k := m.Metadata.Kwargs
	for name, p := range map[string]*int{"decoder_dim": k.DecDim, "encoder_dim": k.EncDim, "latent_dim": k.LatentDim} {
		if p == nil {
			return fmt.Errorf("audiovae: %s: metadata.kwargs lacks %q", path, name)
		}
	}
	if k.DecRates == nil || k.EncRates == nil {
		return fmt.Errorf("audiovae: %s: metadata.kwargs lacks encoder_rates or decoder_rates", path)
	}
	if k.DecType != "" && k.DecType != "bigvgan" {
		return fmt.Errorf("audiovae: %s: decoder_type %q: only bigvgan is implemented", path, k.DecType)
	}
	if k.AttnProj != nil && !*k.AttnProj {
		return fmt.Errorf("audiovae: %s: attn_proj false: MiniMax-H3's encoder has the attention projection", path)
	}
	if k.LatentCh != nil && *k.LatentCh != c.LatentChannels {
		return fmt.Errorf("audiovae: %s: vae_latent_channels %d differs from config.json latent_channels %d", path, *k.LatentCh, c.LatentChannels)
	}
	c.DecoderDim, c.EncoderDim, c.LatentDim = *k.DecDim, *k.EncDim, *k.LatentDim
	c.DecoderRates, c.EncoderRates = k.DecRates, k.EncRates
	setI(&c.SampleRate, k.SR)
	// BigVGAN's upsampling kernels are not stored: 2u − u mod 2 (converter).
	c.DecoderKernels = nil
	for _, u := range c.DecoderRates {
		c.DecoderKernels = append(c.DecoderKernels, 2*u-u%2)
	}
	return nil
}

// Validate checks the rules the implementation relies on.
func (c *Config) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("audiovae: config: "+format, args...)
	}
	if c.EncoderDim < 1 || c.LatentDim < 1 || c.LatentChannels < 1 || c.DecoderDim < 1 || c.Heads < 1 {
		return bad("encoder_dim %d, latent_dim %d, latent_channels %d, decoder_dim %d, heads %d must be positive", c.EncoderDim, c.LatentDim, c.LatentChannels, c.DecoderDim, c.Heads)
	}
	if len(c.EncoderRates) == 0 || len(c.DecoderRates) == 0 {
		return bad("encoder_rates %v and decoder_rates %v must be non-empty", c.EncoderRates, c.DecoderRates)
	}
	dp := 1
	for i, u := range c.DecoderRates {
		dp *= u
		if i >= len(c.DecoderKernels) {
			return bad("%d decoder rates but %d kernel sizes", len(c.DecoderRates), len(c.DecoderKernels))
		}
		if k := c.DecoderKernels[i]; u < 1 || k < u || (k-u)%2 != 0 {
			return bad("upsampler %d: kernel %d and rate %d must satisfy kernel ≥ rate with an even difference (output = rate × input)", i, k, u)
		}
	}
	if len(c.DecoderKernels) != len(c.DecoderRates) {
		return bad("%d decoder rates but %d kernel sizes", len(c.DecoderRates), len(c.DecoderKernels))
	}
	for _, r := range c.EncoderRates {
		if r < 1 {
			return bad("encoder rate %d must be positive", r)
		}
	}
	if dp != c.Hop() {
		return bad("decoder_rates %v upsample by %d, the encoder hop is %d", c.DecoderRates, dp, c.Hop())
	}
	if c.DecoderDim>>len(c.DecoderRates) < 1 {
		return bad("decoder_dim %d halves to nothing over %d stages", c.DecoderDim, len(c.DecoderRates))
	}
	if c.LatentDim%c.Heads != 0 {
		return bad("latent_dim %d is not divisible by %d heads", c.LatentDim, c.Heads)
	}
	if c.LatentDim%c.LatentChannels != 0 {
		return bad("latent_dim %d must be a multiple of latent_channels %d", c.LatentDim, c.LatentChannels)
	}
	if len(c.ResblockKernels) == 0 || len(c.ResblockKernels) != len(c.ResblockDilations) {
		return bad("%d resblock kernel sizes and %d dilation lists", len(c.ResblockKernels), len(c.ResblockDilations))
	}
	for i, k := range c.ResblockKernels {
		if k < 1 || k%2 == 0 {
			return bad("resblock kernel %d must be odd", k)
		}
		if len(c.ResblockDilations[i]) == 0 {
			return bad("resblock %d has no dilations", i)
		}
	}
	if err := configfile.CheckLatentStats(c.LatentsMean, c.LatentsStd, c.LatentChannels); err != nil {
		return bad("%v", err)
	}
	if c.SampleRate < 1 {
		return bad("sample rate %d", c.SampleRate)
	}
	return nil
}
