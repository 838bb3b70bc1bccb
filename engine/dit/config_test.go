package dit

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"h3studio/engine/configfile"
	"h3studio/engine/configfile/configtest"
)

// releasedOriginal is FL2VA/transformer/config.json of the release (H3-DIT §1.3).
const releasedOriginal = `{
  "_class_name": "MiniMaxH3DiTModel", "_diffusers_version": "0.32.2",
  "hidden_size": 5376, "num_layers": 50, "token_refiner_num_layers": 2, "num_attention_heads": 56,
  "attention_head_dim": 128, "ffn_hidden_size": 14336, "latents_dim": 24, "audio_latents_dim": 32,
  "patch_size": [1, 2, 2], "text_dim": 5120, "timestep_input_dim": 256, "time_embed_hidden_size": 5376,
  "time_embed_dim": 2688, "adaln_out_features": 96768, "final_adaln_out_features": 10752,
  "rope_inv_freq_len": 16, "norm_eps": 1e-05, "qk_norm_eps": 1e-05, "final_norm_eps": 1e-05}`

// releasedDiffusers is transformer/config.json of the diffusers layout.
const releasedDiffusers = `{
  "_class_name": "MiniMaxH3Transformer3DModel", "_diffusers_version": "0.40.0.dev0",
  "num_attention_heads": 56, "attention_head_dim": 128, "hidden_size": 5376, "num_layers": 50,
  "num_refiner_layers": 2, "ffn_dim": 14336, "in_channels": 24, "audio_in_channels": 32,
  "patch_size": [1, 2, 2], "text_dim": 5120, "freq_dim": 256, "time_embed_hidden_dim": 5376,
  "time_embed_dim": 2688, "rope_freq_dim": 16, "rope_theta": 10000.0, "norm_eps": 1e-05,
  "qk_norm_eps": 1e-05, "final_norm_eps": 1e-05}`

func TestParseConfigBothSpellings(t *testing.T) {
	for _, c := range []struct {
		name, json string
		keys       KeySet
	}{{"original", releasedOriginal, OriginalKeys}, {"diffusers", releasedDiffusers, DiffusersKeys}} {
		got, err := ParseConfig(c.name, []byte(c.json))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got.Keys != c.keys {
			t.Errorf("%s: keys %v", c.name, got.Keys)
		}
		got.Keys = 0
		if got != Released() {
			t.Errorf("%s: %+v\nwant %+v", c.name, got, Released())
		}
	}
	// The tiny oracle model in both spellings describes one architecture.
	a, err := ReadConfig("testdata/FL2VA/transformer")
	if err != nil {
		t.Fatal(err)
	}
	b, err := ReadConfig("testdata/transformer_ref")
	if err != nil {
		t.Fatal(err)
	}
	a.Keys, b.Keys = 0, 0
	if a != b {
		t.Errorf("tiny configs differ:\n%+v\n%+v", a, b)
	}
}

func TestParseConfigErrors(t *testing.T) {
	edit := func(src, from, to string) string {
		if !strings.Contains(src, from) {
			t.Fatalf("test setup: %q not in config", from)
		}
		return strings.Replace(src, from, to, 1)
	}
	cases := []struct {
		name, json, want string
	}{
		{"not json", `{`, "not a valid JSON object"},
		{"other model", `{"hidden_size": 3}`, `field "num_layers": is missing`},
		{"mixed", edit(releasedOriginal, `"num_layers": 50`, `"num_layers": 50, "num_refiner_layers": 2`), `field "num_refiner_layers": mixes`},
		{"missing", edit(releasedDiffusers, `"ffn_dim": 14336, `, ``), `field "ffn_dim": is missing`},
		{"unknown", edit(releasedDiffusers, `"ffn_dim": 14336`, `"ffn_dim": 14336, "moe_experts": 8`), `field "moe_experts": is not a key`},
		{"wrong class", edit(releasedOriginal, `MiniMaxH3DiTModel`, `WanModel`), `field "_class_name": is "WanModel"`},
		{"class of the other spelling", edit(releasedOriginal, `MiniMaxH3DiTModel`, `MiniMaxH3Transformer3DModel`), `field "num_refiner_layers": is missing`},
		{"adaln width", edit(releasedOriginal, `96768`, `96769`), `field "adaln_out_features": is 96769; the AdaLN table holds 3 modalities × 6 × hidden_size = 96768`},
		{"final width", edit(releasedOriginal, `10752`, `10751`), `field "final_adaln_out_features": is 10751`},
		{"rope too wide", edit(releasedDiffusers, `"rope_freq_dim": 16`, `"rope_freq_dim": 22`), "more than the head dim 128"},
		{"zero heads", edit(releasedDiffusers, `"num_attention_heads": 56`, `"num_attention_heads": 0`), `field "num_attention_heads": must be in 1`},
		{"odd freq", edit(releasedDiffusers, `"freq_dim": 256`, `"freq_dim": 255`), `field "freq_dim": the sinusoid width must be even, got 255`},
		{"bad eps", edit(releasedDiffusers, `"norm_eps": 1e-05`, `"norm_eps": -1`), `field "norm_eps": must be positive`},
		{"eps above 1", edit(releasedDiffusers, `"norm_eps": 1e-05`, `"norm_eps": 2`), `field "norm_eps": must be at most 1`},
		{"string value", edit(releasedDiffusers, `"hidden_size": 5376`, `"hidden_size": "5376"`), `field "hidden_size": must be an integer`},
	}
	for _, c := range cases {
		_, err := ParseConfig("x/config.json", []byte(c.json))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want it to mention %q", c.name, err, c.want)
		}
		var ce *configfile.Error
		if err != nil && (!errors.As(err, &ce) || ce.Path != "x/config.json") {
			t.Errorf("%s: error %q is not a *configfile.Error naming the file", c.name, err)
		}
	}
}

func FuzzParseConfig(f *testing.F) {
	f.Add([]byte(releasedOriginal))
	f.Add([]byte(releasedDiffusers))
	f.Add([]byte(`{"num_refiner_layers": -1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseConfig("fuzz", data)
		if err == nil {
			if err := c.Validate(); err != nil {
				t.Fatalf("ParseConfig accepted an invalid config: %v", err)
			}
		}
	})
}

func TestInvFreqMatchesRelease(t *testing.T) {
	// H3-DIT §7: the released buffer, printed to 9 digits.
	want := []float64{1, 0.562341332, 0.316227764, 0.177827939, 0.100000001, 0.0562341288, 0.0316227786,
		0.0177827943, 0.00999999978, 0.00562341325, 0.00316227786, 0.00177827943, 0.00100000005,
		0.000562341302, 0.000316227786, 0.00017782794}
	got := InvFreq(10000, 16)
	for i := range want {
		if g, w := fmt.Sprintf("%.9g", got[i]), fmt.Sprintf("%.9g", want[i]); g != w {
			t.Errorf("inv_freq[%d] = %s, want %s", i, g, w)
		}
	}
}

// configFileParsers read each of the package's config files from bytes; the
// examples are the synthetic snapshot's (engine/snapshot/testdata).
var configFileParsers = []configtest.Parser{
	{Name: "transformer_original", File: "../snapshot/testdata/original/transformer/config.json", Parse: func(o *configfile.Object) (any, error) { return configFrom(o) }},
	{Name: "transformer_diffusers", File: "../snapshot/testdata/diffusers/transformer/config.json", Parse: func(o *configfile.Object) (any, error) { return configFrom(o) }},
}

func TestConfigFilesValid(t *testing.T) { configtest.CheckValid(t, configFileParsers) }

// Every field rule of the config file readers, each naming the field.
func TestConfigFileRules(t *testing.T) {
	configtest.CheckRules(t, configFileParsers, []configtest.Rule{
		{Parser: "transformer_original", Mutate: configtest.Set("hidden_size", 0), Field: "hidden_size", Rule: "must be in 1"},
		{Parser: "transformer_original", Mutate: configtest.Set("hidden_size", 64.5), Field: "hidden_size", Rule: "must be an integer"},
		{Parser: "transformer_original", Mutate: configtest.Set("hidden_size", "64"), Field: "hidden_size", Rule: "must be an integer"},
		{Parser: "transformer_original", Mutate: configtest.Del("ffn_hidden_size"), Field: "ffn_hidden_size", Rule: "is missing"},
		{Parser: "transformer_original", Mutate: configtest.Set("patch_size", []any{"1", "2", "2"}), Field: "patch_size", Rule: "must be a list of integers"},
		{Parser: "transformer_original", Mutate: configtest.Set("patch_size", []any{1, 2}), Field: "patch_size", Rule: "must list 3 integers"},
		{Parser: "transformer_original", Mutate: configtest.Set("patch_size", []any{2, 2, 2}), Field: "patch_size", Rule: "temporal patch 2 is not supported"},
		{Parser: "transformer_original", Mutate: configtest.Set("rope_inv_freq_len", 6), Field: "rope_inv_freq_len", Rule: "more than the head dim"},
		{Parser: "transformer_original", Mutate: configtest.Set("timestep_input_dim", 15), Field: "timestep_input_dim", Rule: "must be even"},
		{Parser: "transformer_original", Mutate: configtest.Set("adaln_out_features", 100), Field: "adaln_out_features", Rule: "3 modalities × 6 × hidden_size = 1152"},
		{Parser: "transformer_original", Mutate: configtest.Set("final_adaln_out_features", 64), Field: "final_adaln_out_features", Rule: "= 128"},
		{Parser: "transformer_original", Mutate: configtest.Set("norm_eps", 0), Field: "norm_eps", Rule: "must be positive"},
		{Parser: "transformer_original", Mutate: configtest.Set("_class_name", "UNet2DModel"), Field: "_class_name", Rule: "MiniMaxH3DiTModel or MiniMaxH3Transformer3DModel"},
		{Parser: "transformer_diffusers", Mutate: configtest.Del("in_channels"), Field: "in_channels", Rule: "is missing"},
		{Parser: "transformer_diffusers", Mutate: configtest.Set("rope_theta", -1), Field: "rope_theta", Rule: "must be positive"},
	})
}

// FuzzConfigFiles feeds arbitrary bytes to every config file reader: never
// a panic, and an error is always a *configfile.Error naming the file.
func FuzzConfigFiles(f *testing.F) {
	configtest.Fuzz(f, configFileParsers, []byte("\x00{\"hidden_size\": 1e400}"))
}

// Both key sets describe the same model.
func TestConfigFileKeySetsAgree(t *testing.T) {
	read := func(name string) Config {
		p := configtest.Find(t, configFileParsers, name)
		c, err := p.ParseBytes(configtest.MustJSON(p.Load(t)))
		if err != nil {
			t.Fatal(err)
		}
		return c.(Config)
	}
	a, b := read("transformer_diffusers"), read("transformer_original")
	a.Keys, b.Keys = 0, 0
	if a != b {
		t.Errorf("key sets disagree:\n%+v\n%+v", a, b)
	}
}
