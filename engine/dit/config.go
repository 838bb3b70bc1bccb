package dit

import (
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"h3studio/engine/configfile"
	"h3studio/engine/safetensors"
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

// configKeys maps each field to its (original, diffusers) key.
var configKeys = []struct {
	orig, diff string
	field      func(c *Config) any
}{
	{"hidden_size", "hidden_size", func(c *Config) any { return &c.HiddenSize }},
	{"num_layers", "num_layers", func(c *Config) any { return &c.NumLayers }},
	{"token_refiner_num_layers", "num_refiner_layers", func(c *Config) any { return &c.RefinerLayers }},
	{"num_attention_heads", "num_attention_heads", func(c *Config) any { return &c.Heads }},
	{"attention_head_dim", "attention_head_dim", func(c *Config) any { return &c.HeadDim }},
	{"ffn_hidden_size", "ffn_dim", func(c *Config) any { return &c.FFNDim }},
	{"latents_dim", "in_channels", func(c *Config) any { return &c.InChannels }},
	{"audio_latents_dim", "audio_in_channels", func(c *Config) any { return &c.AudioInChannels }},
	{"patch_size", "patch_size", func(c *Config) any { return &c.PatchSize }},
	{"text_dim", "text_dim", func(c *Config) any { return &c.TextDim }},
	{"timestep_input_dim", "freq_dim", func(c *Config) any { return &c.FreqDim }},
	{"time_embed_hidden_size", "time_embed_hidden_dim", func(c *Config) any { return &c.TimeHiddenDim }},
	{"time_embed_dim", "time_embed_dim", func(c *Config) any { return &c.TimeEmbedDim }},
	{"rope_inv_freq_len", "rope_freq_dim", func(c *Config) any { return &c.RopeFreqDim }},
	{"rope_theta", "rope_theta", func(c *Config) any { return &c.RopeTheta }}, // implicit (10000) in the original spelling
	{"norm_eps", "norm_eps", func(c *Config) any { return &c.NormEps }},
	{"qk_norm_eps", "qk_norm_eps", func(c *Config) any { return &c.QKNormEps }},
	{"final_norm_eps", "final_norm_eps", func(c *Config) any { return &c.FinalNormEps }},
}

// key is the spelling of the diffusers key diff in c's key set.
func (c Config) key(diff string) string {
	if c.Keys == OriginalKeys {
		for _, k := range configKeys {
			if k.diff == diff {
				return k.orig
			}
		}
	}
	return diff
}

// derived keys of the original spelling, checked against the architecture.
var originalDerived = map[string]bool{"adaln_out_features": true, "final_adaln_out_features": true}

// informational keys accepted in both spellings.
var infoKeys = map[string]bool{"_class_name": true, "_diffusers_version": true, "_name_or_path": true}

// ReadConfig reads and checks dir/config.json (see ParseConfig).
func ReadConfig(dir string) (Config, error) {
	return configfile.ReadAs(filepath.Join(dir, "config.json"), configFrom)
}

// ParseConfig reads transformer/config.json in either spelling; path names
// it in errors. The spelling is the one _class_name names, else the one its
// keys are in. Unknown keys are rejected (a config of another model should
// not load as this one), as are missing and mixed-spelling keys. Each
// problem is a *configfile.Error naming the file and the field.
func ParseConfig(path string, data []byte) (Config, error) {
	o, err := configfile.Parse(path, data)
	if err != nil {
		return Config{}, err
	}
	return configFrom(o)
}

func configFrom(o *configfile.Object) (Config, error) {
	var c Config
	switch o.ClassName("MiniMaxH3DiTModel", "MiniMaxH3Transformer3DModel") {
	case "MiniMaxH3DiTModel":
		c.Keys = OriginalKeys
	case "MiniMaxH3Transformer3DModel":
		c.Keys = DiffusersKeys
	default:
		c.Keys = DiffusersKeys
		if o.Has("ffn_hidden_size") || o.Has("latents_dim") || o.Has("token_refiner_num_layers") {
			c.Keys = OriginalKeys
		}
	}
	if o.Has("token_refiner_num_layers") && o.Has("num_refiner_layers") {
		o.Fail("num_refiner_layers", "mixes the diffusers spelling with the original token_refiner_num_layers")
	}
	for _, k := range configKeys {
		key := c.key(k.diff)
		switch dst := k.field(&c).(type) {
		case *int:
			if k.diff == "num_refiner_layers" {
				*dst = o.IntIn(key, 0, 1<<20)
			} else {
				*dst = o.PosInt(key)
			}
		case *[3]int:
			if ps := o.Ints(key, 3, 1); ps != nil {
				*dst = [3]int{ps[0], ps[1], ps[2]}
				if ps[0] != 1 {
					o.Fail(key, "temporal patch %d is not supported (the packed layout needs 1)", ps[0])
				}
			}
		case *float64:
			*dst = o.OptFloat(key, 10000)
			if o.Err() == nil && !(*dst > 0) {
				o.Fail(key, "must be positive, got %v", *dst)
			}
		case *float32:
			if v := o.PosFloat(key); o.Err() == nil && v > 1 {
				o.Fail(key, "must be at most 1, got %v", v)
			}
			// The literal rounded once to float32, as the reference reads it.
			f, _ := strconv.ParseFloat(strings.TrimSpace(string(o.Value(key))), 32)
			*dst = float32(f)
		}
	}
	if o.Err() == nil {
		known := map[string]bool{}
		for _, k := range configKeys {
			known[c.key(k.diff)] = true
		}
		var unknown []string
		for _, k := range o.Keys() {
			if !known[k] && !infoKeys[k] && !(c.Keys == OriginalKeys && originalDerived[k]) {
				unknown = append(unknown, k)
			}
		}
		if len(unknown) > 0 {
			o.Fail(unknown[0], "is not a key of a transformer config with %s (unknown: %s)", c.Keys, strings.Join(unknown, ", "))
		}
	}
	if o.Err() == nil {
		switch {
		case c.RotaryDim() > c.HeadDim:
			o.Fail(c.key("rope_freq_dim"), "%d frequencies per axis rotate %d channels, more than the head dim %d", c.RopeFreqDim, c.RotaryDim(), c.HeadDim)
		case c.FreqDim%2 != 0:
			o.Fail(c.key("freq_dim"), "the sinusoid width must be even, got %d", c.FreqDim)
		}
	}
	if c.Keys == OriginalKeys && o.Err() == nil {
		if o.Has("adaln_out_features") {
			if v := o.PosInt("adaln_out_features"); o.Err() == nil && v != c.AdaLNWidth() {
				o.Fail("adaln_out_features", "is %d; the AdaLN table holds 3 modalities × 6 × hidden_size = %d", v, c.AdaLNWidth())
			}
		}
		if o.Has("final_adaln_out_features") {
			if v := o.PosInt("final_adaln_out_features"); o.Err() == nil && v != 2*c.HiddenSize {
				o.Fail("final_adaln_out_features", "is %d; the final modulation holds shift and scale = %d", v, 2*c.HiddenSize)
			}
		}
	}
	if err := o.Err(); err != nil {
		return Config{}, err
	}
	if err := c.Validate(); err != nil { // the rules above cover Validate's; this keeps them from drifting apart
		return Config{}, &configfile.Error{Path: o.Path, Rule: "inconsistent architecture", Err: err}
	}
	return c, nil
}

// Summary is the one-line description the snapshot report prints.
func (c Config) Summary() string {
	keys := map[KeySet]string{OriginalKeys: "original", DiffusersKeys: "diffusers"}[c.Keys]
	return fmt.Sprintf("%s keys: hidden %d, %d blocks + %d refiner, %d×%d heads, ffn %d, text %d",
		keys, c.HiddenSize, c.NumLayers, c.RefinerLayers, c.Heads, c.HeadDim, c.FFNDim, c.TextDim)
}

// CheckWeights compares the depth of the config read from path with the
// blocks the weights hold (blocks.N. or transformer_blocks.N., and the
// refiner's): a config.json whose num_layers disagrees with its checkpoint
// cannot be loaded, so the pair is corrupt. Weights without any block tensor
// are not judged here (loading names every missing tensor).
func (c Config) CheckWeights(path string, ck *safetensors.Checkpoint) error {
	count := func(prefixes ...string) int {
		n := 0
		for _, name := range ck.Names() {
			for _, p := range prefixes {
				rest, ok := strings.CutPrefix(name, p)
				if !ok {
					continue
				}
				idx, _, _ := strings.Cut(rest, ".")
				if i, err := strconv.Atoi(idx); err == nil && i >= 0 && i+1 > n {
					n = i + 1
				}
			}
		}
		return n
	}
	for _, d := range []struct {
		field    string
		config   int
		prefixes []string
	}{
		{"num_layers", c.NumLayers, []string{"blocks.", "transformer_blocks."}},
		{c.key("num_refiner_layers"), c.RefinerLayers, []string{"token_refiner.blocks.", "token_refiner.refiner_blocks."}},
	} {
		if have := count(d.prefixes...); have > 0 && have != d.config {
			return &configfile.Error{Path: path, Field: d.field, Rule: fmt.Sprintf("is %d but the weights in %s hold %d blocks: the config does not describe them",
				d.config, filepath.Base(ck.Dir), have)}
		}
	}
	return nil
}
