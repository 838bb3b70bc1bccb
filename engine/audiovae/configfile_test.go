package audiovae

import (
	"testing"

	"h3studio/engine/configfile"
	"h3studio/engine/configfile/configtest"
)

// configFileParsers read each of the package's config files from bytes; the
// examples are the synthetic snapshot's (engine/snapshot/testdata).
var configFileParsers = []configtest.Parser{
	{Name: "audio_original", File: "../snapshot/testdata/original/audio_vae/config.json", Parse: func(o *configfile.Object) (any, error) { return audioOriginalFrom(o, "audio_vae") }},
	{Name: "audio_metadata", File: "../snapshot/testdata/original/audio_vae/metadata.json", Parse: func(o *configfile.Object) (any, error) {
		c := &ConfigFile{LatentChannels: 32, SampleRate: 32000}
		return c, audioMetadataFrom(o, c)
	}},
	{Name: "audio_diffusers", File: "../snapshot/testdata/diffusers/audio_vae/config.json", Parse: func(o *configfile.Object) (any, error) { return audioDiffusersFrom(o) }},
}

func TestConfigFilesValid(t *testing.T) { configtest.CheckValid(t, configFileParsers) }

// Every field rule of the config file readers, each naming the field.
func TestConfigFileRules(t *testing.T) {
	configtest.CheckRules(t, configFileParsers, []configtest.Rule{
		{Parser: "audio_original", Mutate: configtest.Set("output_channel", 1), Field: "output_channel", Rule: "stereo"},
		{Parser: "audio_original", Mutate: configtest.Set("source_metadata_path", ".."), Field: "source_metadata_path", Rule: "must name a file"},
		{Parser: "audio_original", Mutate: configtest.Del("sample_rate"), Field: "sample_rate", Rule: "is missing"},
		{Parser: "audio_metadata", Mutate: configtest.Nested("metadata", "kwargs", map[string]any{"encoder_dim": 8}), Field: "metadata.kwargs.encoder_rates", Rule: "is missing"},
		{Parser: "audio_diffusers", Mutate: configtest.Set("decoder_rates", []any{2, 2}), Field: "decoder_rates", Rule: "must agree on the hop"},
		{Parser: "audio_diffusers", Mutate: configtest.Set("decoder_kernel_sizes", []any{9}), Field: "decoder_kernel_sizes", Rule: "must list 2 integers"},
		{Parser: "audio_diffusers", Mutate: configtest.Set("latents_mean", []any{1.0}), Field: "latents_mean", Rule: "must list 32 numbers"},
	})
}

// FuzzConfigFiles feeds arbitrary bytes to every config file reader: never
// a panic, and an error is always a *configfile.Error naming the file.
func FuzzConfigFiles(f *testing.F) { configtest.Fuzz(f, configFileParsers) }
