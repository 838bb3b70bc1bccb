package audiovae

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"h3studio/engine/configfile"
	"h3studio/engine/configfile/configtest"
)

func TestReadConfigBothLayouts(t *testing.T) {
	o, err := ReadConfig("testdata/original/audio_vae")
	if err != nil {
		t.Fatal(err)
	}
	d, err := ReadConfig("testdata/diffusers/audio_vae")
	if err != nil {
		t.Fatal(err)
	}
	if o.Layout != Original || d.Layout != Diffusers {
		t.Fatalf("layouts %v %v", o.Layout, d.Layout)
	}
	o.Layout, d.Layout, o.WeightsFile, o.YAMLFile = 0, 0, "", ""
	oj, _ := json.Marshal(o)
	dj, _ := json.Marshal(d)
	if string(oj) != string(dj) {
		t.Fatalf("original %s\ndiffusers %s", oj, dj)
	}
	if o.Hop() != 10 || o.DecoderKernels[0] != 9 || o.DecoderKernels[1] != 4 {
		t.Fatalf("tiny config %+v", o)
	}
}

func TestParseConfigRejects(t *testing.T) {
	raw, _ := os.ReadFile("testdata/original/audio_vae/config.json")
	meta, _ := os.ReadFile("testdata/original/audio_vae/metadata.json")
	draw, _ := os.ReadFile("testdata/diffusers/audio_vae/config.json")
	edit := func(b []byte, f func(m map[string]any)) []byte {
		var m map[string]any
		json.Unmarshal(b, &m)
		f(m)
		out, _ := json.Marshal(m)
		return out
	}
	kw := func(f func(k map[string]any)) []byte {
		return edit(meta, func(m map[string]any) { f(m["metadata"].(map[string]any)["kwargs"].(map[string]any)) })
	}
	for _, c := range []struct {
		name      string
		raw, meta []byte
		rule      string
	}{
		{"rates", raw, kw(func(k map[string]any) { k["decoder_rates"] = []int{5, 5} }), `field "metadata.kwargs.decoder_rates": multiply to 25 but the encoder rates multiply to 10`},
		{"type", raw, kw(func(k map[string]any) { k["decoder_type"] = "vocos" }), `field "metadata.kwargs.decoder_type": is "vocos"`},
		{"attn proj", raw, kw(func(k map[string]any) { k["attn_proj"] = false }), `field "metadata.kwargs.attn_proj": is false`},
		{"no dim", raw, kw(func(k map[string]any) { delete(k, "latent_dim") }), `field "metadata.kwargs.latent_dim": is missing`},
		{"sample rates", edit(raw, func(m map[string]any) { m["sample_rate"] = 16000 }), meta, `field "metadata.kwargs.sample_rate": is 32000 but config.json's sample_rate is 16000`},
		{"std", edit(raw, func(m map[string]any) { m["latents_std"] = []float64{1} }), meta, `field "latents_std": must list 32 numbers, got 1`},
		{"kernel", edit(draw, func(m map[string]any) { m["decoder_kernel_sizes"] = []int{8, 4} }), nil, "kernel 8 and rate 5"},
		{"no kernels", edit(draw, func(m map[string]any) { delete(m, "decoder_kernel_sizes") }), nil, `field "decoder_kernel_sizes": is missing`},
		{"heads", edit(draw, func(m map[string]any) { m["num_attention_heads"] = 7 }), nil, "latent_dim 512 is not divisible by 7 heads"},
		{"class", edit(draw, func(m map[string]any) { m["_class_name"] = "DacVAE" }), nil, `field "_class_name": is "DacVAE"`},
	} {
		_, err := ParseConfig("config.json", c.raw, "metadata.json", c.meta)
		if err == nil || !strings.Contains(err.Error(), c.rule) {
			t.Errorf("%s: %v, want an error containing %q", c.name, err, c.rule)
		}
		var ce *configfile.Error
		if err != nil && !errors.As(err, &ce) {
			t.Errorf("%s: %v is not a *configfile.Error", c.name, err)
		}
	}
}

// FuzzParseConfig: any config/metadata bytes give a valid config or an
// error, never a panic.
func FuzzParseConfig(f *testing.F) {
	raw, _ := os.ReadFile("testdata/original/audio_vae/config.json")
	meta, _ := os.ReadFile("testdata/original/audio_vae/metadata.json")
	draw, _ := os.ReadFile("testdata/diffusers/audio_vae/config.json")
	f.Add(raw, meta)
	f.Add(draw, []byte(nil))
	f.Add([]byte(`{"_class_name":"AutoencoderKLMiniMaxH3Audio","decoder_rates":[0],"decoder_kernel_sizes":[0],"encoder_rates":[0]}`), []byte(nil))
	f.Fuzz(func(t *testing.T, raw, meta []byte) {
		c, err := ParseConfig("config.json", raw, "metadata.json", meta)
		if err == nil {
			if err := c.Validate(); err != nil {
				t.Fatalf("invalid config accepted: %v", err)
			}
			if _, err := EstimateDecode(c, 2, 3); err != nil {
				t.Fatalf("valid config cannot be estimated: %v", err)
			}
		}
	})
}

// configFileParsers read each of the package's config files from bytes; the
// examples are the synthetic snapshot's (engine/snapshot/testdata).
var configFileParsers = []configtest.Parser{
	// config.json alone: with the example metadata, a changed config.json
	// could fail a cross-file rule that names metadata.json.
	{Name: "audio_original", File: "../snapshot/testdata/original/audio_vae/config.json", Parse: func(o *configfile.Object) (any, error) {
		c := ReleasedConfig()
		originalFrom(o, c)
		latentStats(o, c)
		return c, o.Err()
	}},
	{Name: "audio_metadata", File: "../snapshot/testdata/original/audio_vae/metadata.json", Parse: func(m *configfile.Object) (any, error) {
		o, err := configfile.Read("../snapshot/testdata/original/audio_vae/config.json")
		if err != nil {
			return nil, err
		}
		return configFrom(o, func(string) (*configfile.Object, error) { return m, nil })
	}},
	{Name: "audio_diffusers", File: "../snapshot/testdata/diffusers/audio_vae/config.json", Parse: func(o *configfile.Object) (any, error) {
		// A fuzzed config.json can read as the original layout, which names
		// a metadata file: this parser reads config.json alone.
		return configFrom(o, func(name string) (*configfile.Object, error) {
			return nil, &configfile.Error{Path: o.Path, Field: "source_metadata_path", Rule: "names " + name + ", which the diffusers parser does not read"}
		})
	}},
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
