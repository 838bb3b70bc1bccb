package snapshot

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
)

// This file holds the typed, validated configuration of every component, in
// both on-disk layouts (spec H3-DIT.md §1, H3-ENCODERS-VAES.md §2). Each
// Read* function returns a *ConfigError naming the file and the field on
// the first problem. Component packages build their model configs from
// these.

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
	o, err := readObject(path)
	if err != nil {
		return nil, err
	}
	return modelIndexFrom(o)
}

func modelIndexFrom(o *object) (*ModelIndex, error) {
	mi := &ModelIndex{Path: o.path, Components: map[string][2]string{}, VideoShift: 12, AudioShift: 3}
	mi.ClassName = o.className("MiniMaxH3Pipeline", "MiniMaxH3ModularPipeline")
	for _, name := range sortedKeys(o.m) {
		if strings.HasPrefix(name, "_") {
			continue
		}
		raw := bytes.TrimSpace(o.m[name])
		if bytes.Equal(raw, []byte("null")) {
			mi.Null = append(mi.Null, name)
			continue
		}
		var entry []json.RawMessage
		if err := json.Unmarshal(raw, &entry); err != nil || len(entry) < 2 || len(entry) > 3 {
			o.fail(name, "must be null or [library, class] (optionally with a spec object), got %s", clip(raw))
			break
		}
		var lib, class string
		if json.Unmarshal(entry[0], &lib) != nil || json.Unmarshal(entry[1], &class) != nil || lib == "" || class == "" {
			o.fail(name, "must name a library and a class as strings, got %s", clip(raw))
			break
		}
		mi.Components[name] = [2]string{lib, class}
	}
	if h := o.sub("_minimax_h3", true); h != nil {
		mi.HasH3 = true
		mi.SchemaVersion = h.intIn("schema_version", 1, 1)
		mi.Partition = h.str("partition")
		if o.Err() == nil && mi.Partition != "fl2va" && mi.Partition != "ref2va" {
			h.fail("partition", "must be \"fl2va\" or \"ref2va\", got %q", mi.Partition)
		}
		var tasks []string
		if h.decode("tasks", &tasks, "a list of task names") {
			for _, t := range tasks {
				if !knownTasks[t] {
					h.fail("tasks", "names the unknown task %q (known: t2va, fl2va, ref2va)", t)
				}
			}
			mi.Tasks = tasks
		}
		if h.has("task_aliases") {
			h.decode("task_aliases", &mi.TaskAliases, "an object of strings")
		}
		if s := h.sub("sigma_shift_scales", true); s != nil {
			mi.VideoShift = s.posFloat("video")
			mi.AudioShift = s.posFloat("audio")
		}
		if h.has("base_schedule") {
			var n []json.Number
			if h.decode("base_schedule", &n, "a list of numbers") {
				mi.BaseSchedule = h.floats("base_schedule", len(n))
				checkBaseSchedule(h, mi.BaseSchedule)
			}
		}
	}
	if d := o.sub("_h3studio", true); d != nil {
		mi.Demo = d.optBool("demo", false)
		mi.DemoNote = d.optStr("note", "")
		mi.DemoName = d.optStr("name", "")
	}
	if err := o.Err(); err != nil {
		return nil, err
	}
	return mi, nil
}

func checkBaseSchedule(o *object, b []float64) {
	if o.Err() != nil {
		return
	}
	if len(b) < 2 || b[0] != 1 || b[len(b)-1] != 0 {
		o.fail("base_schedule", "must start at 1 and end at 0 with at least two points")
		return
	}
	for i := 1; i < len(b); i++ {
		if !(b[i] < b[i-1]) || b[i] < 0 {
			o.fail("base_schedule", "must be strictly decreasing within [0, 1] (entry %d is %v after %v)", i, b[i], b[i-1])
			return
		}
	}
}

// TransformerConfig is transformer/config.json in either key set: the
// original release's (MiniMaxH3DiTModel: ffn_hidden_size, latents_dim, …) or
// the diffusers one (MiniMaxH3Transformer3DModel: ffn_dim, in_channels, …).
type TransformerConfig struct {
	Path   string
	KeySet string // "original" or "diffusers"

	HiddenSize         int
	NumLayers          int
	NumRefinerLayers   int
	NumHeads           int
	HeadDim            int
	FFNDim             int
	InChannels         int // video latent channels (24)
	AudioInChannels    int // audio latent channels (32)
	PatchSize          [3]int
	TextDim            int
	FreqDim            int // sinusoid width
	TimeEmbedHiddenDim int
	TimeEmbedDim       int
	RopeFreqDim        int // inverse frequencies per axis
	RopeTheta          float64
	NormEps            float64
	QKNormEps          float64
	FinalNormEps       float64
}

// Inner is heads × head dim (7168 released; not the hidden size).
func (c *TransformerConfig) Inner() int { return c.NumHeads * c.HeadDim }

// VideoRowWidth is the width of a patchified video row (96 released).
func (c *TransformerConfig) VideoRowWidth() int {
	return c.InChannels * c.PatchSize[0] * c.PatchSize[1] * c.PatchSize[2]
}

// transformerKeys maps each field to its (original, diffusers) key.
var transformerKeys = []struct{ orig, diff string }{
	{"hidden_size", "hidden_size"},
	{"num_layers", "num_layers"},
	{"token_refiner_num_layers", "num_refiner_layers"},
	{"num_attention_heads", "num_attention_heads"},
	{"attention_head_dim", "attention_head_dim"},
	{"ffn_hidden_size", "ffn_dim"},
	{"latents_dim", "in_channels"},
	{"audio_latents_dim", "audio_in_channels"},
	{"text_dim", "text_dim"},
	{"timestep_input_dim", "freq_dim"},
	{"time_embed_hidden_size", "time_embed_hidden_dim"},
	{"time_embed_dim", "time_embed_dim"},
	{"rope_inv_freq_len", "rope_freq_dim"},
}

// ReadTransformerConfig reads and validates a transformer config.json.
func ReadTransformerConfig(path string) (*TransformerConfig, error) {
	o, err := readObject(path)
	if err != nil {
		return nil, err
	}
	return transformerFrom(o)
}

func transformerFrom(o *object) (*TransformerConfig, error) {
	c := &TransformerConfig{Path: o.path}
	class := o.className("MiniMaxH3DiTModel", "MiniMaxH3Transformer3DModel")
	switch {
	case class == "MiniMaxH3DiTModel":
		c.KeySet = "original"
	case class == "MiniMaxH3Transformer3DModel":
		c.KeySet = "diffusers"
	case o.has("ffn_hidden_size") || o.has("latents_dim") || o.has("token_refiner_num_layers"):
		c.KeySet = "original"
	default:
		c.KeySet = "diffusers"
	}
	key := func(i int) string {
		if c.KeySet == "original" {
			return transformerKeys[i].orig
		}
		return transformerKeys[i].diff
	}
	dst := []*int{&c.HiddenSize, &c.NumLayers, &c.NumRefinerLayers, &c.NumHeads, &c.HeadDim, &c.FFNDim,
		&c.InChannels, &c.AudioInChannels, &c.TextDim, &c.FreqDim, &c.TimeEmbedHiddenDim, &c.TimeEmbedDim, &c.RopeFreqDim}
	for i, p := range dst {
		if i == 2 { // the refiner may be absent in principle
			*p = o.optInt(key(i), 0, 1<<20, 2)
			continue
		}
		*p = o.posInt(key(i))
	}
	if ps := o.ints("patch_size", 3, 1); ps != nil {
		c.PatchSize = [3]int{ps[0], ps[1], ps[2]}
		if c.PatchSize[0] != 1 {
			o.fail("patch_size", "temporal patch %d is not supported (the packed layout needs 1)", c.PatchSize[0])
		}
	}
	c.RopeTheta = o.optFloat("rope_theta", 10000)
	c.NormEps = o.optFloat("norm_eps", 1e-5)
	c.QKNormEps = o.optFloat("qk_norm_eps", 1e-5)
	c.FinalNormEps = o.optFloat("final_norm_eps", 1e-5)
	for f, v := range map[string]float64{"rope_theta": c.RopeTheta, "norm_eps": c.NormEps, "qk_norm_eps": c.QKNormEps, "final_norm_eps": c.FinalNormEps} {
		if o.Err() == nil && !(v > 0) {
			o.fail(f, "must be positive, got %v", v)
		}
	}
	if o.Err() == nil {
		switch {
		case 6*c.RopeFreqDim > c.HeadDim:
			o.fail(key(12), "%d frequencies per axis rotate %d channels, more than the head dim %d", c.RopeFreqDim, 6*c.RopeFreqDim, c.HeadDim)
		case c.FreqDim%2 != 0:
			o.fail(key(9), "the sinusoid width must be even, got %d", c.FreqDim)
		}
	}
	if c.KeySet == "original" && o.Err() == nil {
		if o.has("adaln_out_features") {
			if v := o.posInt("adaln_out_features"); o.Err() == nil && v != 18*c.HiddenSize {
				o.fail("adaln_out_features", "is %d; the AdaLN table holds 3 modalities × 6 × hidden_size = %d", v, 18*c.HiddenSize)
			}
		}
		if o.has("final_adaln_out_features") {
			if v := o.posInt("final_adaln_out_features"); o.Err() == nil && v != 2*c.HiddenSize {
				o.fail("final_adaln_out_features", "is %d; the final modulation holds shift and scale = %d", v, 2*c.HiddenSize)
			}
		}
	}
	if err := o.Err(); err != nil {
		return nil, err
	}
	return c, nil
}

// VideoVAEConfig is the video VAE's configuration: the original wrapper
// video_vae/config.json with its source/config.json, or the diffusers
// vae/config.json.
type VideoVAEConfig struct {
	Path   string // the wrapper or diffusers config.json
	Layout Layout

	LatentChannels          int
	LatentsMean, LatentsStd []float64
	ClipLength              int // pixel frames per encoded clip (17)
	TokenDrop               int // latent frames dropped at the end (3)
	SpatialCompression      int // 16 released
	TemporalCompression     int // 4 released
	TileSize                int // original wrapper: 256
	TileOverlapMin          int // original wrapper: 64
	DecoderLayers           int // ViT decoder blocks
	DecoderHeads            int
	DecoderHeadDim          int

	// Original layout: the source model's config and weights.
	SourceConfig string // video_vae/source/config.json
	WeightsDir   string // video_vae/source (original) or vae (diffusers)
	WeightsFile  string // source_safetensors_path (original), "" for the diffusers index
}

// ReadVideoVAEConfig reads the video VAE config of a component folder: dir
// is video_vae/ (original: the wrapper config names the source folder, whose
// config.json is read too) or vae/ (diffusers).
func ReadVideoVAEConfig(dir string, layout Layout) (*VideoVAEConfig, error) {
	o, err := readObject(filepath.Join(dir, "config.json"))
	if err != nil {
		return nil, err
	}
	if layout != Original {
		return videoVAEDiffusersFrom(o, dir)
	}
	c, err := videoWrapperFrom(o, dir)
	if err != nil {
		return nil, err
	}
	s, err := readObject(c.SourceConfig)
	if err != nil {
		return nil, err
	}
	if err := videoSourceFrom(s, c); err != nil {
		return nil, err
	}
	if err := checkVideoGeometry(c); err != nil {
		return nil, err
	}
	return c, nil
}

// checkVideoGeometry checks the chunking and tiling values against the
// compression factors, as the video VAE's loader does (engine/videovae
// Config.Validate): token_drop at most one clip's latents (its decode
// windows would read past the latents), the tile size a multiple of the
// spatial compression and the overlap a smaller one.
func checkVideoGeometry(c *VideoVAEConfig) error {
	drop, tile, overlap := "vae_token_drop", "vae_tile_size", "vae_tile_overlap_min"
	if c.Layout != Original {
		drop = "token_drop"
	}
	if c.TemporalCompression > 0 {
		if chunk := (c.ClipLength + c.TemporalCompression - 1) / c.TemporalCompression; c.TokenDrop > chunk {
			return &ConfigError{Path: c.Path, Field: drop, Rule: fmt.Sprintf("%d exceeds the %d latents of one %d-frame clip (temporal compression %d)", c.TokenDrop, chunk, c.ClipLength, c.TemporalCompression)}
		}
	}
	if r := c.SpatialCompression; c.TileSize != 0 && r > 0 {
		if c.TileSize%r != 0 {
			return &ConfigError{Path: c.Path, Field: tile, Rule: fmt.Sprintf("%d is not a multiple of the spatial compression %d", c.TileSize, r)}
		}
		if c.TileOverlapMin%r != 0 || c.TileOverlapMin >= c.TileSize {
			return &ConfigError{Path: c.Path, Field: overlap, Rule: fmt.Sprintf("%d must be a multiple of the spatial compression %d smaller than the tile size %d", c.TileOverlapMin, r, c.TileSize)}
		}
	}
	return nil
}

// videoWrapperFrom reads the original wrapper config (MiniMaxH3VideoVAE).
func videoWrapperFrom(o *object, dir string) (*VideoVAEConfig, error) {
	c := &VideoVAEConfig{Path: o.path, Layout: Original}
	o.className("MiniMaxH3VideoVAE")
	src := o.optStr("source_path", "source")
	c.WeightsFile = o.optStr("source_safetensors_path", "model.safetensors")
	if o.Err() == nil && !plainName(src) {
		o.fail("source_path", "must name a folder inside video_vae/, got %q", src)
	}
	if o.Err() == nil && !plainName(c.WeightsFile) {
		o.fail("source_safetensors_path", "must name a file inside the source folder, got %q", c.WeightsFile)
	}
	c.WeightsDir = filepath.Join(dir, src)
	c.SourceConfig = filepath.Join(c.WeightsDir, "config.json")
	c.LatentChannels = o.posInt("latent_channels")
	c.LatentsMean = o.floats("latents_mean", c.LatentChannels)
	c.LatentsStd = o.floats("latents_std", c.LatentChannels)
	c.ClipLength = o.optInt("vae_clip_length", 1, 1<<16, 17)
	c.TokenDrop = o.optInt("vae_token_drop", 0, 1<<16, 3)
	c.TileSize = o.optInt("vae_tile_size", 16, 1<<16, 256)
	c.TileOverlapMin = o.optInt("vae_tile_overlap_min", 0, 1<<16, 64)
	checkStd(o, c.LatentsStd)
	if err := o.Err(); err != nil {
		return nil, err
	}
	return c, nil
}

// videoSourceFrom reads the original source config (AutoencoderKLLegacy).
func videoSourceFrom(s *object, c *VideoVAEConfig) error {
	s.className("AutoencoderKLLegacy")
	if e := s.posInt("embed_dim"); s.Err() == nil && e != c.LatentChannels {
		s.fail("embed_dim", "is %d but the wrapper's latent_channels is %d", e, c.LatentChannels)
	}
	s.posInt("ch")
	s.ints("ch_mult", -1, 1)
	c.SpatialCompression = product(s.ints("space_down", -1, 1))
	c.TemporalCompression = product(s.ints("time_down", -1, 1))
	if s.has("vae_ratio") {
		if r := s.posInt("vae_ratio"); s.Err() == nil && r != c.SpatialCompression {
			s.fail("vae_ratio", "is %d but space_down multiplies to %d", r, c.SpatialCompression)
		}
	}
	if s.has("vae_ratio_t") {
		if r := s.posInt("vae_ratio_t"); s.Err() == nil && r != c.TemporalCompression {
			s.fail("vae_ratio_t", "is %d but time_down multiplies to %d", r, c.TemporalCompression)
		}
	}
	if s.optBool("use_vit_decoder", true) {
		k := s.sub("vit_decoder_kwargs", false)
		c.DecoderLayers = k.posInt("num_layers")
		c.DecoderHeads = k.posInt("heads")
		c.DecoderHeadDim = k.posInt("dim_head")
		k.posFloat("rope_theta")
		k.posFloat("rope_dim_ratio")
	}
	return s.Err()
}

// videoVAEDiffusersFrom reads vae/config.json (AutoencoderKLMiniMaxH3).
func videoVAEDiffusersFrom(o *object, dir string) (*VideoVAEConfig, error) {
	c := &VideoVAEConfig{Path: o.path, Layout: Diffusers, WeightsDir: dir}
	o.className("AutoencoderKLMiniMaxH3")
	c.LatentChannels = o.posInt("latent_channels")
	c.LatentsMean = o.floats("latents_mean", c.LatentChannels)
	c.LatentsStd = o.floats("latents_std", c.LatentChannels)
	o.ints("block_out_channels", -1, 1)
	o.posInt("layers_per_block")
	c.SpatialCompression = product(o.ints("spatial_downsample_factors", -1, 1))
	c.TemporalCompression = product(o.ints("temporal_downsample_factors", -1, 1))
	c.DecoderLayers = o.posInt("decoder_num_layers")
	c.DecoderHeads = o.posInt("decoder_num_attention_heads")
	c.DecoderHeadDim = o.posInt("decoder_attention_head_dim")
	c.ClipLength = o.optInt("clip_length", 1, 1<<16, 17)
	c.TokenDrop = o.optInt("token_drop", 0, 1<<16, 3)
	checkStd(o, c.LatentsStd)
	if err := o.Err(); err != nil {
		return nil, err
	}
	if err := checkVideoGeometry(c); err != nil {
		return nil, err
	}
	return c, nil
}

func checkStd(o *object, std []float64) {
	if o.Err() != nil {
		return
	}
	for i, s := range std {
		if err := checkStat(float32(s), true); err != "" {
			o.fail("latents_std", "entry %d is %v; a standard deviation %s", i, s, err)
			return
		}
	}
}

// LatentStats converts a VAE config's latents_mean and latents_std as
// torch.tensor(list) does (the nearest float32 of each number); path names
// the file when one is missing. CheckLatentStats checks them.
func LatentStats(path string, mean, std []float64) (m, s []float32, err error) {
	for _, k := range []struct {
		key string
		v   []float64
	}{{"latents_mean", mean}, {"latents_std", std}} {
		if k.v == nil {
			return nil, nil, fmt.Errorf("%s: missing required key %q", path, k.key)
		}
	}
	f32 := func(v []float64) []float32 {
		out := make([]float32, len(v))
		for i, x := range v {
			out[i] = float32(x)
		}
		return out
	}
	return f32(mean), f32(std), nil
}

// CheckLatentStats checks a VAE's latent normalization, z_norm =
// (z − mean)/std per channel: one mean and one standard deviation per
// latent channel, every deviation positive and finite, every mean finite.
// The error says which entry breaks which rule (the VAE packages prefix
// their name; the snapshot report, which checks the files' numbers the
// same way, names the file and field).
func CheckLatentStats(mean, std []float32, channels int) error {
	if len(mean) != channels || len(std) != channels {
		return fmt.Errorf("latents_mean has %d and latents_std %d values for %d latent channels", len(mean), len(std), channels)
	}
	for i := range std {
		if err := checkStat(std[i], true); err != "" {
			return fmt.Errorf("latents_std[%d] = %v %s", i, std[i], err)
		}
		if err := checkStat(mean[i], false); err != "" {
			return fmt.Errorf("latents_mean[%d] = %v %s", i, mean[i], err)
		}
	}
	return nil
}

// checkStat is the rule of one statistic: finite, and positive for a
// standard deviation ("" when it holds).
func checkStat(v float32, deviation bool) string {
	f := float64(v)
	switch {
	case math.IsNaN(f) || math.IsInf(f, 0):
		return "must be finite"
	case deviation && !(v > 0):
		return "must be positive"
	}
	return ""
}

func product(v []int) int {
	if v == nil {
		return 0
	}
	p := 1
	for _, x := range v {
		p *= x
	}
	return p
}

func plainName(s string) bool {
	return s != "" && s != "." && s != ".." && !strings.ContainsAny(s, `/\`)
}

// AudioVAEConfig is the audio VAE's configuration: the original config.json
// with its metadata.json (constructor kwargs) and config.yaml, or the
// diffusers config.json.
type AudioVAEConfig struct {
	Path   string
	Layout Layout

	SampleRate              int
	LatentChannels          int
	LatentsMean, LatentsStd []float64
	EncoderDim              int
	EncoderRates            []int
	LatentDim               int
	DecoderDim              int
	DecoderRates            []int
	HopLength               int // samples per latent: the product of the encoder rates (800 released)

	// Original layout: the files config.json names.
	MetadataPath, YAMLPath string
	WeightsFile            string // "" means any *.safetensors in the folder
}

// ReadAudioVAEConfig reads the audio VAE config of an audio_vae/ folder: the
// original config.json (MiniMaxH3AudioVAE) with the metadata.json and
// config.yaml it names, or the diffusers config.json
// (AutoencoderKLMiniMaxH3Audio). The file's own class decides; a config
// naming source files is read as the original one.
func ReadAudioVAEConfig(dir string, layout Layout) (*AudioVAEConfig, error) {
	o, err := readObject(filepath.Join(dir, "config.json"))
	if err != nil {
		return nil, err
	}
	if !isOriginalAudio(o) {
		return audioDiffusersFrom(o)
	}
	c, err := audioOriginalFrom(o, dir)
	if err != nil {
		return nil, err
	}
	m, err := readObject(c.MetadataPath)
	if err != nil {
		return nil, err
	}
	if err := audioMetadataFrom(m, c); err != nil {
		return nil, err
	}
	if st, err := os.Stat(c.YAMLPath); err != nil || st.IsDir() || st.Size() == 0 {
		return nil, &ConfigError{Path: c.YAMLPath, Rule: "named by config.json (source_config_path) but missing or empty"}
	}
	return c, nil
}

func isOriginalAudio(o *object) bool {
	if o.has("_class_name") {
		var c string
		if json.Unmarshal(o.m["_class_name"], &c) == nil {
			return c == "MiniMaxH3AudioVAE"
		}
	}
	return o.has("source_metadata_path") || o.has("source_config_path") || o.has("source_safetensors_path")
}

func audioOriginalFrom(o *object, dir string) (*AudioVAEConfig, error) {
	c := &AudioVAEConfig{Path: o.path, Layout: Original}
	o.className("MiniMaxH3AudioVAE")
	meta := o.optStr("source_metadata_path", "metadata.json")
	yaml := o.optStr("source_config_path", "config.yaml")
	c.WeightsFile = o.optStr("source_safetensors_path", "model.safetensors")
	for _, f := range []struct{ field, v string }{{"source_metadata_path", meta}, {"source_config_path", yaml}, {"source_safetensors_path", c.WeightsFile}} {
		if o.Err() == nil && !plainName(f.v) {
			o.fail(f.field, "must name a file inside audio_vae/, got %q", f.v)
		}
	}
	c.MetadataPath, c.YAMLPath = filepath.Join(dir, meta), filepath.Join(dir, yaml)
	c.SampleRate = o.posInt("sample_rate")
	if ch := o.optInt("output_channel", 1, 2, 2); o.Err() == nil && ch != 2 {
		o.fail("output_channel", "is %d; the model generates stereo (2)", ch)
	}
	c.LatentChannels = o.posInt("latent_channels")
	c.LatentsMean = o.floats("latents_mean", c.LatentChannels)
	c.LatentsStd = o.floats("latents_std", c.LatentChannels)
	checkStd(o, c.LatentsStd)
	if err := o.Err(); err != nil {
		return nil, err
	}
	return c, nil
}

// audioMetadataFrom reads metadata.json's constructor kwargs.
func audioMetadataFrom(m *object, c *AudioVAEConfig) error {
	k := m.sub("metadata", false).sub("kwargs", false)
	c.EncoderDim = k.posInt("encoder_dim")
	c.EncoderRates = k.ints("encoder_rates", -1, 1)
	c.LatentDim = k.posInt("latent_dim")
	c.DecoderDim = k.posInt("decoder_dim")
	c.DecoderRates = k.ints("decoder_rates", -1, 1)
	if v := k.posInt("vae_latent_channels"); k.Err() == nil && v != c.LatentChannels {
		k.fail("vae_latent_channels", "is %d but config.json's latent_channels is %d", v, c.LatentChannels)
	}
	if k.has("sample_rate") {
		if v := k.posInt("sample_rate"); k.Err() == nil && v != c.SampleRate {
			k.fail("sample_rate", "is %d but config.json's sample_rate is %d", v, c.SampleRate)
		}
	}
	checkHop(k, c)
	return m.Err()
}

func audioDiffusersFrom(o *object) (*AudioVAEConfig, error) {
	c := &AudioVAEConfig{Path: o.path, Layout: Diffusers}
	o.className("AutoencoderKLMiniMaxH3Audio")
	c.SampleRate = o.posInt(o.firstOr("sampling_rate", "sample_rate"))
	c.LatentChannels = o.posInt("latent_channels")
	c.LatentsMean = o.floats("latents_mean", c.LatentChannels)
	c.LatentsStd = o.floats("latents_std", c.LatentChannels)
	checkStd(o, c.LatentsStd)
	c.EncoderDim = o.posInt("encoder_dim")
	c.EncoderRates = o.ints("encoder_rates", -1, 1)
	c.LatentDim = o.posInt("latent_dim")
	c.DecoderDim = o.posInt("decoder_dim")
	c.DecoderRates = o.ints("decoder_rates", -1, 1)
	if o.has("decoder_kernel_sizes") {
		o.ints("decoder_kernel_sizes", len(c.DecoderRates), 1)
	}
	checkHop(o, c)
	if err := o.Err(); err != nil {
		return nil, err
	}
	return c, nil
}

func (o *object) firstOr(keys ...string) string {
	if k := o.first(keys...); k != "" {
		return k
	}
	return keys[0]
}

func checkHop(o *object, c *AudioVAEConfig) {
	if o.Err() != nil {
		return
	}
	c.HopLength = product(c.EncoderRates)
	if d := product(c.DecoderRates); d != c.HopLength {
		o.fail("decoder_rates", "multiply to %d but the encoder rates multiply to %d; encoder and decoder must agree on the hop", d, c.HopLength)
	}
}

// TextEncoderConfig is text_encoder/config.json (Qwen3-VL).
type TextEncoderConfig struct {
	Path string

	HiddenSize, NumLayers, NumHeads, NumKVHeads, HeadDim, IntermediateSize, VocabSize int
	RMSNormEps, RopeTheta                                                             float64
	MRopeSection                                                                      []int

	VisionDepth, VisionHidden, VisionHeads, VisionPatch, VisionTemporalPatch, VisionMerge, VisionOut int
	DeepstackIndexes                                                                                 []int

	ImageTokenID, VideoTokenID, VisionStartID, VisionEndID int
}

// ReadTextEncoderConfig reads and validates text_encoder/config.json.
func ReadTextEncoderConfig(path string) (*TextEncoderConfig, error) {
	o, err := readObject(path)
	if err != nil {
		return nil, err
	}
	return textEncoderFrom(o)
}

func textEncoderFrom(o *object) (*TextEncoderConfig, error) {
	c := &TextEncoderConfig{Path: o.path}
	if o.has("model_type") {
		if mt := o.str("model_type"); o.Err() == nil && mt != "qwen3_vl" {
			o.fail("model_type", "is %q; the text encoder is a Qwen3-VL (\"qwen3_vl\")", mt)
		}
	}
	t := o.sub("text_config", false)
	c.HiddenSize = t.posInt("hidden_size")
	c.NumLayers = t.posInt("num_hidden_layers")
	c.NumHeads = t.posInt("num_attention_heads")
	c.NumKVHeads = t.posInt("num_key_value_heads")
	c.HeadDim = t.posInt("head_dim")
	c.IntermediateSize = t.posInt("intermediate_size")
	c.VocabSize = t.posInt("vocab_size")
	c.RMSNormEps = t.posFloat("rms_norm_eps")
	c.RopeTheta = t.posFloat("rope_theta")
	if t.Err() == nil && c.NumHeads%c.NumKVHeads != 0 {
		t.fail("num_key_value_heads", "%d does not divide the %d attention heads", c.NumKVHeads, c.NumHeads)
	}
	if rs := t.sub("rope_scaling", true); rs != nil && rs.has("mrope_section") {
		c.MRopeSection = rs.ints("mrope_section", 3, 0)
		if t.Err() == nil && sum(c.MRopeSection) != c.HeadDim/2 {
			rs.fail("mrope_section", "sums to %d; the three M-RoPE sections must cover head_dim/2 = %d", sum(c.MRopeSection), c.HeadDim/2)
		}
	}
	v := o.sub("vision_config", false)
	c.VisionDepth = v.posInt("depth")
	c.VisionHidden = v.posInt("hidden_size")
	c.VisionHeads = v.posInt("num_heads")
	c.VisionPatch = v.posInt("patch_size")
	c.VisionTemporalPatch = v.optInt("temporal_patch_size", 1, 64, 2)
	c.VisionMerge = v.optInt("spatial_merge_size", 1, 64, 2)
	c.VisionOut = v.posInt("out_hidden_size")
	if v.has("deepstack_visual_indexes") {
		var idx []json.Number
		if v.decode("deepstack_visual_indexes", &idx, "a list of integers") {
			c.DeepstackIndexes = v.ints("deepstack_visual_indexes", len(idx), 0)
		}
	}
	if o.Err() == nil {
		switch {
		case c.VisionHidden%c.VisionHeads != 0:
			v.fail("num_heads", "%d heads do not divide the vision width %d", c.VisionHeads, c.VisionHidden)
		case c.VisionOut != c.HiddenSize:
			v.fail("out_hidden_size", "is %d but the language model's hidden_size is %d", c.VisionOut, c.HiddenSize)
		}
		for _, i := range c.DeepstackIndexes {
			if o.Err() == nil && i >= c.VisionDepth {
				v.fail("deepstack_visual_indexes", "index %d is beyond the %d vision blocks", i, c.VisionDepth)
			}
		}
	}
	c.ImageTokenID = o.optInt("image_token_id", 0, 1<<31, 151655)
	c.VideoTokenID = o.optInt("video_token_id", 0, 1<<31, 151656)
	c.VisionStartID = o.optInt("vision_start_token_id", 0, 1<<31, 151652)
	c.VisionEndID = o.optInt("vision_end_token_id", 0, 1<<31, 151653)
	if o.Err() == nil {
		for f, id := range map[string]int{"image_token_id": c.ImageTokenID, "video_token_id": c.VideoTokenID, "vision_start_token_id": c.VisionStartID, "vision_end_token_id": c.VisionEndID} {
			if id >= c.VocabSize && o.Err() == nil {
				o.fail(f, "token id %d is outside the %d-entry vocabulary", id, c.VocabSize)
			}
		}
	}
	if err := o.Err(); err != nil {
		return nil, err
	}
	return c, nil
}

func sum(v []int) int {
	s := 0
	for _, x := range v {
		s += x
	}
	return s
}

// SchedulerConfig is a diffusers scheduler/scheduler_config.json.
type SchedulerConfig struct {
	Path  string
	Shift float64
}

// ReadSchedulerConfig reads and validates a scheduler config.
func ReadSchedulerConfig(path string) (*SchedulerConfig, error) {
	o, err := readObject(path)
	if err != nil {
		return nil, err
	}
	return schedulerFrom(o)
}

func schedulerFrom(o *object) (*SchedulerConfig, error) {
	o.className("MiniMaxH3Scheduler")
	c := &SchedulerConfig{Path: o.path, Shift: o.posFloat("shift")}
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
		return nil, &ConfigError{Path: t.JSON, Rule: "file is missing or unreadable", Err: err}
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.IsDir() {
		return nil, &ConfigError{Path: t.JSON, Rule: "is not a readable file"}
	}
	t.Bytes = st.Size()
	head := make([]byte, 64)
	n, _ := f.Read(head)
	if trimmed := bytes.TrimLeft(head[:n], " \t\r\n\ufeff"); len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, &ConfigError{Path: t.JSON, Rule: "is not a JSON object"}
	}
	if c := filepath.Join(dir, "tokenizer_config.json"); fileExists(c) {
		if _, err := readObject(c); err != nil {
			return nil, err
		}
		t.ConfigJSON = c
	}
	return t, nil
}

// ProcessorConfig is the Qwen3-VL image processor's preprocessor_config.json
// (in processor/ or, as the released text encoder carries a copy, in
// text_encoder/).
type ProcessorConfig struct {
	Path                     string
	PatchSize, TemporalPatch int
	MergeSize                int
	MinPixels, MaxPixels     int
	Mean, Std                []float64
	VideoPath                string // video_preprocessor_config.json ("" when absent)
}

// ReadProcessorConfig reads the processor configs of a folder.
func ReadProcessorConfig(dir string) (*ProcessorConfig, error) {
	o, err := readObject(filepath.Join(dir, "preprocessor_config.json"))
	if err != nil {
		return nil, err
	}
	c, err := processorFrom(o)
	if err != nil {
		return nil, err
	}
	if v := filepath.Join(dir, "video_preprocessor_config.json"); fileExists(v) {
		vo, err := readObject(v)
		if err != nil {
			return nil, err
		}
		vo.posInt("patch_size")
		if err := vo.Err(); err != nil {
			return nil, err
		}
		c.VideoPath = v
	}
	return c, nil
}

func processorFrom(o *object) (*ProcessorConfig, error) {
	c := &ProcessorConfig{Path: o.path}
	c.PatchSize = o.posInt("patch_size")
	c.TemporalPatch = o.optInt("temporal_patch_size", 1, 64, 2)
	c.MergeSize = o.optInt("merge_size", 1, 64, 2)
	if s := o.sub("size", true); s != nil {
		c.MinPixels = s.posInt("shortest_edge")
		c.MaxPixels = s.posInt("longest_edge")
	} else {
		c.MinPixels = o.posInt("min_pixels")
		c.MaxPixels = o.posInt("max_pixels")
	}
	if o.Err() == nil && c.MinPixels > c.MaxPixels {
		o.fail("size", "the minimum %d pixels exceed the maximum %d", c.MinPixels, c.MaxPixels)
	}
	c.Mean = o.floats("image_mean", 3)
	c.Std = o.floats("image_std", 3)
	checkStd(o, c.Std)
	if err := o.Err(); err != nil {
		return nil, err
	}
	return c, nil
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// configSummary is a one-line description of a parsed config.
func configSummary(cfg any) string {
	switch c := cfg.(type) {
	case *TransformerConfig:
		return fmt.Sprintf("%s keys: hidden %d, %d blocks + %d refiner, %d×%d heads, ffn %d, text %d",
			c.KeySet, c.HiddenSize, c.NumLayers, c.NumRefinerLayers, c.NumHeads, c.HeadDim, c.FFNDim, c.TextDim)
	case *VideoVAEConfig:
		return fmt.Sprintf("%d latent channels, %d× spatial, %d× temporal, %d-layer ViT decoder",
			c.LatentChannels, c.SpatialCompression, c.TemporalCompression, c.DecoderLayers)
	case *AudioVAEConfig:
		return fmt.Sprintf("%d latent channels, %d Hz, hop %d (%g latents/s)",
			c.LatentChannels, c.SampleRate, c.HopLength, float64(c.SampleRate)/float64(c.HopLength))
	case *TextEncoderConfig:
		return fmt.Sprintf("Qwen3-VL: hidden %d, %d layers, %d/%d heads; vision %d blocks",
			c.HiddenSize, c.NumLayers, c.NumHeads, c.NumKVHeads, c.VisionDepth)
	case *TokenizerFiles:
		return fmt.Sprintf("tokenizer.json %s", humanBytes(c.Bytes))
	case *ProcessorConfig:
		return fmt.Sprintf("patch %d, merge %d, %d … %d pixels", c.PatchSize, c.MergeSize, c.MinPixels, c.MaxPixels)
	case *SchedulerConfig:
		return fmt.Sprintf("shift %g", c.Shift)
	}
	return ""
}
