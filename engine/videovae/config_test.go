package videovae

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"h3studio/engine/configfile"
	"h3studio/engine/configfile/configtest"
	"h3studio/engine/testkit"
)

func writeConfigs(t testing.TB, wrapper, source map[string]any) (string, string) {
	t.Helper()
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "source"), 0o755)
	for p, v := range map[string]map[string]any{filepath.Join(dir, "config.json"): wrapper, filepath.Join(dir, "source", "config.json"): source} {
		if v == nil {
			continue
		}
		b, _ := json.Marshal(v)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, filepath.Join(dir, "source")
}

// Both layouts' configs describe the same model.
func TestReadConfigBothLayouts(t *testing.T) {
	o, err := ReadConfig("testdata/original/video_vae", "testdata/original/video_vae/source")
	if err != nil {
		t.Fatal(err)
	}
	d, err := ReadConfig("testdata/diffusers/vae", "testdata/diffusers/vae")
	if err != nil {
		t.Fatal(err)
	}
	if o.Layout != Original || d.Layout != Diffusers {
		t.Fatalf("layouts %v, %v", o.Layout, d.Layout)
	}
	d.Layout, o.Layout = 0, 0
	d.DecoderFFNHidden = 0 // the original layout learns it from ff.w1 at load
	o.WeightsFile = ""     // only the original wrapper names its weights file
	oj, _ := json.Marshal(o)
	dj, _ := json.Marshal(d)
	if string(oj) != string(dj) {
		t.Fatalf("original %s\ndiffusers %s", oj, dj)
	}
	if o.SpatialRatio() != 4 || o.TemporalRatio() != 4 || o.RotaryDim() != 24 || o.ClipLength != 17 || o.TokenDrop != 3 || o.TileSize != 256 || o.TileOverlap != 64 {
		t.Fatalf("tiny config %+v", o)
	}
}

func TestReadConfigRejects(t *testing.T) {
	wrapper := configtest.ReadJSON(t, "testdata/original/video_vae/config.json")
	source := configtest.ReadJSON(t, "testdata/original/video_vae/source/config.json")
	clone := func(m map[string]any) map[string]any {
		b, _ := json.Marshal(m)
		var c map[string]any
		json.Unmarshal(b, &c)
		return c
	}
	for _, c := range []struct {
		name string
		edit func(w, s map[string]any)
		rule string
	}{
		{"no clip length", func(w, s map[string]any) { delete(w, "vae_clip_length") }, `field "vae_clip_length": is missing`},
		{"token drop beyond a clip", func(w, s map[string]any) { w["vae_token_drop"] = 99 }, `field "vae_token_drop": 99 exceeds the 5 latents of one 17-frame clip`},
		{"token drop beyond a short clip", func(w, s map[string]any) { w["vae_clip_length"] = 4; w["vae_token_drop"] = 2 }, `field "vae_token_drop": 2 exceeds the 1 latents of one 4-frame clip`},
		{"short mean", func(w, s map[string]any) { w["latents_mean"] = []float64{1, 2} }, `field "latents_mean": must list 24 numbers, got 2`},
		{"zero std", func(w, s map[string]any) { w["latents_std"].([]any)[3] = 0.0 }, `field "latents_std": entry 3 is 0; a standard deviation must be positive`},
		{"ratio", func(w, s map[string]any) { s["vae_ratio"] = 16 }, `field "vae_ratio": is 16 but space_down multiplies to 4`},
		{"latent channels", func(w, s map[string]any) {
			w["latent_channels"] = 16
			w["latents_mean"], w["latents_std"] = w["latents_mean"].([]any)[:16], w["latents_std"].([]any)[:16]
		}, `field "embed_dim": is 24 but the wrapper's latent_channels is 16`},
		{"rope", func(w, s map[string]any) { s["vit_decoder_kwargs"].(map[string]any)["rope_dim_ratio"] = 0.5 }, "rotary width 16"},
		{"cnn decoder", func(w, s map[string]any) { s["use_vit_decoder"] = false }, `field "use_vit_decoder": is false`},
		{"tile", func(w, s map[string]any) { w["vae_tile_size"] = 250 }, `field "vae_tile_size": 250 is not a multiple of the spatial compression 4`},
		{"class", func(w, s map[string]any) { w["_class_name"] = "AutoencoderKL" }, `field "_class_name": is "AutoencoderKL"; this file must describe MiniMaxH3VideoVAE`},
		{"groups", func(w, s map[string]any) { s["ch"] = 16 }, "is not a positive multiple of norm_num_groups 32"},
		{"resnet depth", func(w, s map[string]any) { s["num_res_blocks"] = 100_000_000 }, "implausibly large: layers_per_block 100000000"},
		{"decoder depth", func(w, s map[string]any) { s["vit_decoder_kwargs"].(map[string]any)["num_layers"] = 100_000_000 }, "decoder layers 100000000"},
		{"clip length", func(w, s map[string]any) { w["vae_clip_length"] = 100_000_000 }, `field "vae_clip_length": must be in 1 … 65536, got 100000000`},
	} {
		w, s := clone(wrapper), clone(source)
		c.edit(w, s)
		cd, wd := writeConfigs(t, w, s)
		_, err := ReadConfig(cd, wd)
		if err == nil || !strings.Contains(err.Error(), c.rule) {
			t.Errorf("%s: %v, want an error containing %q", c.name, err, c.rule)
		}
	}
	cd, wd := writeConfigs(t, wrapper, nil)
	if _, err := ReadConfig(cd, wd); err == nil || !strings.Contains(err.Error(), "source/config.json: file is missing") {
		t.Errorf("missing source config: %v", err)
	}
}

// FuzzReadConfig: any bytes in either config file give a config that
// validates or an error, never a panic.
func FuzzReadConfig(f *testing.F) {
	w, _ := os.ReadFile("testdata/original/video_vae/config.json")
	s, _ := os.ReadFile("testdata/original/video_vae/source/config.json")
	d, _ := os.ReadFile("testdata/diffusers/vae/config.json")
	f.Add(w, s)
	f.Add(d, []byte("{}"))
	f.Add([]byte(`{"_class_name":"MiniMaxH3VideoVAE","vae_clip_length":0,"vae_token_drop":-1,"latent_channels":24}`), s)
	f.Fuzz(func(t *testing.T, wrapper, source []byte) {
		c, err := ParseConfig("config.json", wrapper, "source/config.json", source)
		if err == nil {
			if err := c.Validate(); err != nil {
				t.Fatalf("ParseConfig returned an invalid config: %v", err)
			}
			if _, err := c.Temporal().PlanDecode(7); err != nil && c.TokenDrop == 3 && c.ClipLength == 17 && c.TemporalRatio() == 4 {
				t.Fatalf("released chunking refused: %v", err)
			}
		}
	})
}

// configFileParsers read each of the package's config files from bytes; the
// examples are the synthetic snapshot's (engine/snapshot/testdata).
var configFileParsers = []configtest.Parser{
	{Name: "video_wrapper", File: "../snapshot/testdata/original/video_vae/config.json", Parse: func(o *configfile.Object) (any, error) {
		c := wrapperFrom(o)
		return c, o.Err()
	}},
	{Name: "video_source", File: "../snapshot/testdata/original/video_vae/source/config.json", Parse: func(o *configfile.Object) (any, error) {
		c := &Config{LatentChannels: 24}
		sourceFrom(o, c)
		return c, o.Err()
	}},
	{Name: "vae_diffusers", File: "../snapshot/testdata/diffusers/vae/config.json", Parse: func(o *configfile.Object) (any, error) {
		return fromObjects(o, nil)
	}},
}

func TestConfigFilesValid(t *testing.T) { configtest.CheckValid(t, configFileParsers) }

// Every field rule of the config file readers, each naming the field.
func TestConfigFileRules(t *testing.T) {
	configtest.CheckRules(t, configFileParsers, []configtest.Rule{
		{Parser: "video_wrapper", Mutate: configtest.Set("source_path", "../elsewhere"), Field: "source_path", Rule: "must name a folder inside video_vae/"},
		{Parser: "video_wrapper", Mutate: configtest.Set("source_safetensors_path", "a/b.safetensors"), Field: "source_safetensors_path", Rule: "must name a file"},
		{Parser: "video_wrapper", Mutate: configtest.Set("latent_channels", 16), Field: "latents_mean", Rule: "must list 16 numbers"},
		{Parser: "video_wrapper", Mutate: configtest.Set("latents_mean", "x"), Field: "latents_mean", Rule: "must be a list of numbers"},
		{Parser: "video_wrapper", Mutate: configtest.Set("vae_clip_length", 0), Field: "vae_clip_length", Rule: "must be in 1"},
		{Parser: "video_source", Mutate: configtest.Set("embed_dim", 16), Field: "embed_dim", Rule: "latent_channels is 24"},
		{Parser: "video_source", Mutate: configtest.Set("time_down", []any{}), Field: "time_down", Rule: "one or more integers"},
		{Parser: "video_source", Mutate: configtest.Set("vae_ratio_t", 2), Field: "vae_ratio_t", Rule: "time_down multiplies to 4"},
		{Parser: "video_source", Mutate: configtest.Nested("vit_decoder_kwargs", "heads", 0), Field: "vit_decoder_kwargs.heads", Rule: "must be in 1"},
		{Parser: "video_source", Mutate: configtest.Set("vit_decoder_kwargs", 5), Field: "vit_decoder_kwargs", Rule: "must be an object"},
		{Parser: "vae_diffusers", Mutate: configtest.Set("latents_std", make([]float64, 24)), Field: "latents_std", Rule: "must be positive"},
		{Parser: "vae_diffusers", Mutate: configtest.Set("spatial_downsample_factors", []any{2, -2}), Field: "spatial_downsample_factors", Rule: "entry 1 must be an integer ≥ 1"},
		{Parser: "vae_diffusers", Mutate: configtest.Set("_class_name", "AutoencoderKL"), Field: "_class_name", Rule: "AutoencoderKLMiniMaxH3"},
		{Parser: "vae_diffusers", Mutate: configtest.Set("token_drop", 99), Field: "token_drop", Rule: "exceeds the 5 latents of one 17-frame clip"},
	})
}

// FuzzConfigFiles feeds arbitrary bytes to every config file reader: never
// a panic, and an error is always a *configfile.Error naming the file.
func FuzzConfigFiles(f *testing.F) { configtest.Fuzz(f, configFileParsers) }

// TestVideoGeometryRules: the original layout's chunking and tiling values
// are checked against the source config's compression factors, naming the
// wrapper's field.
func TestVideoGeometryRules(t *testing.T) {
	src := testkit.ReadFile(t, "../snapshot/testdata/original/video_vae/source/config.json")
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
		m := configtest.Find(t, configFileParsers, "video_wrapper").Load(t)
		m[c.key] = c.value
		if err := os.MkdirAll(dir+"/source", 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(dir+"/config.json", configtest.MustJSON(m), 0o644)
		os.WriteFile(dir+"/source/config.json", src, 0o644)
		_, err := ReadConfig(dir, dir+"/source")
		var ce *configfile.Error
		if !errors.As(err, &ce) || ce.Field != c.field || !strings.Contains(ce.Rule, c.rule) {
			t.Errorf("%s = %v: got %v, want field %q and rule %q", c.key, c.value, err, c.field, c.rule)
		}
	}
}
