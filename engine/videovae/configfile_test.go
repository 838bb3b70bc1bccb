package videovae

import (
	"errors"
	"os"
	"strings"
	"testing"

	"h3studio/engine/configfile"
	"h3studio/engine/configfile/configtest"
	"h3studio/engine/testkit"
)

// configFileParsers read each of the package's config files from bytes; the
// examples are the synthetic snapshot's (engine/snapshot/testdata).
var configFileParsers = []configtest.Parser{
	{Name: "video_wrapper", File: "../snapshot/testdata/original/video_vae/config.json", Parse: func(o *configfile.Object) (any, error) {
		c := wrapperFrom(o)
		return c, o.Err()
	}},
	{Name: "video_source", File: "../snapshot/testdata/original/video_vae/source/config.json", Parse: func(o *configfile.Object) (any, error) {
		c := &Config{LatentChannels: 24}
		sourceFrom(o, c)
		return c, o.Err()
	}},
	{Name: "vae_diffusers", File: "../snapshot/testdata/diffusers/vae/config.json", Parse: func(o *configfile.Object) (any, error) {
		return fromObjects(o, nil)
	}},
}

func TestConfigFilesValid(t *testing.T) { configtest.CheckValid(t, configFileParsers) }

// Every field rule of the config file readers, each naming the field.
func TestConfigFileRules(t *testing.T) {
	configtest.CheckRules(t, configFileParsers, []configtest.Rule{
		{Parser: "video_wrapper", Mutate: configtest.Set("source_path", "../elsewhere"), Field: "source_path", Rule: "must name a folder inside video_vae/"},
		{Parser: "video_wrapper", Mutate: configtest.Set("source_safetensors_path", "a/b.safetensors"), Field: "source_safetensors_path", Rule: "must name a file"},
		{Parser: "video_wrapper", Mutate: configtest.Set("latent_channels", 16), Field: "latents_mean", Rule: "must list 16 numbers"},
		{Parser: "video_wrapper", Mutate: configtest.Set("latents_mean", "x"), Field: "latents_mean", Rule: "must be a list of numbers"},
		{Parser: "video_wrapper", Mutate: configtest.Set("vae_clip_length", 0), Field: "vae_clip_length", Rule: "must be in 1"},
		{Parser: "video_source", Mutate: configtest.Set("embed_dim", 16), Field: "embed_dim", Rule: "latent_channels is 24"},
		{Parser: "video_source", Mutate: configtest.Set("time_down", []any{}), Field: "time_down", Rule: "one or more integers"},
		{Parser: "video_source", Mutate: configtest.Set("vae_ratio_t", 2), Field: "vae_ratio_t", Rule: "time_down multiplies to 4"},
		{Parser: "video_source", Mutate: configtest.Nested("vit_decoder_kwargs", "heads", 0), Field: "vit_decoder_kwargs.heads", Rule: "must be in 1"},
		{Parser: "video_source", Mutate: configtest.Set("vit_decoder_kwargs", 5), Field: "vit_decoder_kwargs", Rule: "must be an object"},
		{Parser: "vae_diffusers", Mutate: configtest.Set("latents_std", make([]float64, 24)), Field: "latents_std", Rule: "must be positive"},
		{Parser: "vae_diffusers", Mutate: configtest.Set("spatial_downsample_factors", []any{2, -2}), Field: "spatial_downsample_factors", Rule: "entry 1 must be an integer ≥ 1"},
		{Parser: "vae_diffusers", Mutate: configtest.Set("_class_name", "AutoencoderKL"), Field: "_class_name", Rule: "AutoencoderKLMiniMaxH3"},
		{Parser: "vae_diffusers", Mutate: configtest.Set("token_drop", 99), Field: "token_drop", Rule: "exceeds the 5 latents of one 17-frame clip"},
	})
}

// FuzzConfigFiles feeds arbitrary bytes to every config file reader: never
// a panic, and an error is always a *configfile.Error naming the file.
func FuzzConfigFiles(f *testing.F) { configtest.Fuzz(f, configFileParsers) }

// TestVideoGeometryRules: the original layout's chunking and tiling values
// are checked against the source config's compression factors, naming the
// wrapper's field.
func TestVideoGeometryRules(t *testing.T) {
	src := testkit.ReadFile(t, "../snapshot/testdata/original/video_vae/source/config.json")
	for _, c := range []struct {
		key   string
		value any
		field string
		rule  string
	}{
		{"vae_token_drop", 99, "vae_token_drop", "exceeds the 5 latents of one 17-frame clip"},
		{"vae_tile_size", 250, "vae_tile_size", "not a multiple of the spatial compression 4"},
		{"vae_tile_overlap_min", 256, "vae_tile_overlap_min", "smaller than the tile size 256"},
	} {
		dir := t.TempDir()
		m := configtest.Find(t, configFileParsers, "video_wrapper").Load(t)
		m[c.key] = c.value
		if err := os.MkdirAll(dir+"/source", 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(dir+"/config.json", configtest.MustJSON(m), 0o644)
		os.WriteFile(dir+"/source/config.json", src, 0o644)
		_, err := ReadConfig(dir, dir+"/source")
		var ce *configfile.Error
		if !errors.As(err, &ce) || ce.Field != c.field || !strings.Contains(ce.Rule, c.rule) {
			t.Errorf("%s = %v: got %v, want field %q and rule %q", c.key, c.value, err, c.field, c.rule)
		}
	}
}
