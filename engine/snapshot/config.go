package snapshot

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"h3studio/engine/configfile"
)

// This file reads the snapshot-level configuration files: model_index.json,
// the scheduler config and the tokenizer files (spec H3-DIT.md §1,
// H3-ENCODERS-VAES.md §2). Each component's own configs are read by its
// package (dit, qwen3vl — the image and video processor configs too —,
// videovae, audiovae).
// Each Read* function returns a *ConfigError naming the file and the field
// on the first problem.

// ModelIndex is a model_index.json: a partition's (original layout, with
// the _minimax_h3 block) or the diffusers root's (model_index.json or
// modular_model_index.json).
type ModelIndex struct {
	Path      string
	ClassName string
	// Components maps a component name to its [library, class]; components
	// listed as null are absent from the map but named in Null.
	Components map[string][2]string
	Null       []string

	// From "_minimax_h3" (original partitions; zero values when absent).
	HasH3         bool
	SchemaVersion int
	Partition     string   // "fl2va" or "ref2va"
	Tasks         []string // e.g. ["t2va", "fl2va"]
	TaskAliases   map[string]string
	VideoShift    float64 // sigma_shift_scales.video (12 when absent)
	AudioShift    float64 // sigma_shift_scales.audio (3 when absent)
	BaseSchedule  []float64

	// From "_h3studio": the demo checkpoint's marker.
	Demo     bool
	DemoNote string
	DemoName string // "name": how the app names the model
}

// Known task names.
var knownTasks = map[string]bool{string(T2VA): true, string(FL2VAT): true, string(Ref2VAT): true}

// ReadModelIndex reads and validates a model_index.json.
func ReadModelIndex(path string) (*ModelIndex, error) {
	return configfile.ReadAs(path, modelIndexFrom)
}

func modelIndexFrom(o *configfile.Object) (*ModelIndex, error) {
	mi := &ModelIndex{Path: o.Path, Components: map[string][2]string{}, VideoShift: 12, AudioShift: 3}
	mi.ClassName = o.ClassName("MiniMaxH3Pipeline", "MiniMaxH3ModularPipeline")
	for _, name := range o.Keys() {
		if strings.HasPrefix(name, "_") {
			continue
		}
		raw := bytes.TrimSpace(o.Value(name))
		if bytes.Equal(raw, []byte("null")) {
			mi.Null = append(mi.Null, name)
			continue
		}
		var entry []json.RawMessage
		if err := json.Unmarshal(raw, &entry); err != nil || len(entry) < 2 || len(entry) > 3 {
			o.Fail(name, "must be null or [library, class] (optionally with a spec object), got %s", configfile.Clip(raw))
			break
		}
		var lib, class string
		if json.Unmarshal(entry[0], &lib) != nil || json.Unmarshal(entry[1], &class) != nil || lib == "" || class == "" {
			o.Fail(name, "must name a library and a class as strings, got %s", configfile.Clip(raw))
			break
		}
		mi.Components[name] = [2]string{lib, class}
	}
	if h := o.Sub("_minimax_h3", true); h != nil {
		mi.HasH3 = true
		mi.SchemaVersion = h.IntIn("schema_version", 1, 1)
		mi.Partition = h.Str("partition")
		if o.Err() == nil && mi.Partition != "fl2va" && mi.Partition != "ref2va" {
			h.Fail("partition", "must be \"fl2va\" or \"ref2va\", got %q", mi.Partition)
		}
		var tasks []string
		if h.Decode("tasks", &tasks, "a list of task names") {
			for _, t := range tasks {
				if !knownTasks[t] {
					h.Fail("tasks", "names the unknown task %q (known: t2va, fl2va, ref2va)", t)
				}
			}
			mi.Tasks = tasks
		}
		if h.Has("task_aliases") {
			h.Decode("task_aliases", &mi.TaskAliases, "an object of strings")
		}
		if s := h.Sub("sigma_shift_scales", true); s != nil {
			mi.VideoShift = s.PosFloat("video")
			mi.AudioShift = s.PosFloat("audio")
		}
		if h.Has("base_schedule") {
			var n []json.Number
			if h.Decode("base_schedule", &n, "a list of numbers") {
				mi.BaseSchedule = h.Floats("base_schedule", len(n))
				checkBaseSchedule(h, mi.BaseSchedule)
			}
		}
	}
	if d := o.Sub("_h3studio", true); d != nil {
		mi.Demo = d.OptBool("demo", false)
		mi.DemoNote = d.OptStr("note", "")
		mi.DemoName = d.OptStr("name", "")
	}
	if err := o.Err(); err != nil {
		return nil, err
	}
	return mi, nil
}

func checkBaseSchedule(o *configfile.Object, b []float64) {
	if o.Err() != nil {
		return
	}
	if len(b) < 2 || b[0] != 1 || b[len(b)-1] != 0 {
		o.Fail("base_schedule", "must start at 1 and end at 0 with at least two points")
		return
	}
	for i := 1; i < len(b); i++ {
		if !(b[i] < b[i-1]) || b[i] < 0 {
			o.Fail("base_schedule", "must be strictly decreasing within [0, 1] (entry %d is %v after %v)", i, b[i], b[i-1])
			return
		}
	}
}

// SchedulerConfig is a diffusers scheduler/scheduler_config.json.
type SchedulerConfig struct {
	Path  string
	Shift float64
}

// ReadSchedulerConfig reads and validates a scheduler config.
func ReadSchedulerConfig(path string) (*SchedulerConfig, error) {
	return configfile.ReadAs(path, schedulerFrom)
}

func schedulerFrom(o *configfile.Object) (*SchedulerConfig, error) {
	o.ClassName("MiniMaxH3Scheduler")
	c := &SchedulerConfig{Path: o.Path, Shift: o.PosFloat("shift")}
	if err := o.Err(); err != nil {
		return nil, err
	}
	return c, nil
}

// TokenizerFiles is a tokenizer folder's files. tokenizer.json is only
// checked to be a non-empty JSON object here (the real one is ~11 MB; the
// tokenizer package parses it).
type TokenizerFiles struct {
	Dir        string
	JSON       string // tokenizer.json
	ConfigJSON string // tokenizer_config.json ("" when absent)
	Bytes      int64
}

// ReadTokenizerFiles checks a folder holding tokenizer.json.
func ReadTokenizerFiles(dir string) (*TokenizerFiles, error) {
	t := &TokenizerFiles{Dir: dir, JSON: filepath.Join(dir, "tokenizer.json")}
	f, err := os.Open(t.JSON)
	if err != nil {
		return nil, &configfile.Error{Path: t.JSON, Rule: "file is missing or unreadable", Err: err}
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.IsDir() {
		return nil, &configfile.Error{Path: t.JSON, Rule: "is not a readable file"}
	}
	t.Bytes = st.Size()
	head := make([]byte, 64)
	n, _ := f.Read(head)
	if trimmed := bytes.TrimLeft(head[:n], " \t\r\n\ufeff"); len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, &configfile.Error{Path: t.JSON, Rule: "is not a JSON object"}
	}
	if c := filepath.Join(dir, "tokenizer_config.json"); fileExists(c) {
		if _, err := configfile.Read(c); err != nil {
			return nil, err
		}
		t.ConfigJSON = c
	}
	return t, nil
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// configSummary is a one-line description of a parsed config.
func configSummary(cfg any) string {
	switch c := cfg.(type) {
	case interface{ Summary() string }:
		return c.Summary()
	case *TokenizerFiles:
		return fmt.Sprintf("tokenizer.json %s", humanBytes(c.Bytes))
	case *SchedulerConfig:
		return fmt.Sprintf("shift %g", c.Shift)
	}
	return ""
}
