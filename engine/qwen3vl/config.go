package qwen3vl

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
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

// ReadConfig reads and validates dir/config.json.
func ReadConfig(dir string) (*Config, error) {
	path := filepath.Join(dir, "config.json")
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("qwen3vl: %w", err)
	}
	return ParseConfig(path, b)
}

// ParseConfig parses and validates config bytes (path is used in errors).
func ParseConfig(path string, b []byte) (*Config, error) {
	var c Config
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, &ConfigError{Path: path, Field: "(file)", Rule: "not valid JSON: " + err.Error()}
	}
	if err := c.Validate(); err != nil {
		var ce *ConfigError
		if errors.As(err, &ce) {
			ce.Path = path
		}
		return nil, err
	}
	return &c, nil
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
	Image PixelLimits
	Video PixelLimits
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
	Image: PixelLimits{MinPixels: 65536, MaxPixels: 16777216},
	Video: PixelLimits{MinPixels: 4096, MaxPixels: 25165824},
	Mean:  [3]float64{0.5, 0.5, 0.5},
	Std:   [3]float64{0.5, 0.5, 0.5},
}

type rawProcessor struct {
	Size struct {
		LongestEdge  int `json:"longest_edge"`
		ShortestEdge int `json:"shortest_edge"`
	} `json:"size"`
	MinPixels         int       `json:"min_pixels"`
	MaxPixels         int       `json:"max_pixels"`
	PatchSize         int       `json:"patch_size"`
	TemporalPatchSize int       `json:"temporal_patch_size"`
	MergeSize         int       `json:"merge_size"`
	Mean              []float64 `json:"image_mean"`
	Std               []float64 `json:"image_std"`
}

// ReadProcessorConfig reads the two preprocessor configs from dir (the text
// encoder or processor folder). A missing file falls back to the released
// values; a present but invalid one is an error, as is one whose patching
// disagrees with the model config.
func ReadProcessorConfig(dir string, c *Config) (ProcessorConfig, error) {
	pc := ReleasedProcessor
	for i, name := range []string{"preprocessor_config.json", "video_preprocessor_config.json"} {
		path := filepath.Join(dir, name)
		b, err := os.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return pc, fmt.Errorf("qwen3vl: %w", err)
		}
		var r rawProcessor
		if err := json.Unmarshal(b, &r); err != nil {
			return pc, &ConfigError{Path: path, Field: "(file)", Rule: "not valid JSON: " + err.Error()}
		}
		lim := PixelLimits{MinPixels: r.Size.ShortestEdge, MaxPixels: r.Size.LongestEdge}
		if lim.MinPixels == 0 && lim.MaxPixels == 0 {
			lim = PixelLimits{MinPixels: r.MinPixels, MaxPixels: r.MaxPixels}
		}
		if lim.MinPixels <= 0 || lim.MaxPixels < lim.MinPixels {
			return pc, &ConfigError{Path: path, Field: "size", Rule: fmt.Sprintf("need 0 < shortest_edge ≤ longest_edge pixels, have %d, %d", lim.MinPixels, lim.MaxPixels)}
		}
		if c != nil {
			if (r.PatchSize != 0 && r.PatchSize != c.Vision.PatchSize) || (r.MergeSize != 0 && r.MergeSize != c.Vision.SpatialMergeSize) ||
				(r.TemporalPatchSize != 0 && r.TemporalPatchSize != c.Vision.TemporalPatchSize) {
				return pc, &ConfigError{Path: path, Field: "patch_size", Rule: fmt.Sprintf("patching %d/%d/%d differs from the model's %d/%d/%d",
					r.PatchSize, r.TemporalPatchSize, r.MergeSize, c.Vision.PatchSize, c.Vision.TemporalPatchSize, c.Vision.SpatialMergeSize)}
			}
		}
		if len(r.Mean) == 3 && len(r.Std) == 3 {
			for k := 0; k < 3; k++ {
				if !(r.Std[k] > 0) {
					return pc, &ConfigError{Path: path, Field: "image_std", Rule: "must be positive"}
				}
				pc.Mean[k], pc.Std[k] = r.Mean[k], r.Std[k]
			}
		}
		if i == 0 {
			pc.Image = lim
		} else {
			pc.Video = lim
		}
	}
	return pc, nil
}
