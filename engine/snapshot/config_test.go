package snapshot

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"strings"
	"testing"
)

// parsers reads each config kind from bytes (the object-level readers).
var parsers = []struct {
	name, file string
	parse      func(o *object) (any, error)
}{
	{"model_index", "testdata/original/model_index.json", func(o *object) (any, error) { return modelIndexFrom(o) }},
	{"model_index_diffusers", "testdata/diffusers/model_index.json", func(o *object) (any, error) { return modelIndexFrom(o) }},
	{"transformer_original", "testdata/original/transformer/config.json", func(o *object) (any, error) { return transformerFrom(o) }},
	{"transformer_diffusers", "testdata/diffusers/transformer/config.json", func(o *object) (any, error) { return transformerFrom(o) }},
	{"video_wrapper", "testdata/original/video_vae/config.json", func(o *object) (any, error) { return videoWrapperFrom(o, "video_vae") }},
	{"video_source", "testdata/original/video_vae/source/config.json", func(o *object) (any, error) {
		c := &VideoVAEConfig{LatentChannels: 24}
		return c, videoSourceFrom(o, c)
	}},
	{"vae_diffusers", "testdata/diffusers/vae/config.json", func(o *object) (any, error) { return videoVAEDiffusersFrom(o, "vae") }},
	{"audio_original", "testdata/original/audio_vae/config.json", func(o *object) (any, error) { return audioOriginalFrom(o, "audio_vae") }},
	{"audio_metadata", "testdata/original/audio_vae/metadata.json", func(o *object) (any, error) {
		c := &AudioVAEConfig{LatentChannels: 32, SampleRate: 32000}
		return c, audioMetadataFrom(o, c)
	}},
	{"audio_diffusers", "testdata/diffusers/audio_vae/config.json", func(o *object) (any, error) { return audioDiffusersFrom(o) }},
	{"text_encoder", "testdata/text_encoder/config.json", func(o *object) (any, error) { return textEncoderFrom(o) }},
	{"processor", "testdata/text_encoder/preprocessor_config.json", func(o *object) (any, error) { return processorFrom(o) }},
	{"scheduler", "testdata/diffusers/scheduler/scheduler_config.json", func(o *object) (any, error) { return schedulerFrom(o) }},
}

func parseAs(name string, b []byte) (any, error) {
	for _, p := range parsers {
		if p.name == name {
			o, err := parseObject(p.file, b)
			if err != nil {
				return nil, err
			}
			return p.parse(o)
		}
	}
	panic("no parser " + name)
}

func load(t testing.TB, name string) map[string]any {
	for _, p := range parsers {
		if p.name == name {
			b, err := os.ReadFile(p.file)
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]any
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			return m
		}
	}
	t.Fatalf("no parser %s", name)
	return nil
}

func TestConfigsValid(t *testing.T) {
	for _, p := range parsers {
		b, err := os.ReadFile(p.file)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := parseAs(p.name, b); err != nil {
			t.Errorf("%s: %v", p.name, err)
		}
	}
	tc, _ := parseAs("transformer_diffusers", mustJSON(load(t, "transformer_diffusers")))
	to, _ := parseAs("transformer_original", mustJSON(load(t, "transformer_original")))
	// Both key sets describe the same model.
	a, b := *tc.(*TransformerConfig), *to.(*TransformerConfig)
	a.Path, b.Path, a.KeySet, b.KeySet = "", "", "", ""
	if a != b {
		t.Errorf("key sets disagree:\n%+v\n%+v", a, b)
	}
	mi, _ := parseAs("model_index", mustJSON(load(t, "model_index")))
	m := mi.(*ModelIndex)
	if !m.HasH3 || m.Partition != "fl2va" || strings.Join(m.Tasks, ",") != "t2va,fl2va" || m.VideoShift != 12 || m.AudioShift != 3 ||
		m.Components["transformer"] != [2]string{"diffusers", "MiniMaxH3DiTModel"} || len(m.Null) != 1 {
		t.Errorf("model index %+v", m)
	}
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// Every field rule, each naming the field.
func TestConfigRules(t *testing.T) {
	set := func(k string, v any) func(m map[string]any) { return func(m map[string]any) { m[k] = v } }
	del := func(k string) func(m map[string]any) { return func(m map[string]any) { delete(m, k) } }
	nested := func(outer, k string, v any) func(m map[string]any) {
		return func(m map[string]any) { m[outer].(map[string]any)[k] = v }
	}
	cases := []struct {
		parser string
		mutate func(map[string]any)
		field  string
		rule   string
	}{
		{"model_index", set("_class_name", "StableDiffusionPipeline"), "_class_name", "must describe MiniMaxH3Pipeline"},
		{"model_index", set("text_encoder", "qwen"), "text_encoder", "must be null or [library, class]"},
		{"model_index", set("video_vae", []any{"diffusers", 3}), "video_vae", "as strings"},
		{"model_index", nested("_minimax_h3", "schema_version", 2), "_minimax_h3.schema_version", "must be in 1 … 1"},
		{"model_index", nested("_minimax_h3", "partition", "t2v"), "_minimax_h3.partition", `must be "fl2va" or "ref2va"`},
		{"model_index", nested("_minimax_h3", "tasks", "t2va"), "_minimax_h3.tasks", "must be a list of task names"},
		{"model_index", nested("_minimax_h3", "sigma_shift_scales", map[string]any{"video": 12, "audio": 0}), "_minimax_h3.sigma_shift_scales.audio", "must be positive"},
		{"model_index", nested("_minimax_h3", "base_schedule", []any{1, 0.5, 0.7, 0}), "_minimax_h3.base_schedule", "strictly decreasing"},
		{"model_index", set("_h3studio", map[string]any{"demo": "yes"}), "_h3studio.demo", "true or false"},
		{"transformer_original", set("hidden_size", 0), "hidden_size", "must be in 1"},
		{"transformer_original", set("hidden_size", 64.5), "hidden_size", "must be an integer"},
		{"transformer_original", set("hidden_size", "64"), "hidden_size", "must be an integer"},
		{"transformer_original", del("ffn_hidden_size"), "ffn_hidden_size", "is missing"},
		{"transformer_original", set("patch_size", []any{"1", "2", "2"}), "patch_size", "must be a list of integers"},
		{"transformer_original", set("patch_size", []any{1, 2}), "patch_size", "must list 3 integers"},
		{"transformer_original", set("patch_size", []any{2, 2, 2}), "patch_size", "temporal patch 2 is not supported"},
		{"transformer_original", set("rope_inv_freq_len", 6), "rope_inv_freq_len", "more than the head dim"},
		{"transformer_original", set("timestep_input_dim", 15), "timestep_input_dim", "must be even"},
		{"transformer_original", set("adaln_out_features", 100), "adaln_out_features", "3 modalities × 6 × hidden_size = 1152"},
		{"transformer_original", set("final_adaln_out_features", 64), "final_adaln_out_features", "= 128"},
		{"transformer_original", set("norm_eps", 0), "norm_eps", "must be positive"},
		{"transformer_original", set("_class_name", "UNet2DModel"), "_class_name", "MiniMaxH3DiTModel or MiniMaxH3Transformer3DModel"},
		{"transformer_diffusers", del("in_channels"), "in_channels", "is missing"},
		{"transformer_diffusers", set("rope_theta", -1), "rope_theta", "must be positive"},
		{"video_wrapper", set("source_path", "../elsewhere"), "source_path", "must name a folder inside video_vae/"},
		{"video_wrapper", set("source_safetensors_path", "a/b.safetensors"), "source_safetensors_path", "must name a file"},
		{"video_wrapper", set("latent_channels", 16), "latents_mean", "must list 16 numbers"},
		{"video_wrapper", set("latents_mean", "x"), "latents_mean", "must be a list of numbers"},
		{"video_wrapper", set("vae_clip_length", 0), "vae_clip_length", "must be in 1"},
		{"video_source", set("embed_dim", 16), "embed_dim", "latent_channels is 24"},
		{"video_source", set("time_down", []any{}), "time_down", "one or more integers"},
		{"video_source", set("vae_ratio_t", 2), "vae_ratio_t", "time_down multiplies to 4"},
		{"video_source", nested("vit_decoder_kwargs", "heads", 0), "vit_decoder_kwargs.heads", "must be in 1"},
		{"video_source", set("vit_decoder_kwargs", 5), "vit_decoder_kwargs", "must be an object"},
		{"vae_diffusers", set("latents_std", make([]float64, 24)), "latents_std", "must be positive"},
		{"vae_diffusers", set("spatial_downsample_factors", []any{2, -2}), "spatial_downsample_factors", "entry 1 must be an integer ≥ 1"},
		{"vae_diffusers", set("_class_name", "AutoencoderKL"), "_class_name", "AutoencoderKLMiniMaxH3"},
		{"vae_diffusers", set("token_drop", 99), "token_drop", "exceeds the 5 latents of one 17-frame clip"},
		{"audio_original", set("output_channel", 1), "output_channel", "stereo"},
		{"audio_original", set("source_metadata_path", ".."), "source_metadata_path", "must name a file"},
		{"audio_original", del("sample_rate"), "sample_rate", "is missing"},
		{"audio_metadata", nested("metadata", "kwargs", map[string]any{"encoder_dim": 8}), "metadata.kwargs.encoder_rates", "is missing"},
		{"audio_diffusers", set("decoder_rates", []any{2, 2}), "decoder_rates", "must agree on the hop"},
		{"audio_diffusers", set("decoder_kernel_sizes", []any{9}), "decoder_kernel_sizes", "must list 2 integers"},
		{"audio_diffusers", set("latents_mean", []any{1.0}), "latents_mean", "must list 32 numbers"},
		{"text_encoder", set("model_type", "llama"), "model_type", "qwen3_vl"},
		{"text_encoder", del("text_config"), "text_config", "is missing"},
		{"text_encoder", nested("text_config", "rope_scaling", map[string]any{"mrope_section": []any{6, 5, 4}}), "text_config.rope_scaling.mrope_section", "head_dim/2 = 16"},
		{"text_encoder", nested("vision_config", "out_hidden_size", 32), "vision_config.out_hidden_size", "hidden_size is 64"},
		{"text_encoder", nested("vision_config", "deepstack_visual_indexes", []any{1, 9}), "vision_config.deepstack_visual_indexes", "beyond the 5 vision blocks"},
		{"text_encoder", set("image_token_id", 5000), "image_token_id", "outside the 1056-entry vocabulary"},
		{"processor", set("size", map[string]any{"shortest_edge": 10, "longest_edge": 5}), "size", "exceed the maximum"},
		{"processor", set("image_mean", []any{0.5}), "image_mean", "must list 3 numbers"},
		{"scheduler", set("shift", 0), "shift", "must be positive"},
		{"scheduler", set("_class_name", "DDIMScheduler"), "_class_name", "MiniMaxH3Scheduler"},
	}
	for _, c := range cases {
		m := load(t, c.parser)
		c.mutate(m)
		_, err := parseAs(c.parser, mustJSON(m))
		var ce *ConfigError
		if !errors.As(err, &ce) {
			t.Errorf("%s %s: got %v, want a ConfigError about %q", c.parser, c.field, err, c.rule)
			continue
		}
		if ce.Field != c.field || !strings.Contains(ce.Rule, c.rule) {
			t.Errorf("%s: error %q, want field %q and rule %q", c.parser, err, c.field, c.rule)
		}
		if !strings.Contains(err.Error(), ".json") {
			t.Errorf("%s: error %q does not name the file", c.parser, err)
		}
	}
}

func TestParseObjectRules(t *testing.T) {
	for in, rule := range map[string]string{
		"":             "not a valid JSON object",
		"null":         "not a valid JSON object",
		"[1]":          "not a valid JSON object",
		"{} {}":        "trailing data",
		`{"a":1`:       "not a valid JSON object",
		"\xff\xfe{}":   "not a valid JSON object",
		`{"a":1} junk`: "trailing data",
	} {
		_, err := parseObject("c.json", []byte(in))
		if err == nil || !strings.Contains(err.Error(), rule) || !strings.Contains(err.Error(), "c.json") {
			t.Errorf("%q: %v, want %q", in, err, rule)
		}
	}
}

// FuzzConfigs feeds arbitrary bytes to every config reader: never a panic,
// and an error is always a *ConfigError naming the file.
func FuzzConfigs(f *testing.F) {
	for i, p := range parsers {
		b, err := os.ReadFile(p.file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(append([]byte{byte(i)}, b...))
	}
	f.Add([]byte("\x02{\"hidden_size\": 1e400}"))
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) == 0 {
			return
		}
		// The first byte picks the reader, the rest is the file.
		p, b := parsers[int(in[0])%len(parsers)], in[1:]
		o, err := parseObject(p.file, b)
		if err == nil {
			_, err = p.parse(o)
		}
		if err != nil {
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.Path != p.file {
				t.Fatalf("%s: error %v is not a ConfigError naming the file", p.name, err)
			}
		}
	})
}

// TestLatentStats: the one rule both VAE packages and the report apply to
// latent statistics.
func TestLatentStats(t *testing.T) {
	if _, _, err := LatentStats("c.json", nil, []float64{1}); err == nil || !strings.Contains(err.Error(), `c.json: missing required key "latents_mean"`) {
		t.Errorf("missing mean: %v", err)
	}
	if _, _, err := LatentStats("c.json", []float64{1}, nil); err == nil || !strings.Contains(err.Error(), `"latents_std"`) {
		t.Errorf("missing std: %v", err)
	}
	m, s, err := LatentStats("c.json", []float64{0.1, -2}, []float64{1e39, 0.5})
	if err != nil || m[0] != float32(0.1) || !math.IsInf(float64(s[0]), 1) {
		t.Fatalf("conversion: %v %v %v", m, s, err)
	}
	for _, c := range []struct {
		mean, std []float32
		want      string
	}{
		{[]float32{0, 1}, []float32{1, 2}, ""},
		{[]float32{0}, []float32{1, 2}, "latents_mean has 1 and latents_std 2 values for 2 latent channels"},
		{[]float32{0, 1}, []float32{1, 0}, "latents_std[1] = 0 must be positive"},
		{[]float32{0, 1}, []float32{float32(math.Inf(1)), 1}, "latents_std[0] = +Inf must be finite"},
		{[]float32{float32(math.NaN()), 1}, []float32{1, 1}, "latents_mean[0] = NaN must be finite"},
	} {
		err := CheckLatentStats(c.mean, c.std, 2)
		if (c.want == "") != (err == nil) || err != nil && err.Error() != c.want {
			t.Errorf("CheckLatentStats(%v, %v) = %v, want %q", c.mean, c.std, err, c.want)
		}
	}
	// The report applies the float32 rule to the files' numbers.
	root := t.TempDir()
	partition(t, root, FL2VA, true)
	std := make([]float64, 24)
	for i := range std {
		std[i] = 1
	}
	std[5] = 1e39 // finite as a JSON number, +Inf as the float32 the model uses
	editJSON(t, root+"/FL2VA/video_vae/config.json", "latents_std", std)
	if r, err := Inspect(root); err != nil || r.OK() || !strings.Contains(r.Problems[0].Error, "entry 5") {
		t.Errorf("std 1e39: %v %+v", err, r.Problems)
	}
}

// TestVideoGeometryRules: the original layout's chunking and tiling values
// are checked against the source config's compression factors (the video
// VAE's loader refuses them; info must report them as corrupt, not pass).
func TestVideoGeometryRules(t *testing.T) {
	src, err := os.ReadFile("testdata/original/video_vae/source/config.json")
	if err != nil {
		t.Fatal(err)
	}
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
		m := load(t, "video_wrapper")
		m[c.key] = c.value
		if err := os.MkdirAll(dir+"/source", 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(dir+"/config.json", mustJSON(m), 0o644)
		os.WriteFile(dir+"/source/config.json", src, 0o644)
		_, err := ReadVideoVAEConfig(dir, Original)
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Field != c.field || !strings.Contains(ce.Rule, c.rule) {
			t.Errorf("%s = %v: got %v, want field %q and rule %q", c.key, c.value, err, c.field, c.rule)
		}
	}
}
