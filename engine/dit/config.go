package dit

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// KeySet names the spelling of a transformer/config.json.
type KeySet uint8

// The two config spellings (H3-DIT §1.3).
const (
	// OriginalKeys is the released FL2VA/Ref2VA spelling (MiniMaxH3DiTModel:
	// token_refiner_num_layers, ffn_hidden_size, latents_dim, …).
	OriginalKeys KeySet = iota + 1
	// DiffusersKeys is the diffusers spelling (MiniMaxH3Transformer3DModel:
	// num_refiner_layers, ffn_dim, in_channels, …).
	DiffusersKeys
)

func (k KeySet) String() string {
	switch k {
	case OriginalKeys:
		return "original (MiniMaxH3DiTModel) keys"
	case DiffusersKeys:
		return "diffusers (MiniMaxH3Transformer3DModel) keys"
	}
	return "unknown keys"
}

// Config is the architecture of a MiniMax-H3 transformer, read from either
// spelling of transformer/config.json. Field names follow the diffusers
// arguments; the released values are in Released.
type Config struct {
	HiddenSize      int     // residual width (5376)
	NumLayers       int     // transformer blocks (50)
	RefinerLayers   int     // token refiner blocks (2)
	Heads           int     // attention heads (56)
	HeadDim         int     // channels per head (128); Heads·HeadDim ≠ HiddenSize in general
	FFNDim          int     // SwiGLU inner width (14336)
	InChannels      int     // video latent channels (24)
	AudioInChannels int     // audio latent channels (32)
	PatchSize       [3]int  // (t, h, w) patch, (1, 2, 2)
	TextDim         int     // text conditioning width (5120)
	FreqDim         int     // sinusoidal timestep width (256)
	TimeHiddenDim   int     // time MLP hidden width (5376)
	TimeEmbedDim    int     // time MLP output, AdaLN input (2688)
	RopeFreqDim     int     // rotary frequencies per axis (16); 6·RopeFreqDim channels rotate
	RopeTheta       float64 // rotary base (10000)
	NormEps         float32 // pre-attention / pre-MLP RMSNorm epsilon
	QKNormEps       float32 // per-head q/k RMSNorm epsilon
	FinalNormEps    float32 // token refiner output norm and final-layer norm epsilon

	// Keys records which spelling the config was read from (0 when built in code).
	Keys KeySet
}

// Released is the configuration of the released 33B MiniMax-H3 transformer
// (identical in both partitions).
func Released() Config {
	return Config{
		HiddenSize: 5376, NumLayers: 50, RefinerLayers: 2, Heads: 56, HeadDim: 128, FFNDim: 14336,
		InChannels: 24, AudioInChannels: 32, PatchSize: [3]int{1, 2, 2}, TextDim: 5120,
		FreqDim: 256, TimeHiddenDim: 5376, TimeEmbedDim: 2688, RopeFreqDim: 16, RopeTheta: 10000,
		NormEps: 1e-5, QKNormEps: 1e-5, FinalNormEps: 1e-5,
	}
}

// Modalities is the number of AdaLN modality tags: 0 video, 1 text, 2 audio.
const Modalities = 3

// Modality tags of the packed sequence rows.
const (
	TagVideo = 0
	TagText  = 1
	TagAudio = 2
)

// Slots of a block's modulation table, in checkpoint order.
const (
	SlotShiftMSA = iota
	SlotScaleMSA
	SlotGateMSA
	SlotShiftMLP
	SlotScaleMLP
	SlotGateMLP
	numSlots
)

// Inner is Heads·HeadDim, the attention width.
func (c Config) Inner() int { return c.Heads * c.HeadDim }

// PatchDim is the width of a video row: InChannels·prod(PatchSize).
func (c Config) PatchDim() int {
	return c.InChannels * c.PatchSize[0] * c.PatchSize[1] * c.PatchSize[2]
}

// RotaryDim is the number of rotated channels of each head, 2·3·RopeFreqDim.
func (c Config) RotaryDim() int { return 6 * c.RopeFreqDim }

// AdaLNWidth is the output width of a block's AdaLN projection,
// Modalities·6·HiddenSize.
func (c Config) AdaLNWidth() int { return Modalities * numSlots * c.HiddenSize }

// Validate checks the architecture for internal consistency.
func (c Config) Validate() error {
	var errs []string
	pos := func(name string, v int) {
		if v <= 0 {
			errs = append(errs, fmt.Sprintf("%s must be positive, have %d", name, v))
		}
	}
	pos("hidden_size", c.HiddenSize)
	pos("num_layers", c.NumLayers)
	if c.RefinerLayers < 0 {
		errs = append(errs, fmt.Sprintf("num_refiner_layers must not be negative, have %d", c.RefinerLayers))
	}
	pos("num_attention_heads", c.Heads)
	pos("attention_head_dim", c.HeadDim)
	pos("ffn_dim", c.FFNDim)
	pos("in_channels", c.InChannels)
	pos("audio_in_channels", c.AudioInChannels)
	pos("text_dim", c.TextDim)
	pos("freq_dim", c.FreqDim)
	pos("time_embed_hidden_dim", c.TimeHiddenDim)
	pos("time_embed_dim", c.TimeEmbedDim)
	pos("rope_freq_dim", c.RopeFreqDim)
	for i, p := range c.PatchSize {
		if p <= 0 {
			errs = append(errs, fmt.Sprintf("patch_size[%d] must be positive, have %d", i, p))
		}
	}
	if c.FreqDim%2 != 0 {
		errs = append(errs, fmt.Sprintf("freq_dim %d must be even (cos and sin halves)", c.FreqDim))
	}
	if c.HeadDim > 0 && c.RopeFreqDim > 0 && c.RotaryDim() > c.HeadDim {
		errs = append(errs, fmt.Sprintf("2·3·rope_freq_dim = %d rotated channels exceed attention_head_dim %d", c.RotaryDim(), c.HeadDim))
	}
	if !(c.RopeTheta > 0) || math.IsInf(c.RopeTheta, 0) {
		errs = append(errs, fmt.Sprintf("rope_theta must be a positive number, have %v", c.RopeTheta))
	}
	for _, e := range []struct {
		name string
		v    float32
	}{{"norm_eps", c.NormEps}, {"qk_norm_eps", c.QKNormEps}, {"final_norm_eps", c.FinalNormEps}} {
		if !(e.v > 0) || e.v > 1 {
			errs = append(errs, fmt.Sprintf("%s must be in (0, 1], have %v", e.name, e.v))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("dit: config: %s", strings.Join(errs, "; "))
	}
	return nil
}

// configKeys maps each field to its (original, diffusers) key. An empty
// original key means the original spelling has no such key (a default
// applies).
var configKeys = []struct {
	orig, diff string
	field      func(c *Config) any
	optional   bool // rope_theta is implicit in the original spelling
}{
	{"hidden_size", "hidden_size", func(c *Config) any { return &c.HiddenSize }, false},
	{"num_layers", "num_layers", func(c *Config) any { return &c.NumLayers }, false},
	{"token_refiner_num_layers", "num_refiner_layers", func(c *Config) any { return &c.RefinerLayers }, false},
	{"num_attention_heads", "num_attention_heads", func(c *Config) any { return &c.Heads }, false},
	{"attention_head_dim", "attention_head_dim", func(c *Config) any { return &c.HeadDim }, false},
	{"ffn_hidden_size", "ffn_dim", func(c *Config) any { return &c.FFNDim }, false},
	{"latents_dim", "in_channels", func(c *Config) any { return &c.InChannels }, false},
	{"audio_latents_dim", "audio_in_channels", func(c *Config) any { return &c.AudioInChannels }, false},
	{"patch_size", "patch_size", func(c *Config) any { return &c.PatchSize }, false},
	{"text_dim", "text_dim", func(c *Config) any { return &c.TextDim }, false},
	{"timestep_input_dim", "freq_dim", func(c *Config) any { return &c.FreqDim }, false},
	{"time_embed_hidden_size", "time_embed_hidden_dim", func(c *Config) any { return &c.TimeHiddenDim }, false},
	{"time_embed_dim", "time_embed_dim", func(c *Config) any { return &c.TimeEmbedDim }, false},
	{"rope_inv_freq_len", "rope_freq_dim", func(c *Config) any { return &c.RopeFreqDim }, false},
	{"rope_theta", "rope_theta", func(c *Config) any { return &c.RopeTheta }, true},
	{"norm_eps", "norm_eps", func(c *Config) any { return &c.NormEps }, false},
	{"qk_norm_eps", "qk_norm_eps", func(c *Config) any { return &c.QKNormEps }, false},
	{"final_norm_eps", "final_norm_eps", func(c *Config) any { return &c.FinalNormEps }, false},
}

// derived keys of the original spelling, checked against the architecture.
var originalDerived = map[string]bool{"adaln_out_features": true, "final_adaln_out_features": true}

// informational keys accepted in both spellings.
var infoKeys = map[string]bool{"_class_name": true, "_diffusers_version": true, "_name_or_path": true}

// ParseConfig reads transformer/config.json in either spelling. path is used
// in error messages. Unknown keys are rejected (a config of another model
// should not load as this one), as are missing required keys.
func ParseConfig(path string, data []byte) (Config, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return Config{}, fmt.Errorf("dit: %s: not a JSON object: %w", path, err)
	}
	_, hasOrig := raw["token_refiner_num_layers"]
	_, hasDiff := raw["num_refiner_layers"]
	var c Config
	switch {
	case hasOrig && !hasDiff:
		c.Keys = OriginalKeys
	case hasDiff && !hasOrig:
		c.Keys = DiffusersKeys
	case hasOrig && hasDiff:
		return Config{}, fmt.Errorf("dit: %s: mixes the original (token_refiner_num_layers) and diffusers (num_refiner_layers) spellings", path)
	default:
		return Config{}, fmt.Errorf("dit: %s: neither token_refiner_num_layers (original) nor num_refiner_layers (diffusers): not a MiniMax-H3 transformer config", path)
	}
	if cn, ok := raw["_class_name"]; ok {
		var name string
		_ = json.Unmarshal(cn, &name)
		want := map[KeySet]string{OriginalKeys: "MiniMaxH3DiTModel", DiffusersKeys: "MiniMaxH3Transformer3DModel"}[c.Keys]
		if name != want {
			return Config{}, fmt.Errorf("dit: %s: _class_name %q, want %q for %s", path, name, want, c.Keys)
		}
	}
	c.RopeTheta = 10000
	known := map[string]bool{}
	var missing []string
	for _, k := range configKeys {
		key := k.orig
		if c.Keys == DiffusersKeys {
			key = k.diff
		}
		known[key] = true
		v, ok := raw[key]
		if !ok {
			if !k.optional {
				missing = append(missing, key)
			}
			continue
		}
		if err := json.Unmarshal(v, k.field(&c)); err != nil {
			return Config{}, fmt.Errorf("dit: %s: key %q: %v", path, key, err)
		}
	}
	if len(missing) > 0 {
		return Config{}, fmt.Errorf("dit: %s: missing key(s) %s (%s)", path, strings.Join(missing, ", "), c.Keys)
	}
	var unknown []string
	for k := range raw {
		if known[k] || infoKeys[k] || (c.Keys == OriginalKeys && originalDerived[k]) {
			continue
		}
		unknown = append(unknown, k)
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return Config{}, fmt.Errorf("dit: %s: unknown key(s) %s (%s)", path, strings.Join(unknown, ", "), c.Keys)
	}
	if err := c.Validate(); err != nil {
		return Config{}, fmt.Errorf("%w (%s)", err, path)
	}
	if c.Keys == OriginalKeys {
		for key, want := range map[string]int{"adaln_out_features": c.AdaLNWidth(), "final_adaln_out_features": 2 * c.HiddenSize} {
			v, ok := raw[key]
			if !ok {
				continue
			}
			var have int
			if err := json.Unmarshal(v, &have); err != nil {
				return Config{}, fmt.Errorf("dit: %s: key %q: %v", path, key, err)
			}
			if have != want {
				return Config{}, fmt.Errorf("dit: %s: %s = %d, want %d (= %s)", path, key, have, want,
					map[string]string{"adaln_out_features": "3 modalities · 6 slots · hidden_size", "final_adaln_out_features": "2 · hidden_size"}[key])
			}
		}
	}
	return c, nil
}

// ReadConfig reads dir/config.json.
func ReadConfig(dir string) (Config, error) {
	path := filepath.Join(dir, "config.json")
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return Config{}, fmt.Errorf("dit: %s: transformer config is missing", path)
		}
		return Config{}, fmt.Errorf("dit: %w", err)
	}
	return ParseConfig(path, data)
}
