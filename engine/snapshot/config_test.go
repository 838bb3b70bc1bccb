package snapshot

import (
	"strings"
	"testing"

	"h3studio/engine/configfile"
	"h3studio/engine/configfile/configtest"
)

// parsers reads each snapshot-level config kind from bytes (the object-level
// readers); each component's config.json is tested in its package.
var parsers = []configtest.Parser{
	{Name: "model_index", File: "testdata/original/model_index.json", Parse: func(o *configfile.Object) (any, error) { return modelIndexFrom(o) }},
	{Name: "model_index_diffusers", File: "testdata/diffusers/model_index.json", Parse: func(o *configfile.Object) (any, error) { return modelIndexFrom(o) }},
	{Name: "scheduler", File: "testdata/diffusers/scheduler/scheduler_config.json", Parse: func(o *configfile.Object) (any, error) { return schedulerFrom(o) }},
}

func TestConfigsValid(t *testing.T) {
	configtest.CheckValid(t, parsers)
	p := configtest.Find(t, parsers, "model_index")
	mi, _ := p.ParseBytes(configtest.MustJSON(p.Load(t)))
	m := mi.(*ModelIndex)
	if !m.HasH3 || m.Partition != "fl2va" || strings.Join(m.Tasks, ",") != "t2va,fl2va" || m.VideoShift != 12 || m.AudioShift != 3 ||
		m.Components["transformer"] != [2]string{"diffusers", "MiniMaxH3DiTModel"} || len(m.Null) != 1 {
		t.Errorf("model index %+v", m)
	}
}

// Every field rule, each naming the field.
func TestConfigRules(t *testing.T) {
	configtest.CheckRules(t, parsers, []configtest.Rule{
		{Parser: "model_index", Mutate: configtest.Set("_class_name", "StableDiffusionPipeline"), Field: "_class_name", Rule: "must describe MiniMaxH3Pipeline"},
		{Parser: "model_index", Mutate: configtest.Set("text_encoder", "qwen"), Field: "text_encoder", Rule: "must be null or [library, class]"},
		{Parser: "model_index", Mutate: configtest.Set("video_vae", []any{"diffusers", 3}), Field: "video_vae", Rule: "as strings"},
		{Parser: "model_index", Mutate: configtest.Nested("_minimax_h3", "schema_version", 2), Field: "_minimax_h3.schema_version", Rule: "must be in 1 … 1"},
		{Parser: "model_index", Mutate: configtest.Nested("_minimax_h3", "partition", "t2v"), Field: "_minimax_h3.partition", Rule: `must be "fl2va" or "ref2va"`},
		{Parser: "model_index", Mutate: configtest.Nested("_minimax_h3", "tasks", "t2va"), Field: "_minimax_h3.tasks", Rule: "must be a list of task names"},
		{Parser: "model_index", Mutate: configtest.Nested("_minimax_h3", "sigma_shift_scales", map[string]any{"video": 12, "audio": 0}), Field: "_minimax_h3.sigma_shift_scales.audio", Rule: "must be positive"},
		{Parser: "model_index", Mutate: configtest.Nested("_minimax_h3", "base_schedule", []any{1, 0.5, 0.7, 0}), Field: "_minimax_h3.base_schedule", Rule: "strictly decreasing"},
		{Parser: "model_index", Mutate: configtest.Set("_h3studio", map[string]any{"demo": "yes"}), Field: "_h3studio.demo", Rule: "true or false"},
		{Parser: "scheduler", Mutate: configtest.Set("shift", 0), Field: "shift", Rule: "must be positive"},
		{Parser: "scheduler", Mutate: configtest.Set("_class_name", "DDIMScheduler"), Field: "_class_name", Rule: "MiniMaxH3Scheduler"},
	})
}

// FuzzConfigs feeds arbitrary bytes to every snapshot-level config reader:
// never a panic, and an error is always a *ConfigError naming the file.
func FuzzConfigs(f *testing.F) { configtest.Fuzz(f, parsers) }

// TestLatentStatsInReport: the report applies the float32 rule of latent
// statistics (configfile.CheckLatentStats) to the files' numbers.
func TestLatentStatsInReport(t *testing.T) {
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
