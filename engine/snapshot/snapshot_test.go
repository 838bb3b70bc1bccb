package snapshot

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"h3studio/engine/audiovae"
	"h3studio/engine/compute"
	"h3studio/engine/dit"
	"h3studio/engine/safetensors"
)

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	os.MkdirAll(filepath.Dir(path), 0o755)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// weights writes a small safetensors file with n F32 tensors.
func weights(t *testing.T, path string, names ...string) {
	t.Helper()
	os.MkdirAll(filepath.Dir(path), 0o755)
	var es []safetensors.Entry
	for i, n := range names {
		es = append(es, safetensors.F32(n, compute.F32, compute.Shape{i + 1, 2}, make([]float32, 2*(i+1))))
	}
	if err := safetensors.Write(path, es, nil); err != nil {
		t.Fatal(err)
	}
}

// shardedWeights writes two shards and their index into dir.
func shardedWeights(t *testing.T, dir, prefix, index string) {
	t.Helper()
	s1, s2 := prefix+"-00001-of-00002.safetensors", prefix+"-00002-of-00002.safetensors"
	weights(t, filepath.Join(dir, s1), "a", "b")
	weights(t, filepath.Join(dir, s2), "c")
	b, _ := json.Marshal(map[string]any{"metadata": map[string]any{"total_size": 8 + 16 + 8}, "weight_map": map[string]string{"a": s1, "b": s1, "c": s2}})
	writeFile(t, filepath.Join(dir, index), string(b))
}

// partition writes a complete original-layout partition (text side
// included when text is true).
func partition(t *testing.T, root string, p Partition, text bool) {
	t.Helper()
	pd := filepath.Join(root, string(p))
	td := "testdata/original"
	if p == FL2VA {
		copyFile(t, td+"/model_index.json", pd+"/model_index.json")
	} else {
		copyFile(t, td+"/model_index_ref2va.json", pd+"/model_index.json")
	}
	copyFile(t, td+"/transformer/config.json", pd+"/transformer/config.json")
	shardedWeights(t, pd+"/transformer", "model", "model.safetensors.index.json")
	copyFile(t, td+"/video_vae/config.json", pd+"/video_vae/config.json")
	copyFile(t, td+"/video_vae/source/config.json", pd+"/video_vae/source/config.json")
	weights(t, pd+"/video_vae/source/model.safetensors", "encoder.conv_in.weight")
	for _, f := range []string{"config.json", "config.yaml", "metadata.json"} {
		copyFile(t, td+"/audio_vae/"+f, pd+"/audio_vae/"+f)
	}
	weights(t, pd+"/audio_vae/model.safetensors", "x", "y")
	if text {
		copyFile(t, "testdata/text_encoder/config.json", pd+"/text_encoder/config.json")
		shardedWeights(t, pd+"/text_encoder", "model", "model.safetensors.index.json")
		writeFile(t, pd+"/tokenizer/tokenizer.json", `{"version":"1.0","model":{"type":"BPE"}}`)
		writeFile(t, pd+"/tokenizer/tokenizer_config.json", `{"model_max_length":262144}`)
		copyFile(t, "testdata/text_encoder/preprocessor_config.json", pd+"/processor/preprocessor_config.json")
		copyFile(t, "testdata/text_encoder/video_preprocessor_config.json", pd+"/processor/video_preprocessor_config.json")
	}
}

// diffusersRoot writes the diffusers root layout (no text side).
func diffusersRoot(t *testing.T, root string) {
	t.Helper()
	td := "testdata/diffusers"
	copyFile(t, td+"/model_index.json", root+"/model_index.json")
	for _, tr := range []string{"transformer", "transformer_ref"} {
		copyFile(t, td+"/transformer/config.json", root+"/"+tr+"/config.json")
		shardedWeights(t, root+"/"+tr, "diffusion_pytorch_model", "diffusion_pytorch_model.safetensors.index.json")
	}
	copyFile(t, td+"/vae/config.json", root+"/vae/config.json")
	shardedWeights(t, root+"/vae", "diffusion_pytorch_model", "diffusion_pytorch_model.safetensors.index.json")
	copyFile(t, td+"/audio_vae/config.json", root+"/audio_vae/config.json")
	weights(t, root+"/audio_vae/diffusion_pytorch_model.safetensors", "w")
	copyFile(t, td+"/scheduler/scheduler_config.json", root+"/scheduler/scheduler_config.json")
	copyFile(t, td+"/audio_scheduler/scheduler_config.json", root+"/audio_scheduler/scheduler_config.json")
}

func task(r *Report, t Task) TaskReport {
	for _, x := range r.Tasks {
		if x.Task == t {
			return x
		}
	}
	return TaskReport{}
}

func TestInspectComplete(t *testing.T) {
	root := t.TempDir()
	partition(t, root, FL2VA, true)
	partition(t, root, Ref2VA, true)
	r, err := Inspect(root)
	if err != nil {
		t.Fatal(err)
	}
	if !r.OK() || len(r.Missing) != 0 {
		t.Fatalf("problems %v, missing %v", r.Problems, r.Missing)
	}
	for _, tk := range Tasks {
		if tr := task(r, tk); !tr.Available {
			t.Errorf("%s unavailable: %s", tk, tr.Why())
		}
	}
	if got := task(r, Ref2VAT).Uses[Transformer]; got != "Ref2VA/transformer" {
		t.Errorf("ref2va uses %s", got)
	}
	if len(r.Components) != 12 {
		t.Errorf("%d components", len(r.Components))
	}
	for _, c := range r.Components {
		if c.Kind == Transformer && (c.Shards != 2 || c.Tensors != 3 || c.Params != 8 || c.Bytes != 32 || c.Summary == "") {
			t.Errorf("transformer report %+v", c)
		}
	}
	cfg := r.Components[3].Config.(dit.Config) // pipeline order: tokenizer, processor, text encoder, transformer
	if cfg.Keys != dit.OriginalKeys || cfg.HiddenSize != 64 || cfg.Inner() != 96 || cfg.PatchDim() != 96 {
		t.Errorf("transformer config %+v", cfg)
	}
}

func TestInspectPartial(t *testing.T) {
	// Both partitions without the text side, plus the diffusers root: the
	// oracle's tiny snapshot. Nothing is corrupt; the text side is missing.
	root := t.TempDir()
	partition(t, root, FL2VA, false)
	partition(t, root, Ref2VA, false)
	diffusersRoot(t, root)
	r, err := Inspect(root)
	if err != nil {
		t.Fatal(err)
	}
	if !r.OK() {
		t.Fatalf("problems %v", r.Problems)
	}
	if len(r.Layouts) != 2 || r.Schedulers["scheduler"] != 12 || r.Schedulers["audio_scheduler"] != 3 {
		t.Errorf("layouts %v, schedulers %v", r.Layouts, r.Schedulers)
	}
	var kinds []string
	for _, m := range r.Missing {
		kinds = append(kinds, string(m.Kind))
	}
	if strings.Join(kinds, ",") != "tokenizer,processor,text_encoder" {
		t.Errorf("missing %v", kinds)
	}
	if tr := task(r, T2VA); tr.Available || strings.Join(stringsOf(tr.Missing), ",") != "tokenizer,text_encoder" {
		t.Errorf("t2va %+v", tr)
	}
	if m := r.Missing[1]; m.Kind != Processor || len(m.Disables) != 2 {
		t.Errorf("processor disables %v", m.Disables)
	}
	// Adding a shared text side at the root makes every task available.
	copyFile(t, "testdata/text_encoder/config.json", root+"/text_encoder/config.json")
	copyFile(t, "testdata/text_encoder/preprocessor_config.json", root+"/text_encoder/preprocessor_config.json")
	shardedWeights(t, root+"/text_encoder", "model", "model.safetensors.index.json")
	writeFile(t, root+"/text_encoder/tokenizer.json", `{}`)
	r, _ = Inspect(root)
	for _, tk := range Tasks {
		if tr := task(r, tk); !tr.Available {
			t.Errorf("%s unavailable: %s", tk, tr.Why())
		}
	}
	if got := task(r, T2VA).Uses[Tokenizer]; got != "text_encoder" {
		t.Errorf("tokenizer from %q", got)
	}
}

// stringsOf lists the kinds or tasks as plain strings, for joining.
func stringsOf[T ~string](xs []T) []string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = string(x)
	}
	return s
}

func TestInspectDiffusersOnly(t *testing.T) {
	root := t.TempDir()
	diffusersRoot(t, root)
	r, err := Inspect(root)
	if err != nil || !r.OK() {
		t.Fatalf("%v %v", err, r.Problems)
	}
	s := r.Snapshot
	if s.Layout != Diffusers || s.Find(Ref2VA, Transformer).Dir != filepath.Join(root, "transformer_ref") ||
		s.Find(FL2VA, VideoVAE).Dir != filepath.Join(root, "vae") {
		t.Errorf("discovery %+v", s)
	}
	for _, c := range r.Components {
		if c.Kind == AudioVAE {
			cfg := c.Config.(*audiovae.Config)
			if cfg.Layout != Diffusers || cfg.Hop() != 10 || cfg.SampleRate != 32000 {
				t.Errorf("audio config %+v", cfg)
			}
		}
		if c.Kind == Transformer && c.Config.(dit.Config).Keys != dit.DiffusersKeys {
			t.Errorf("key set %v", c.Config)
		}
	}
}

func TestInspectTextOnly(t *testing.T) {
	root := t.TempDir()
	copyFile(t, "testdata/text_encoder/config.json", root+"/text_encoder/config.json")
	copyFile(t, "testdata/text_encoder/preprocessor_config.json", root+"/text_encoder/preprocessor_config.json")
	shardedWeights(t, root+"/text_encoder", "model", "model.safetensors.index.json")
	r, err := Inspect(root)
	if err != nil || !r.OK() {
		t.Fatalf("%v %v", err, r.Problems)
	}
	if len(r.Components) != 2 || r.Snapshot.Layout != Loose {
		t.Errorf("components %d layout %v", len(r.Components), r.Snapshot.Layout)
	}
	te := r.Snapshot.Find(FL2VA, TextEncoder)
	if te == nil || r.Snapshot.Find(Ref2VA, Processor) == nil || r.Snapshot.Find(FL2VA, Transformer) != nil {
		t.Error("find on a text-only folder")
	}
}

func TestNotSnapshot(t *testing.T) {
	empty := t.TempDir()
	if _, err := Inspect(empty); !errors.Is(err, ErrNotSnapshot) {
		t.Errorf("empty folder: %v", err)
	}
	junk := t.TempDir()
	writeFile(t, junk+"/readme.txt", "hi")
	os.Mkdir(junk+"/photos", 0o755)
	if _, err := Inspect(junk); !errors.Is(err, ErrNotSnapshot) {
		t.Errorf("unrelated folder: %v", err)
	}
	if _, err := Inspect(junk + "/readme.txt"); !errors.Is(err, ErrNotSnapshot) {
		t.Errorf("a file: %v", err)
	}
	if _, err := Inspect(junk + "/nope"); err == nil {
		t.Error("missing folder accepted")
	}
}

// TestUnreadableFolder: a folder that cannot be read is reported as such,
// not as "not a snapshot" (as an empty folder would be).
func TestUnreadableFolder(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("permission bits do not bind root: run as a normal user to check an unreadable folder")
	}
	root := t.TempDir()
	partition(t, root, FL2VA, true)
	if err := os.Chmod(root, 0); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(root, 0o700)
	_, err := Open(root)
	if err == nil || errors.Is(err, ErrNotSnapshot) || !strings.Contains(err.Error(), "cannot read the folder") || !errors.Is(err, os.ErrPermission) {
		t.Errorf("unreadable folder: %v", err)
	}
	// A folder that can be traversed but not listed still opens: its
	// components are found by name.
	os.Chmod(root, 0o100)
	if s, err := Open(root); err != nil || s.Find(FL2VA, Transformer) == nil {
		t.Errorf("traversable folder: %v", err)
	}
}

// TestInspectDepth: a transformer config whose num_layers or
// token_refiner_num_layers disagrees with the blocks its weights hold is
// reported as corrupt, naming the field (a corrupt num_layers of
// 100,000,000 was listed as "100000000 blocks" with exit 0).
func TestInspectDepth(t *testing.T) {
	for _, c := range []struct {
		name   string
		blocks []string
		rule   string
	}{
		{"agrees", []string{"blocks.0.w", "blocks.2.w", "token_refiner.blocks.1.w"}, ""},
		{"too few blocks", []string{"blocks.0.w", "blocks.1.w", "token_refiner.blocks.1.w"}, `field "num_layers": is 3 but the weights in transformer hold 2 blocks`},
		{"refiner", []string{"blocks.2.w", "token_refiner.blocks.0.w"}, `field "token_refiner_num_layers": is 2 but the weights in transformer hold 1 blocks`},
	} {
		root := t.TempDir()
		partition(t, root, FL2VA, true)
		tr := filepath.Join(root, "FL2VA", "transformer")
		for _, f := range []string{"model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors", "model.safetensors.index.json"} {
			os.Remove(filepath.Join(tr, f))
		}
		weights(t, filepath.Join(tr, "model.safetensors"), c.blocks...)
		r, err := Inspect(root)
		if err != nil {
			t.Fatal(err)
		}
		all := ""
		for _, p := range r.Problems {
			all += p.Error + "\n"
		}
		switch {
		case c.rule == "" && !r.OK():
			t.Errorf("%s: problems %q", c.name, all)
		case c.rule != "" && (!strings.Contains(all, "FL2VA/transformer/config.json") || !strings.Contains(all, c.rule)):
			t.Errorf("%s: problems %q, want %q", c.name, all, c.rule)
		}
	}
}

// Every corruption is reported naming the offending file and the rule.
func TestInspectCorrupt(t *testing.T) {
	cases := []struct {
		name       string
		mutate     func(t *testing.T, pd string)
		file, rule string
	}{
		{"transformer config not json", func(t *testing.T, pd string) { writeFile(t, pd+"/transformer/config.json", "{ not json") },
			"FL2VA/transformer/config.json", "not a valid JSON object"},
		{"transformer config missing", func(t *testing.T, pd string) { os.Remove(pd + "/transformer/config.json") },
			"FL2VA/transformer/config.json", "file is missing"},
		{"transformer field", func(t *testing.T, pd string) { editJSON(t, pd+"/transformer/config.json", "hidden_size", -4) },
			"FL2VA/transformer/config.json", `field "hidden_size": must be in 1`},
		{"shard truncated", func(t *testing.T, pd string) {
			p := pd + "/transformer/model-00002-of-00002.safetensors"
			st, _ := os.Stat(p)
			os.Truncate(p, st.Size()-4)
		}, "model-00002-of-00002.safetensors", "beyond the"},
		{"shard missing", func(t *testing.T, pd string) { os.Remove(pd + "/transformer/model-00001-of-00002.safetensors") },
			"model-00001-of-00002.safetensors", "shard named in the index is missing"},
		{"no weights", func(t *testing.T, pd string) {
			os.Remove(pd + "/audio_vae/model.safetensors")
		}, "FL2VA/audio_vae/model.safetensors", "named by FL2VA/audio_vae/config.json"},
		{"video source folder missing", func(t *testing.T, pd string) { os.RemoveAll(pd + "/video_vae/source") },
			"FL2VA/video_vae/source/config.json", "file is missing"},
		{"video weights missing", func(t *testing.T, pd string) { os.Remove(pd + "/video_vae/source/model.safetensors") },
			"FL2VA/video_vae/source/model.safetensors", "named by"},
		{"video std", func(t *testing.T, pd string) {
			editJSON(t, pd+"/video_vae/config.json", "latents_std", make([]float64, 24))
		}, "FL2VA/video_vae/config.json", "standard deviation must be positive"},
		{"video mean length", func(t *testing.T, pd string) {
			editJSON(t, pd+"/video_vae/config.json", "latents_mean", []float64{1, 2})
		}, "FL2VA/video_vae/config.json", `field "latents_mean": must list 24 numbers`},
		{"video source ratio", func(t *testing.T, pd string) { editJSON(t, pd+"/video_vae/source/config.json", "vae_ratio", 8) },
			"FL2VA/video_vae/source/config.json", "space_down multiplies to 4"},
		{"audio metadata missing", func(t *testing.T, pd string) { os.Remove(pd + "/audio_vae/metadata.json") },
			"FL2VA/audio_vae/metadata.json", "file is missing"},
		{"audio yaml missing", func(t *testing.T, pd string) { os.Remove(pd + "/audio_vae/config.yaml") },
			"FL2VA/audio_vae/config.yaml", "source_config_path"},
		{"audio hop", func(t *testing.T, pd string) {
			b, _ := os.ReadFile(pd + "/audio_vae/metadata.json")
			writeFile(t, pd+"/audio_vae/metadata.json", strings.Replace(string(b), `"decoder_rates": [
        5,
        2
      ]`, `"decoder_rates": [5, 3]`, 1))
		}, "FL2VA/audio_vae/metadata.json", "must agree on the hop"},
		{"model index partition", func(t *testing.T, pd string) {
			b, _ := os.ReadFile(pd + "/model_index.json")
			writeFile(t, pd+"/model_index.json", strings.Replace(string(b), `"partition": "fl2va"`, `"partition": "ref2va"`, 1))
		}, "FL2VA/model_index.json", "sits in the FL2VA partition"},
		{"model index task", func(t *testing.T, pd string) {
			b, _ := os.ReadFile(pd + "/model_index.json")
			writeFile(t, pd+"/model_index.json", strings.Replace(string(b), `"t2va",`, `"i2v",`, 1))
		}, "FL2VA/model_index.json", `unknown task "i2v"`},
		{"model index json", func(t *testing.T, pd string) { writeFile(t, pd+"/model_index.json", "[]") },
			"FL2VA/model_index.json", "not a valid JSON object"},
		{"text config", func(t *testing.T, pd string) {
			b, _ := os.ReadFile(pd + "/text_encoder/config.json")
			writeFile(t, pd+"/text_encoder/config.json", strings.Replace(string(b), `"num_key_value_heads": 2`, `"num_key_value_heads": 3`, 1))
		}, "FL2VA/text_encoder/config.json", `"text_config.num_key_value_heads": 3 does not divide`},
		{"tokenizer not json", func(t *testing.T, pd string) { writeFile(t, pd+"/tokenizer/tokenizer.json", "hello") },
			"FL2VA/tokenizer/tokenizer.json", "not a JSON object"},
		{"tokenizer missing", func(t *testing.T, pd string) { os.Remove(pd + "/tokenizer/tokenizer.json") },
			"FL2VA/tokenizer/tokenizer.json", "missing"},
		{"processor", func(t *testing.T, pd string) {
			editJSON(t, pd+"/processor/preprocessor_config.json", "image_std", []float64{0.5, 0, 0.5})
		},
			"FL2VA/processor/preprocessor_config.json", "must be positive"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			partition(t, root, FL2VA, true)
			c.mutate(t, filepath.Join(root, "FL2VA"))
			r, err := Inspect(root)
			if err != nil {
				t.Fatal(err)
			}
			if r.OK() {
				t.Fatalf("corruption not reported (want %s: %q)", c.file, c.rule)
			}
			all := ""
			for _, p := range r.Problems {
				all += p.Error + "\n"
			}
			if !strings.Contains(all, c.file) || !strings.Contains(all, c.rule) {
				t.Fatalf("problems %q do not name %s and %q", all, c.file, c.rule)
			}
			for _, tr := range r.Tasks {
				if tr.Available && tr.Partition == FL2VA && len(tr.Broken) > 0 {
					t.Errorf("%s available despite broken %v", tr.Task, tr.Broken)
				}
			}
		})
	}
}

func editJSON(t *testing.T, path, field string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	json.Unmarshal(b, &m)
	m[field] = v
	b, _ = json.Marshal(m)
	writeFile(t, path, string(b))
}

func TestDemoMarker(t *testing.T) {
	root := t.TempDir()
	partition(t, root, FL2VA, true)
	editJSON(t, root+"/FL2VA/model_index.json", "_h3studio", map[string]any{"demo": true, "note": "tiny"})
	r, err := Inspect(root)
	if err != nil || !r.OK() || !r.Demo || r.DemoNote != "tiny" {
		t.Fatalf("demo %v %q: %v %v", r.Demo, r.DemoNote, err, r.Problems)
	}
	// Undeclared tasks are unavailable.
	b, _ := os.ReadFile(root + "/FL2VA/model_index.json")
	writeFile(t, root+"/FL2VA/model_index.json", strings.Replace(string(b), `"t2va",`, ``, 1))
	r, _ = Inspect(root)
	if tr := task(r, T2VA); tr.Available || !tr.Undeclared || !strings.Contains(tr.Why(), "not declared") {
		t.Errorf("undeclared t2va: %+v", tr)
	}
}

// TestReportText: the people's report of a complete, a partial, a corrupt
// and a demo snapshot — its name, the tasks it can run, why not, and what
// the text says.
func TestReportText(t *testing.T) {
	for _, c := range []struct {
		name     string
		make     func(t *testing.T, root string)
		title    string
		tasks    []Task
		unusable string // a fragment of Unusable(); "" when usable
		want     []string
	}{
		{"complete", func(t *testing.T, root string) {
			partition(t, root, FL2VA, true)
			partition(t, root, Ref2VA, true)
		}, "MiniMax-H3 FL2VA + Ref2VA", []Task{T2VA, FL2VAT, Ref2VAT}, "",
			[]string{"MiniMax-H3 snapshot\n", "original release layout", "FL2VA: FL2VA/model_index.json, tasks t2va, fl2va",
				"FL2VA/transformer", "Ref2VA/audio_vae", "t2va    available (FL2VA partition)", "ref2va  available (Ref2VA partition)", "total: "}},
		{"FL2VA only", func(t *testing.T, root string) { partition(t, root, FL2VA, true) },
			"MiniMax-H3 FL2VA", []Task{T2VA, FL2VAT}, "",
			[]string{"ref2va  unavailable (Ref2VA partition): missing transformer", "Missing components:", "disables ref2va"}},
		{"no text encoder", func(t *testing.T, root string) { partition(t, root, FL2VA, false) },
			"MiniMax-H3 snapshot (incomplete)", nil, "missing tokenizer, text encoder",
			[]string{"t2va    unavailable (FL2VA partition): missing tokenizer, text encoder"}},
		{"corrupt", func(t *testing.T, root string) {
			partition(t, root, FL2VA, true)
			writeFile(t, filepath.Join(root, "FL2VA", "audio_vae", "model.safetensors"), "garbage")
		}, "MiniMax-H3 snapshot (incomplete)", nil, "corrupt audio VAE",
			[]string{"CORRUPT: ", "Corrupt files:", "audio_vae/model.safetensors"}},
		{"demo", func(t *testing.T, root string) {
			partition(t, root, FL2VA, true)
			editJSON(t, root+"/FL2VA/model_index.json", "_h3studio", map[string]any{"demo": true, "name": "Tiny demo"})
		}, "Tiny demo", []Task{T2VA, FL2VAT}, "", []string{"Tiny demo — not the released model\n"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			c.make(t, root)
			r, err := Inspect(root)
			if err != nil {
				t.Fatal(err)
			}
			if got := r.Name(); got != c.title {
				t.Errorf("Name %q, want %q", got, c.title)
			}
			if got := r.AvailableTasks(); strings.Join(stringsOf(got), ",") != strings.Join(stringsOf(c.tasks), ",") {
				t.Errorf("AvailableTasks %v, want %v", got, c.tasks)
			}
			u := r.Unusable()
			if (c.unusable == "") != (u == "") || !strings.Contains(u, c.unusable) {
				t.Errorf("Unusable %q, want %q", u, c.unusable)
			}
			text := r.Text()
			for _, w := range c.want {
				if !strings.Contains(text, w) {
					t.Errorf("text lacks %q:\n%s", w, text)
				}
			}
			var b strings.Builder
			r.WriteText(&b)
			if b.String() != text {
				t.Error("WriteText and Text differ")
			}
		})
	}
}

// TestReportTextStable: two inspections of one folder give the same text
// (the scheduler map is printed in name order).
func TestReportTextStable(t *testing.T) {
	root := t.TempDir()
	diffusersRoot(t, root)
	var first string
	for i := 0; i < 5; i++ {
		r, err := Inspect(root)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = r.Text()
			continue
		}
		if r.Text() != first {
			t.Fatalf("the text changed between inspections:\n%s\n---\n%s", first, r.Text())
		}
	}
}

func TestHumanUnits(t *testing.T) {
	for _, c := range []struct {
		n            int64
		bytes, count string
	}{
		{0, "0 B", "0"},
		{999, "999 B", "999"},
		{1000, "1.0 kB", "1.0 k"},
		{151_300_000, "151.3 MB", "151.3 M"},
		{66_300_000_000, "66.3 GB", "66.3 B"},
		{1_234_000_000_000, "1.23 TB", "1234.0 B"},
	} {
		if got := HumanBytes(c.n); got != c.bytes {
			t.Errorf("HumanBytes(%d) = %q, want %q", c.n, got, c.bytes)
		}
		if got := HumanCount(c.n); got != c.count {
			t.Errorf("HumanCount(%d) = %q, want %q", c.n, got, c.count)
		}
	}
}
