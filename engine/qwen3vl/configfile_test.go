package qwen3vl

import (
	"testing"

	"h3studio/engine/configfile"
	"h3studio/engine/configfile/configtest"
)

// configFileParsers read each of the package's config files from bytes; the
// examples are the synthetic snapshot's (engine/snapshot/testdata).
var configFileParsers = []configtest.Parser{
	{Name: "text_encoder", File: "../snapshot/testdata/text_encoder/config.json", Parse: func(o *configfile.Object) (any, error) { return configFrom(o) }},
}

func TestConfigFilesValid(t *testing.T) { configtest.CheckValid(t, configFileParsers) }

// Every field rule of the config file readers, each naming the field.
func TestConfigFileRules(t *testing.T) {
	configtest.CheckRules(t, configFileParsers, []configtest.Rule{
		{Parser: "text_encoder", Mutate: configtest.Set("model_type", "llama"), Field: "model_type", Rule: "qwen3_vl"},
		{Parser: "text_encoder", Mutate: configtest.Del("text_config"), Field: "text_config", Rule: "is missing"},
		{Parser: "text_encoder", Mutate: configtest.Nested("text_config", "rope_scaling", map[string]any{"mrope_section": []any{6, 5, 4}}), Field: "text_config.rope_scaling.mrope_section", Rule: "head_dim/2 = 16"},
		{Parser: "text_encoder", Mutate: configtest.Nested("vision_config", "out_hidden_size", 32), Field: "vision_config.out_hidden_size", Rule: "hidden_size is 64"},
		{Parser: "text_encoder", Mutate: configtest.Nested("vision_config", "deepstack_visual_indexes", []any{1, 9}), Field: "vision_config.deepstack_visual_indexes", Rule: "beyond the 5 vision blocks"},
		{Parser: "text_encoder", Mutate: configtest.Set("image_token_id", 5000), Field: "image_token_id", Rule: "outside the 1056-entry vocabulary"},
	})
}

// FuzzConfigFiles feeds arbitrary bytes to every config file reader: never
// a panic, and an error is always a *configfile.Error naming the file.
func FuzzConfigFiles(f *testing.F) { configtest.Fuzz(f, configFileParsers) }
