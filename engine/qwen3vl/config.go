package qwen3vl

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"h3studio/engine/configfile"
)

// Config is the text encoder's config.json (transformers'
// Qwen3VLConfig: a text_config, a vision_config and the special token ids),
// read in the released key layout. Both the older rope_scaling + rope_theta
// keys and the newer rope_parameters object are accepted.
type Config struct {
	Text   TextConfig   `json:"text_config"`
	Vision VisionConfig `json:"vision_config"`

	ImageTokenID       int64 `json:"image_token_id"`
	VideoTokenID       int64 `json:"video_token_id"`
	VisionStartTokenID int64 `json:"vision_start_token_id"`
	VisionEndTokenID   int64 `json:"vision_end_token_id"`
}

// TextConfig is the language model's part of the config.
type TextConfig struct {
	HiddenSize        int     `json:"hidden_size"`
	NumLayers         int     `json:"num_hidden_layers"`
	NumHeads          int     `json:"num_attention_heads"`
	NumKVHeads        int     `json:"num_key_value_heads"`
	HeadDim           int     `json:"head_dim"`
	IntermediateSize  int     `json:"intermediate_size"`
	VocabSize         int     `json:"vocab_size"`
	RMSNormEps        float64 `json:"rms_norm_eps"`
	HiddenAct         string  `json:"hidden_act"`
	AttentionBias     bool    `json:"attention_bias"`
	MaxPositions      int     `json:"max_position_embeddings"`
	RopeTheta         float64 `json:"rope_theta"`
	RopeScaling       *Rope   `json:"rope_scaling"`
	RopeParameters    *Rope   `json:"rope_parameters"`
	TieWordEmbeddings bool    `json:"tie_word_embeddings"`
}

// Rope is the rotary configuration (rope_scaling or rope_parameters).
type Rope struct {
	RopeType         string   `json:"rope_type"`
	MropeSection     []int    `json:"mrope_section"`
	MropeInterleaved bool     `json:"mrope_interleaved"`
	RopeTheta        *float64 `json:"rope_theta"`
}

// VisionConfig is the vision tower's part of the config.
type VisionConfig struct {
	Depth             int    `json:"depth"`
	HiddenSize        int    `json:"hidden_size"`
	IntermediateSize  int    `json:"intermediate_size"`
	NumHeads          int    `json:"num_heads"`
	HiddenAct         string `json:"hidden_act"`
	InChannels        int    `json:"in_channels"`
	PatchSize         int    `json:"patch_size"`
	TemporalPatchSize int    `json:"temporal_patch_size"`
	SpatialMergeSize  int    `json:"spatial_merge_size"`
	NumPositions      int    `json:"num_position_embeddings"`
	OutHiddenSize     int    `json:"out_hidden_size"`
	DeepstackIndexes  []int  `json:"deepstack_visual_indexes"`
}

// ReleasedTapLayers is the number of decoder layers H3 runs on the released
// 64-layer model: it conditions on hidden_states[50], the residual stream
// after decoder layer index 49 (H3-ENCODERS-VAES.md §6.1).
const (
	ReleasedTapLayers = 50
	ReleasedNumLayers = 64
)

// TapLayers is the number of decoder layers whose output H3 uses:
// round(50/64 · num_hidden_layers) with Python's rounding (50 for the
// release, 5 for the oracle's 6-layer tiny model).
func (c *Config) TapLayers() int {
	return int(math.RoundToEven(float64(ReleasedTapLayers) / float64(ReleasedNumLayers) * float64(c.Text.NumLayers)))
}

// MropeSection is the interleaved M-RoPE split [t, h, w] of the head_dim/2
// frequencies.
func (c *Config) MropeSection() []int {
	for _, r := range []*Rope{c.Text.RopeParameters, c.Text.RopeScaling} {
		if r != nil && len(r.MropeSection) > 0 {
			return r.MropeSection
		}
	}
	return nil
}

// Theta is the text rotary base.
func (c *Config) Theta() float64 {
	for _, r := range []*Rope{c.Text.RopeParameters, c.Text.RopeScaling} {
		if r != nil && r.RopeTheta != nil {
			return *r.RopeTheta
		}
	}
	return c.Text.RopeTheta
}

// VisionHeadDim is the vision attention head size.
func (c *Config) VisionHeadDim() int { return c.Vision.HiddenSize / c.Vision.NumHeads }

// MergedWidth is the width of one merged vision token before the merger
// MLP (hidden · merge²).
func (c *Config) MergedWidth() int {
	return c.Vision.HiddenSize * c.Vision.SpatialMergeSize * c.Vision.SpatialMergeSize
}

// PatchInputs is the length of one patch vector (channels · temporal patch ·
// patch²).
func (c *Config) PatchInputs() int {
	return c.Vision.InChannels * c.Vision.TemporalPatchSize * c.Vision.PatchSize * c.Vision.PatchSize
}

// PositionGrid is the side of the learned vision position table.
func (c *Config) PositionGrid() int {
	return int(math.Round(math.Sqrt(float64(c.Vision.NumPositions))))
}

// ConfigError reports an invalid config.json: the file and the field.
type ConfigError struct {
	Path  string
	Field string
	Rule  string
}

func (e *ConfigError) Error() string {
	return fmt.Sprintf("qwen3vl: %s: %s: %s", e.Path, e.Field, e.Rule)
}

// ReadConfig reads and validates dir/config.json (see ParseConfig).
func ReadConfig(dir string) (*Config, error) {
	return configfile.ReadAs(filepath.Join(dir, "config.json"), configFrom)
}

// ParseConfig parses and validates config bytes; path names them in errors.
// The file's fields are read and checked over configfile (a
// *configfile.Error naming the field), then the whole object is decoded
// into Config and validated (Validate's problem as a *configfile.Error).
func ParseConfig(path string, b []byte) (*Config, error) {
	o, err := configfile.Parse(path, b)
	if err != nil {
		return nil, err
	}
	return configFrom(o)
}

func configFrom(o *configfile.Object) (*Config, error) {
	checkFields(o)
	if err := o.Err(); err != nil {
		return nil, err
	}
	var c Config
	if err := o.Into(&c); err != nil {
		return nil, &configfile.Error{Path: o.Path, Rule: "does not have the layout of a Qwen3-VL config", Err: err}
	}
	if err := c.Validate(); err != nil {
		var ce *ConfigError
		if errors.As(err, &ce) {
			return nil, &configfile.Error{Path: o.Path, Field: ce.Field, Rule: ce.Rule}
		}
		return nil, err
	}
	return &c, nil
}

// checkFields reads the fields of config.json that the snapshot report
// checks, recording the first problem in o.
func checkFields(o *configfile.Object) {
	if o.Has("model_type") {
		if mt := o.Str("model_type"); o.Err() == nil && mt != "qwen3_vl" {
			o.Fail("model_type", "is %q; the text encoder is a Qwen3-VL (\"qwen3_vl\")", mt)
		}
	}
	t := o.Sub("text_config", false)
	hidden := t.PosInt("hidden_size")
	t.PosInt("num_hidden_layers")
	heads := t.PosInt("num_attention_heads")
	kv := t.PosInt("num_key_value_heads")
	headDim := t.PosInt("head_dim")
	t.PosInt("intermediate_size")
	vocab := t.PosInt("vocab_size")
	t.PosFloat("rms_norm_eps")
	t.PosFloat("rope_theta")
	if t.Err() == nil && heads%kv != 0 {
		t.Fail("num_key_value_heads", "%d does not divide the %d attention heads", kv, heads)
	}
	if rs := t.Sub("rope_scaling", true); rs != nil && rs.Has("mrope_section") {
		sec := rs.Ints("mrope_section", 3, 0)
		if t.Err() == nil && sum(sec) != headDim/2 {
			rs.Fail("mrope_section", "sums to %d; the three M-RoPE sections must cover head_dim/2 = %d", sum(sec), headDim/2)
		}
	}
	v := o.Sub("vision_config", false)
	depth := v.PosInt("depth")
	vhidden := v.PosInt("hidden_size")
	vheads := v.PosInt("num_heads")
	v.PosInt("patch_size")
	v.OptInt("temporal_patch_size", 1, 64, 2)
	v.OptInt("spatial_merge_size", 1, 64, 2)
	out := v.PosInt("out_hidden_size")
	var deepstack []int
	if v.Has("deepstack_visual_indexes") {
		var idx []json.Number
		if v.Decode("deepstack_visual_indexes", &idx, "a list of integers") {
			deepstack = v.Ints("deepstack_visual_indexes", len(idx), 0)
		}
	}
	if o.Err() == nil {
		switch {
		case vhidden%vheads != 0:
			v.Fail("num_heads", "%d heads do not divide the vision width %d", vheads, vhidden)
		case out != hidden:
			v.Fail("out_hidden_size", "is %d but the language model's hidden_size is %d", out, hidden)
		}
		for _, i := range deepstack {
			if o.Err() == nil && i >= depth {
				v.Fail("deepstack_visual_indexes", "index %d is beyond the %d vision blocks", i, depth)
			}
		}
	}
	ids := []struct {
		field string
		def   int
	}{{"image_token_id", 151655}, {"video_token_id", 151656}, {"vision_start_token_id", 151652}, {"vision_end_token_id", 151653}}
	for _, id := range ids {
		if v := o.OptInt(id.field, 0, 1<<31, id.def); o.Err() == nil && v >= vocab {
			o.Fail(id.field, "token id %d is outside the %d-entry vocabulary", v, vocab)
		}
	}
}

func sum(v []int) int {
	s := 0
	for _, x := range v {
		s += x
	}
	return s
}

// Summary is the one-line description the snapshot report prints.
func (c *Config) Summary() string {
	return fmt.Sprintf("Qwen3-VL: hidden %d, %d layers, %d/%d heads; vision %d blocks",
		c.Text.HiddenSize, c.Text.NumLayers, c.Text.NumHeads, c.Text.NumKVHeads, c.Vision.Depth)
}

// Validate checks every value the implementation relies on.
func (c *Config) Validate() error {
	bad := func(field, rule string, args ...any) error {
		return &ConfigError{Field: field, Rule: fmt.Sprintf(rule, args...)}
	}
	t, v := &c.Text, &c.Vision
	pos := []struct {
		name string
		v    int
	}{
		{"text_config.hidden_size", t.HiddenSize}, {"text_config.num_hidden_layers", t.NumLayers},
		{"text_config.num_attention_heads", t.NumHeads}, {"text_config.num_key_value_heads", t.NumKVHeads},
		{"text_config.head_dim", t.HeadDim}, {"text_config.intermediate_size", t.IntermediateSize},
		{"text_config.vocab_size", t.VocabSize},
		{"vision_config.depth", v.Depth}, {"vision_config.hidden_size", v.HiddenSize},
		{"vision_config.intermediate_size", v.IntermediateSize}, {"vision_config.num_heads", v.NumHeads},
		{"vision_config.in_channels", v.InChannels}, {"vision_config.patch_size", v.PatchSize},
		{"vision_config.temporal_patch_size", v.TemporalPatchSize}, {"vision_config.spatial_merge_size", v.SpatialMergeSize},
		{"vision_config.num_position_embeddings", v.NumPositions}, {"vision_config.out_hidden_size", v.OutHiddenSize},
	}
	for _, p := range pos {
		if p.v <= 0 || p.v > 1<<24 {
			return bad(p.name, "must be a positive integer below 2^24, have %d", p.v)
		}
	}
	if t.NumLayers > 4096 || v.Depth > 4096 || t.HeadDim > 4096 || v.PatchSize > 1024 || v.SpatialMergeSize > 64 || v.TemporalPatchSize > 64 || v.InChannels > 64 {
		return bad("(dimensions)", "implausibly large configuration")
	}
	if t.NumHeads%t.NumKVHeads != 0 {
		return bad("text_config.num_key_value_heads", "%d does not divide num_attention_heads %d", t.NumKVHeads, t.NumHeads)
	}
	if t.HeadDim%2 != 0 {
		return bad("text_config.head_dim", "must be even, have %d", t.HeadDim)
	}
	if !(t.RMSNormEps > 0) {
		return bad("text_config.rms_norm_eps", "must be positive, have %g", t.RMSNormEps)
	}
	if t.HiddenAct != "silu" {
		return bad("text_config.hidden_act", "only silu is implemented, have %q", t.HiddenAct)
	}
	if t.AttentionBias {
		return bad("text_config.attention_bias", "true is not implemented (the release has none)")
	}
	if !(c.Theta() > 0) {
		return bad("text_config.rope_theta", "must be positive, have %g", c.Theta())
	}
	sec := c.MropeSection()
	if len(sec) != 3 {
		return bad("text_config.rope_scaling.mrope_section", "want 3 entries [t, h, w], have %v", sec)
	}
	if sum := sec[0] + sec[1] + sec[2]; sum != t.HeadDim/2 {
		return bad("text_config.rope_scaling.mrope_section", "%v sums to %d, want head_dim/2 = %d", sec, sum, t.HeadDim/2)
	}
	interleaved := false
	for _, r := range []*Rope{t.RopeParameters, t.RopeScaling} {
		if r != nil && len(r.MropeSection) > 0 {
			interleaved = r.MropeInterleaved
			if r.RopeType != "" && r.RopeType != "default" {
				return bad("text_config.rope_scaling.rope_type", "only \"default\" is implemented, have %q", r.RopeType)
			}
			break
		}
	}
	if !interleaved {
		return bad("text_config.rope_scaling.mrope_interleaved", "must be true (Qwen3-VL's interleaved M-RoPE)")
	}
	if 3*sec[1] > t.HeadDim/2 || 3*sec[2] > t.HeadDim/2 {
		return bad("text_config.rope_scaling.mrope_section", "%v does not fit interleaved into %d frequencies", sec, t.HeadDim/2)
	}
	if v.HiddenSize%v.NumHeads != 0 || (v.HiddenSize/v.NumHeads)%4 != 0 {
		return bad("vision_config.num_heads", "head size %d/%d must be an integer multiple of 4", v.HiddenSize, v.NumHeads)
	}
	if v.HiddenAct != "gelu_pytorch_tanh" {
		return bad("vision_config.hidden_act", "only gelu_pytorch_tanh is implemented, have %q", v.HiddenAct)
	}
	if g := c.PositionGrid(); g*g != v.NumPositions || g < 2 {
		return bad("vision_config.num_position_embeddings", "%d is not a square ≥ 4", v.NumPositions)
	}
	if v.OutHiddenSize != t.HiddenSize {
		return bad("vision_config.out_hidden_size", "%d differs from text hidden_size %d", v.OutHiddenSize, t.HiddenSize)
	}
	for i, d := range v.DeepstackIndexes {
		if d < 0 || d >= v.Depth || (i > 0 && d <= v.DeepstackIndexes[i-1]) {
			return bad("vision_config.deepstack_visual_indexes", "%v must be increasing block indexes below depth %d", v.DeepstackIndexes, v.Depth)
		}
	}
	if tap := c.TapLayers(); len(v.DeepstackIndexes) > tap {
		return bad("vision_config.deepstack_visual_indexes", "%d deepstack features but only %d decoder layers run", len(v.DeepstackIndexes), tap)
	}
	ids := []struct {
		name string
		v    int64
	}{{"image_token_id", c.ImageTokenID}, {"video_token_id", c.VideoTokenID},
		{"vision_start_token_id", c.VisionStartTokenID}, {"vision_end_token_id", c.VisionEndTokenID}}
	for _, id := range ids {
		if id.v <= 0 || id.v >= int64(t.VocabSize) {
			return bad(id.name, "%d outside the vocabulary [1, %d)", id.v, t.VocabSize)
		}
	}
	return nil
}

// ProcessorConfig holds the image and video preprocessor settings
// (preprocessor_config.json, video_preprocessor_config.json).
type ProcessorConfig struct {
	// PatchSize, TemporalPatch and MergeSize are the processors' patching;
	// they must equal the vision tower's.
	PatchSize, TemporalPatch, MergeSize int
	Image                               PixelLimits
	Video                               PixelLimits
	// Mean and Std are the per-channel normalization (0.5 in the release).
	Mean, Std [3]float64
}

// PixelLimits bounds the resized pixel count (size.shortest_edge and
// size.longest_edge are pixel counts in Qwen's processors, not edges).
type PixelLimits struct {
	MinPixels, MaxPixels int
}

// ReleasedProcessor is the released preprocessor configuration
// (H3-ENCODERS-VAES.md §2.3).
var ReleasedProcessor = ProcessorConfig{
	PatchSize: 16, TemporalPatch: 2, MergeSize: 2,
	Image: PixelLimits{MinPixels: 65536, MaxPixels: 16777216},
	Video: PixelLimits{MinPixels: 4096, MaxPixels: 25165824},
	Mean:  [3]float64{0.5, 0.5, 0.5},
	Std:   [3]float64{0.5, 0.5, 0.5},
}

// Summary is a one-line description for the snapshot report.
func (pc ProcessorConfig) Summary() string {
	return fmt.Sprintf("patch %d, merge %d, %d … %d pixels", pc.PatchSize, pc.MergeSize, pc.Image.MinPixels, pc.Image.MaxPixels)
}

// ReadProcessorConfig reads the two preprocessor configs from dir (the text
// encoder or processor folder), the one reader of these files. Each file
// gives its pixel limits; the patching and the normalization are
// preprocessor_config.json's (the video file's when it is alone). A missing
// file falls back to the released values (the diffusers text_encoder/
// carries none); a present but invalid one is a *configfile.Error naming
// the file and field, as is one whose patching disagrees with the model
// config c (nil: not compared).
func ReadProcessorConfig(dir string, c *Config) (ProcessorConfig, error) {
	pc := ReleasedProcessor
	if c != nil {
		pc.PatchSize, pc.TemporalPatch, pc.MergeSize = c.Vision.PatchSize, c.Vision.TemporalPatchSize, c.Vision.SpatialMergeSize
	}
	read := false
	for i, name := range []string{"preprocessor_config.json", "video_preprocessor_config.json"} {
		path := filepath.Join(dir, name)
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			continue
		}
		o, err := configfile.Read(path)
		if err != nil {
			return pc, err
		}
		f, err := processorFrom(o, c)
		if err != nil {
			return pc, err
		}
		if !read {
			pc.PatchSize, pc.TemporalPatch, pc.MergeSize, pc.Mean, pc.Std = f.PatchSize, f.TemporalPatch, f.MergeSize, f.Mean, f.Std
			read = true
		}
		if i == 0 {
			pc.Image = f.Image
		} else {
			pc.Video = f.Image
		}
	}
	return pc, nil
}

// processorFrom reads one preprocessor config (its pixel limits in Image),
// comparing its patching with the model config c when c is set; the first
// problem is recorded in o and returned.
func processorFrom(o *configfile.Object, c *Config) (ProcessorConfig, error) {
	var f ProcessorConfig
	lim := &f.Image
	if s := o.Sub("size", true); s != nil {
		lim.MinPixels = s.PosInt("shortest_edge")
		lim.MaxPixels = s.PosInt("longest_edge")
	} else {
		lim.MinPixels = o.PosInt("min_pixels")
		lim.MaxPixels = o.PosInt("max_pixels")
	}
	if o.Err() == nil && lim.MinPixels > lim.MaxPixels {
		o.Fail("size", "the minimum %d pixels exceed the maximum %d", lim.MinPixels, lim.MaxPixels)
	}
	f.PatchSize = o.PosInt("patch_size")
	f.TemporalPatch = o.OptInt("temporal_patch_size", 1, 64, 2)
	f.MergeSize = o.OptInt("merge_size", 1, 64, 2)
	if o.Err() == nil && c != nil && (f.PatchSize != c.Vision.PatchSize || f.TemporalPatch != c.Vision.TemporalPatchSize || f.MergeSize != c.Vision.SpatialMergeSize) {
		o.Fail("patch_size", "patching %d/%d/%d differs from the model's %d/%d/%d",
			f.PatchSize, f.TemporalPatch, f.MergeSize, c.Vision.PatchSize, c.Vision.TemporalPatchSize, c.Vision.SpatialMergeSize)
	}
	copy(f.Mean[:], o.Floats("image_mean", 3))
	std := o.Floats("image_std", 3)
	for k, v := range std {
		if o.Err() == nil && !(v > 0) {
			o.Fail("image_std", "entry %d is %v; a standard deviation must be positive", k, v)
		}
	}
	copy(f.Std[:], std)
	return f, o.Err()
}
