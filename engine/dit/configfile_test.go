package dit

import (
	"testing"

	"h3studio/engine/configfile"
	"h3studio/engine/configfile/configtest"
)

// configFileParsers read each of the package's config files from bytes; the
// examples are the synthetic snapshot's (engine/snapshot/testdata).
var configFileParsers = []configtest.Parser{
	{Name: "transformer_original", File: "../snapshot/testdata/original/transformer/config.json", Parse: func(o *configfile.Object) (any, error) { return configFileFrom(o) }},
	{Name: "transformer_diffusers", File: "../snapshot/testdata/diffusers/transformer/config.json", Parse: func(o *configfile.Object) (any, error) { return configFileFrom(o) }},
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
	read := func(name string) ConfigFile {
		p := configtest.Find(t, configFileParsers, name)
		c, err := p.ParseBytes(configtest.MustJSON(p.Load(t)))
		if err != nil {
			t.Fatal(err)
		}
		return *c.(*ConfigFile)
	}
	a, b := read("transformer_diffusers"), read("transformer_original")
	a.Path, b.Path, a.KeySet, b.KeySet = "", "", "", ""
	if a != b {
		t.Errorf("key sets disagree:\n%+v\n%+v", a, b)
	}
}
