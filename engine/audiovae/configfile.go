package audiovae

import (
	"fmt"
	"os"
	"path/filepath"

	"h3studio/engine/configfile"
)

// ConfigFile is the audio VAE's configuration files as the snapshot report
// reads and checks them: the original config.json with its metadata.json
// (constructor kwargs) and config.yaml, or the diffusers config.json. Each
// problem is a *configfile.Error naming the file and the field.
type ConfigFile struct {
	Path   string
	Layout Layout

	SampleRate              int
	LatentChannels          int
	LatentsMean, LatentsStd []float64
	EncoderDim              int
	EncoderRates            []int
	LatentDim               int
	DecoderDim              int
	DecoderRates            []int
	HopLength               int // samples per latent: the product of the encoder rates (800 released)

	// Original layout: the files config.json names.
	MetadataPath, YAMLPath string
	WeightsFile            string // "" means any *.safetensors in the folder
}

// ReadConfigFile reads the audio VAE config of an audio_vae/ folder: the
// original config.json (MiniMaxH3AudioVAE) with the metadata.json and
// config.yaml it names, or the diffusers config.json
// (AutoencoderKLMiniMaxH3Audio). The file's own class decides; a config
// naming source files is read as the original one.
func ReadConfigFile(dir string, layout Layout) (*ConfigFile, error) {
	o, err := configfile.Read(filepath.Join(dir, "config.json"))
	if err != nil {
		return nil, err
	}
	if !isOriginalAudio(o) {
		return audioDiffusersFrom(o)
	}
	c, err := audioOriginalFrom(o, dir)
	if err != nil {
		return nil, err
	}
	if err := configfile.ReadInto(c.MetadataPath, func(m *configfile.Object) error { return audioMetadataFrom(m, c) }); err != nil {
		return nil, err
	}
	if st, err := os.Stat(c.YAMLPath); err != nil || st.IsDir() || st.Size() == 0 {
		return nil, &configfile.Error{Path: c.YAMLPath, Rule: "named by config.json (source_config_path) but missing or empty"}
	}
	return c, nil
}

func isOriginalAudio(o *configfile.Object) bool {
	if c, ok := o.Class(); ok {
		return c == "MiniMaxH3AudioVAE"
	}
	return o.Has("source_metadata_path") || o.Has("source_config_path") || o.Has("source_safetensors_path")
}

func audioOriginalFrom(o *configfile.Object, dir string) (*ConfigFile, error) {
	c := &ConfigFile{Path: o.Path, Layout: Original}
	o.ClassName("MiniMaxH3AudioVAE")
	meta := o.OptStr("source_metadata_path", "metadata.json")
	yaml := o.OptStr("source_config_path", "config.yaml")
	c.WeightsFile = o.OptStr("source_safetensors_path", "model.safetensors")
	for _, f := range []struct{ field, v string }{{"source_metadata_path", meta}, {"source_config_path", yaml}, {"source_safetensors_path", c.WeightsFile}} {
		if o.Err() == nil && !configfile.PlainName(f.v) {
			o.Fail(f.field, "must name a file inside audio_vae/, got %q", f.v)
		}
	}
	c.MetadataPath, c.YAMLPath = filepath.Join(dir, meta), filepath.Join(dir, yaml)
	c.SampleRate = o.PosInt("sample_rate")
	if ch := o.OptInt("output_channel", 1, 2, 2); o.Err() == nil && ch != 2 {
		o.Fail("output_channel", "is %d; the model generates stereo (2)", ch)
	}
	c.LatentChannels = o.PosInt("latent_channels")
	c.LatentsMean = o.Floats("latents_mean", c.LatentChannels)
	c.LatentsStd = o.Floats("latents_std", c.LatentChannels)
	o.CheckStd(c.LatentsStd)
	if err := o.Err(); err != nil {
		return nil, err
	}
	return c, nil
}

// audioMetadataFrom reads metadata.json's constructor kwargs.
func audioMetadataFrom(m *configfile.Object, c *ConfigFile) error {
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
	checkHop(k, c)
	return m.Err()
}

func audioDiffusersFrom(o *configfile.Object) (*ConfigFile, error) {
	c := &ConfigFile{Path: o.Path, Layout: Diffusers}
	o.ClassName("AutoencoderKLMiniMaxH3Audio")
	c.SampleRate = o.PosInt(o.FirstOr("sampling_rate", "sample_rate"))
	c.LatentChannels = o.PosInt("latent_channels")
	c.LatentsMean = o.Floats("latents_mean", c.LatentChannels)
	c.LatentsStd = o.Floats("latents_std", c.LatentChannels)
	o.CheckStd(c.LatentsStd)
	c.EncoderDim = o.PosInt("encoder_dim")
	c.EncoderRates = o.Ints("encoder_rates", -1, 1)
	c.LatentDim = o.PosInt("latent_dim")
	c.DecoderDim = o.PosInt("decoder_dim")
	c.DecoderRates = o.Ints("decoder_rates", -1, 1)
	if o.Has("decoder_kernel_sizes") {
		o.Ints("decoder_kernel_sizes", len(c.DecoderRates), 1)
	}
	checkHop(o, c)
	if err := o.Err(); err != nil {
		return nil, err
	}
	return c, nil
}

func checkHop(o *configfile.Object, c *ConfigFile) {
	if o.Err() != nil {
		return
	}
	c.HopLength = configfile.Product(c.EncoderRates)
	if d := configfile.Product(c.DecoderRates); d != c.HopLength {
		o.Fail("decoder_rates", "multiply to %d but the encoder rates multiply to %d; encoder and decoder must agree on the hop", d, c.HopLength)
	}
}

// Summary is the one-line description the snapshot report prints.
func (c *ConfigFile) Summary() string {
	return fmt.Sprintf("%d latent channels, %d Hz, hop %d (%g latents/s)",
		c.LatentChannels, c.SampleRate, c.HopLength, float64(c.SampleRate)/float64(c.HopLength))
}
