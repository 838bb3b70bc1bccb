package audiovae

import (
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

	// Original layout: the files config.json names inside the folder.
	WeightsFile string `json:",omitempty"` // source_safetensors_path; "" means any *.safetensors
	YAMLFile    string `json:",omitempty"` // source_config_path
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

// ReadConfig reads and checks the audio VAE config of the folder dir: the
// original config.json (MiniMaxH3AudioVAE) with the metadata.json and
// config.yaml it names, or the diffusers config.json
// (AutoencoderKLMiniMaxH3Audio). The file's own class decides; a config
// naming source files is read as the original one. Each problem is a
// *configfile.Error naming the file and the field.
func ReadConfig(dir string) (*Config, error) {
	o, err := configfile.Read(filepath.Join(dir, "config.json"))
	if err != nil {
		return nil, err
	}
	c, err := configFrom(o, func(name string) (*configfile.Object, error) { return configfile.Read(filepath.Join(dir, name)) })
	if err != nil {
		return nil, err
	}
	if c.Layout == Original {
		if st, err := os.Stat(filepath.Join(dir, c.YAMLFile)); err != nil || st.IsDir() || st.Size() == 0 {
			return nil, &configfile.Error{Path: filepath.Join(dir, c.YAMLFile), Rule: "named by config.json (source_config_path) but missing or empty"}
		}
	}
	return c, nil
}

// ParseConfig is ReadConfig's rules over bytes: config.json (path names it
// in errors) and, for the original layout, metadata.json (the config.yaml
// check needs the folder and is ReadConfig's).
func ParseConfig(path string, raw []byte, metaPath string, meta []byte) (*Config, error) {
	o, err := configfile.Parse(path, raw)
	if err != nil {
		return nil, err
	}
	return configFrom(o, func(string) (*configfile.Object, error) { return configfile.Parse(metaPath, meta) })
}

// configFrom reads config.json's object o; metadata opens the metadata
// file the original layout's config names.
func configFrom(o *configfile.Object, metadata func(name string) (*configfile.Object, error)) (*Config, error) {
	// Released BigVGAN tables (diffusers' defaults and converter); the
	// statistics come from the file.
	c := ReleasedConfig()
	c.LatentsMean, c.LatentsStd = nil, nil
	var mean, std []float64
	geometry := o.Path // the file the layers' sizes come from
	if isOriginalAudio(o) {
		c.Layout = Original
		metaName := originalFrom(o, c)
		mean, std = latentStats(o, c)
		if err := o.Err(); err != nil {
			return nil, err
		}
		m, err := metadata(metaName)
		if err != nil {
			return nil, err
		}
		if err := metadataFrom(m, c); err != nil {
			return nil, err
		}
		geometry = m.Path
	} else {
		c.Layout = Diffusers
		diffusersFrom(o, c)
		mean, std = latentStats(o, c)
		checkHop(o, c)
		if err := o.Err(); err != nil {
			return nil, err
		}
	}
	c.LatentsMean, c.LatentsStd, _ = configfile.LatentStats(o.Path, mean, std)
	if err := c.Validate(); err != nil {
		return nil, &configfile.Error{Path: geometry, Rule: "inconsistent geometry", Err: err}
	}
	return c, nil
}

func isOriginalAudio(o *configfile.Object) bool {
	if c, ok := o.Class(); ok {
		return c == "MiniMaxH3AudioVAE"
	}
	return o.Has("source_metadata_path") || o.Has("source_config_path") || o.Has("source_safetensors_path")
}

func latentStats(o *configfile.Object, c *Config) (mean, std []float64) {
	mean = o.Floats("latents_mean", c.LatentChannels)
	std = o.Floats("latents_std", c.LatentChannels)
	o.CheckStd(std)
	return mean, std
}

// originalFrom reads the original config.json and returns the name of the
// metadata file it names.
func originalFrom(o *configfile.Object, c *Config) string {
	o.ClassName("MiniMaxH3AudioVAE")
	meta := o.OptStr("source_metadata_path", "metadata.json")
	c.YAMLFile = o.OptStr("source_config_path", "config.yaml")
	c.WeightsFile = o.OptStr("source_safetensors_path", "model.safetensors")
	for _, f := range []struct{ field, v string }{{"source_metadata_path", meta}, {"source_config_path", c.YAMLFile}, {"source_safetensors_path", c.WeightsFile}} {
		if o.Err() == nil && !configfile.PlainName(f.v) {
			o.Fail(f.field, "must name a file inside audio_vae/, got %q", f.v)
		}
	}
	c.SampleRate = o.PosInt("sample_rate")
	if ch := o.OptInt("output_channel", 1, 2, 2); o.Err() == nil && ch != 2 {
		o.Fail("output_channel", "is %d; the model generates stereo (2)", ch)
	}
	c.LatentChannels = o.PosInt("latent_channels")
	return meta
}

// metadataFrom reads metadata.json's constructor kwargs.
func metadataFrom(m *configfile.Object, c *Config) error {
	k := m.Sub("metadata", false).Sub("kwargs", false)
	c.EncoderDim = k.PosInt("encoder_dim")
	c.EncoderRates = k.Ints("encoder_rates", -1, 1)
	c.LatentDim = k.PosInt("latent_dim")
	c.DecoderDim = k.PosInt("decoder_dim")
	c.DecoderRates = k.Ints("decoder_rates", -1, 1)
	if v := k.PosInt("vae_latent_channels"); k.Err() == nil && v != c.LatentChannels {
		k.Fail("vae_latent_channels", "is %d but config.json's latent_channels is %d", v, c.LatentChannels)
	}
	if k.Has("sample_rate") {
		if v := k.PosInt("sample_rate"); k.Err() == nil && v != c.SampleRate {
			k.Fail("sample_rate", "is %d but config.json's sample_rate is %d", v, c.SampleRate)
		}
	}
	if t := k.OptStr("decoder_type", "bigvgan"); k.Err() == nil && t != "bigvgan" {
		k.Fail("decoder_type", "is %q; only bigvgan is implemented", t)
	}
	if !k.OptBool("attn_proj", true) && k.Err() == nil {
		k.Fail("attn_proj", "is false; MiniMax-H3's encoder has the attention projection")
	}
	// BigVGAN's upsampling kernels are not stored: 2u − u mod 2 (converter).
	c.DecoderKernels = nil
	for _, u := range c.DecoderRates {
		c.DecoderKernels = append(c.DecoderKernels, 2*u-u%2)
	}
	checkHop(k, c)
	return m.Err()
}

func diffusersFrom(o *configfile.Object, c *Config) {
	o.ClassName("AutoencoderKLMiniMaxH3Audio")
	c.SampleRate = o.PosInt(o.FirstOr("sampling_rate", "sample_rate"))
	c.LatentChannels = o.PosInt("latent_channels")
	c.EncoderDim = o.PosInt("encoder_dim")
	c.EncoderRates = o.Ints("encoder_rates", -1, 1)
	c.LatentDim = o.PosInt("latent_dim")
	c.DecoderDim = o.PosInt("decoder_dim")
	c.DecoderRates = o.Ints("decoder_rates", -1, 1)
	c.DecoderKernels = o.Ints("decoder_kernel_sizes", len(c.DecoderRates), 1)
	c.Heads = o.OptInt("num_attention_heads", 1, 1<<20, c.Heads)
	if o.Has("resblock_kernel_sizes") {
		c.ResblockKernels = o.Ints("resblock_kernel_sizes", -1, 1)
	}
	if o.Has("resblock_dilation_sizes") {
		var d [][]int
		if o.Decode("resblock_dilation_sizes", &d, "a list of lists of integers") {
			c.ResblockDilations = d
		}
	}
}

func checkHop(o *configfile.Object, c *Config) {
	if o.Err() != nil {
		return
	}
	hop, d := configfile.Product(c.EncoderRates), configfile.Product(c.DecoderRates)
	if d != hop {
		o.Fail("decoder_rates", "multiply to %d but the encoder rates multiply to %d; encoder and decoder must agree on the hop", d, hop)
	}
}

// Summary is the one-line description the snapshot report prints.
func (c *Config) Summary() string {
	return fmt.Sprintf("%d latent channels, %d Hz, hop %d (%g latents/s)",
		c.LatentChannels, c.SampleRate, c.Hop(), float64(c.SampleRate)/float64(c.Hop()))
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
