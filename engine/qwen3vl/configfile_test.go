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
	{Name: "processor", File: "../snapshot/testdata/text_encoder/preprocessor_config.json", Parse: processorOf(nil)},
	{Name: "processor_model", File: "testdata/text_encoder/preprocessor_config.json", Parse: processorOf(modelConfig)},
	{Name: "video_processor", File: "../snapshot/testdata/text_encoder/video_preprocessor_config.json", Parse: processorOf(nil)},
}

// processorOf reads one preprocessor config, compared with the model
// config that model returns (nil: not compared).
func processorOf(model func() *Config) func(o *configfile.Object) (any, error) {
	return func(o *configfile.Object) (any, error) {
		var c *Config
		if model != nil {
			c = model()
		}
		return processorFrom(o, c)
	}
}

// modelConfig is the test encoder's config (testdata/text_encoder).
func modelConfig() *Config {
	c, err := ReadConfig(testEncoder)
	if err != nil {
		panic(err)
	}
	return c
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
		{Parser: "processor", Mutate: configtest.Set("size", map[string]any{"shortest_edge": 10, "longest_edge": 5}), Field: "size", Rule: "exceed the maximum"},
		{Parser: "processor", Mutate: configtest.Set("size", map[string]any{"shortest_edge": 0, "longest_edge": 5}), Field: "size.shortest_edge", Rule: "must be in 1"},
		{Parser: "processor", Mutate: configtest.Del("patch_size"), Field: "patch_size", Rule: "is missing"},
		{Parser: "processor", Mutate: configtest.Set("merge_size", 0), Field: "merge_size", Rule: "must be in 1"},
		{Parser: "processor", Mutate: configtest.Set("image_mean", []any{0.5}), Field: "image_mean", Rule: "must list 3 numbers"},
		{Parser: "processor", Mutate: configtest.Set("image_std", []any{0.5, 0, 0.5}), Field: "image_std", Rule: "entry 1 is 0; a standard deviation must be positive"},
		{Parser: "processor_model", Mutate: configtest.Set("patch_size", 14), Field: "patch_size", Rule: "differs from the model's"},
		{Parser: "video_processor", Mutate: configtest.Set("image_std", []any{0.5, -1, 0.5}), Field: "image_std", Rule: "must be positive"},
	})
}

// FuzzConfigFiles feeds arbitrary bytes to every config file reader: never
// a panic, and an error is always a *configfile.Error naming the file.
func FuzzConfigFiles(f *testing.F) { configtest.Fuzz(f, configFileParsers) }
