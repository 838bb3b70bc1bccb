package audiovae

import (
	"encoding/json"
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
	o.Layout, d.Layout = 0, 0
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
		{"rates", raw, kw(func(k map[string]any) { k["decoder_rates"] = []int{5, 5} }), "decoder_rates [5 5] upsample by 25, the encoder hop is 10"},
		{"type", raw, kw(func(k map[string]any) { k["decoder_type"] = "vocos" }), `decoder_type "vocos"`},
		{"no dim", raw, kw(func(k map[string]any) { delete(k, "latent_dim") }), `lacks "latent_dim"`},
		{"sample rates", edit(raw, func(m map[string]any) { m["sample_rate"] = 0 }), meta, "sample_rate 0 differs from metadata.json's sample_rate 32000"},
		{"std", edit(raw, func(m map[string]any) { m["latents_std"] = []float64{1} }), meta, "latents_mean has 32 and latents_std 1 values"},
		{"kernel", edit(draw, func(m map[string]any) { m["decoder_kernel_sizes"] = []int{8, 4} }), nil, "kernel 8 and rate 5"},
		{"heads", edit(draw, func(m map[string]any) { m["num_attention_heads"] = 7 }), nil, "latent_dim 512 is not divisible by 7 heads"},
		{"class", edit(draw, func(m map[string]any) { m["_class_name"] = "DacVAE" }), nil, `_class_name "DacVAE"`},
	} {
		_, err := ParseConfig("config.json", c.raw, "metadata.json", c.meta)
		if err == nil || !strings.Contains(err.Error(), c.rule) {
			t.Errorf("%s: %v, want an error containing %q", c.name, err, c.rule)
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
