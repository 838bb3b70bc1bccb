package dit

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"h3studio/engine/configfile"
	"h3studio/engine/safetensors"
)

// ConfigFile is transformer/config.json in either key set, as the snapshot
// report reads and checks it: the original release's (MiniMaxH3DiTModel:
// ffn_hidden_size, latents_dim, …) or the diffusers one
// (MiniMaxH3Transformer3DModel: ffn_dim, in_channels, …). Each problem is a
// *configfile.Error naming the file and the field.
type ConfigFile struct {
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

// key is the spelling of the diffusers key diff in c's key set
// (configKeys, the loader's table of both spellings).
func (c *ConfigFile) key(diff string) string {
	if c.KeySet == "original" {
		for _, k := range configKeys {
			if k.diff == diff {
				return k.orig
			}
		}
	}
	return diff
}

// ReadConfigFile reads and checks a transformer config.json.
func ReadConfigFile(path string) (*ConfigFile, error) {
	return configfile.ReadAs(path, configFileFrom)
}

func configFileFrom(o *configfile.Object) (*ConfigFile, error) {
	c := &ConfigFile{Path: o.Path}
	class := o.ClassName("MiniMaxH3DiTModel", "MiniMaxH3Transformer3DModel")
	switch {
	case class == "MiniMaxH3DiTModel":
		c.KeySet = "original"
	case class == "MiniMaxH3Transformer3DModel":
		c.KeySet = "diffusers"
	case o.Has("ffn_hidden_size") || o.Has("latents_dim") || o.Has("token_refiner_num_layers"):
		c.KeySet = "original"
	default:
		c.KeySet = "diffusers"
	}
	for _, f := range []struct {
		diff string
		dst  *int
	}{
		{"hidden_size", &c.HiddenSize}, {"num_layers", &c.NumLayers}, {"num_refiner_layers", &c.NumRefinerLayers},
		{"num_attention_heads", &c.NumHeads}, {"attention_head_dim", &c.HeadDim}, {"ffn_dim", &c.FFNDim},
		{"in_channels", &c.InChannels}, {"audio_in_channels", &c.AudioInChannels}, {"text_dim", &c.TextDim},
		{"freq_dim", &c.FreqDim}, {"time_embed_hidden_dim", &c.TimeEmbedHiddenDim}, {"time_embed_dim", &c.TimeEmbedDim},
		{"rope_freq_dim", &c.RopeFreqDim},
	} {
		if f.diff == "num_refiner_layers" { // the refiner may be absent in principle
			*f.dst = o.OptInt(c.key(f.diff), 0, 1<<20, 2)
			continue
		}
		*f.dst = o.PosInt(c.key(f.diff))
	}
	if ps := o.Ints("patch_size", 3, 1); ps != nil {
		c.PatchSize = [3]int{ps[0], ps[1], ps[2]}
		if c.PatchSize[0] != 1 {
			o.Fail("patch_size", "temporal patch %d is not supported (the packed layout needs 1)", c.PatchSize[0])
		}
	}
	c.RopeTheta = o.OptFloat("rope_theta", 10000)
	c.NormEps = o.OptFloat("norm_eps", 1e-5)
	c.QKNormEps = o.OptFloat("qk_norm_eps", 1e-5)
	c.FinalNormEps = o.OptFloat("final_norm_eps", 1e-5)
	for f, v := range map[string]float64{"rope_theta": c.RopeTheta, "norm_eps": c.NormEps, "qk_norm_eps": c.QKNormEps, "final_norm_eps": c.FinalNormEps} {
		if o.Err() == nil && !(v > 0) {
			o.Fail(f, "must be positive, got %v", v)
		}
	}
	if o.Err() == nil {
		switch {
		case 6*c.RopeFreqDim > c.HeadDim:
			o.Fail(c.key("rope_freq_dim"), "%d frequencies per axis rotate %d channels, more than the head dim %d", c.RopeFreqDim, 6*c.RopeFreqDim, c.HeadDim)
		case c.FreqDim%2 != 0:
			o.Fail(c.key("freq_dim"), "the sinusoid width must be even, got %d", c.FreqDim)
		}
	}
	if c.KeySet == "original" && o.Err() == nil {
		if o.Has("adaln_out_features") {
			if v := o.PosInt("adaln_out_features"); o.Err() == nil && v != 18*c.HiddenSize {
				o.Fail("adaln_out_features", "is %d; the AdaLN table holds 3 modalities × 6 × hidden_size = %d", v, 18*c.HiddenSize)
			}
		}
		if o.Has("final_adaln_out_features") {
			if v := o.PosInt("final_adaln_out_features"); o.Err() == nil && v != 2*c.HiddenSize {
				o.Fail("final_adaln_out_features", "is %d; the final modulation holds shift and scale = %d", v, 2*c.HiddenSize)
			}
		}
	}
	if err := o.Err(); err != nil {
		return nil, err
	}
	return c, nil
}

// Summary is the one-line description the snapshot report prints.
func (c *ConfigFile) Summary() string {
	return fmt.Sprintf("%s keys: hidden %d, %d blocks + %d refiner, %d×%d heads, ffn %d, text %d",
		c.KeySet, c.HiddenSize, c.NumLayers, c.NumRefinerLayers, c.NumHeads, c.HeadDim, c.FFNDim, c.TextDim)
}

// CheckWeights compares the transformer config's depth with the blocks its
// weights hold (blocks.N. or transformer_blocks.N., and the refiner's):
// a config.json whose num_layers disagrees with its checkpoint cannot be
// loaded, so the pair is corrupt. Weights without any block tensor are not
// judged here (loading names every missing tensor).
func (c *ConfigFile) CheckWeights(ck *safetensors.Checkpoint) error {
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
		{c.key("num_refiner_layers"), c.NumRefinerLayers, []string{"token_refiner.blocks.", "token_refiner.refiner_blocks."}},
	} {
		if have := count(d.prefixes...); have > 0 && have != d.config {
			return &configfile.Error{Path: c.Path, Field: d.field, Rule: fmt.Sprintf("is %d but the weights in %s hold %d blocks: the config does not describe them",
				d.config, filepath.Base(ck.Dir), have)}
		}
	}
	return nil
}
