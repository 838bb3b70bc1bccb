package qwen3vl

import (
	"encoding/json"
	"fmt"

	"h3studio/engine/configfile"
)

// ConfigFile is text_encoder/config.json (Qwen3-VL) as the snapshot report
// reads and checks it. Each problem is a *configfile.Error naming the file
// and the field.
type ConfigFile struct {
	Path string

	HiddenSize, NumLayers, NumHeads, NumKVHeads, HeadDim, IntermediateSize, VocabSize int
	RMSNormEps, RopeTheta                                                             float64
	MRopeSection                                                                      []int

	VisionDepth, VisionHidden, VisionHeads, VisionPatch, VisionTemporalPatch, VisionMerge, VisionOut int
	DeepstackIndexes                                                                                 []int

	ImageTokenID, VideoTokenID, VisionStartID, VisionEndID int
}

// ReadConfigFile reads and validates text_encoder/config.json.
func ReadConfigFile(path string) (*ConfigFile, error) {
	return configfile.ReadAs(path, textEncoderFrom)
}

func textEncoderFrom(o *configfile.Object) (*ConfigFile, error) {
	c := &ConfigFile{Path: o.Path}
	if o.Has("model_type") {
		if mt := o.Str("model_type"); o.Err() == nil && mt != "qwen3_vl" {
			o.Fail("model_type", "is %q; the text encoder is a Qwen3-VL (\"qwen3_vl\")", mt)
		}
	}
	t := o.Sub("text_config", false)
	c.HiddenSize = t.PosInt("hidden_size")
	c.NumLayers = t.PosInt("num_hidden_layers")
	c.NumHeads = t.PosInt("num_attention_heads")
	c.NumKVHeads = t.PosInt("num_key_value_heads")
	c.HeadDim = t.PosInt("head_dim")
	c.IntermediateSize = t.PosInt("intermediate_size")
	c.VocabSize = t.PosInt("vocab_size")
	c.RMSNormEps = t.PosFloat("rms_norm_eps")
	c.RopeTheta = t.PosFloat("rope_theta")
	if t.Err() == nil && c.NumHeads%c.NumKVHeads != 0 {
		t.Fail("num_key_value_heads", "%d does not divide the %d attention heads", c.NumKVHeads, c.NumHeads)
	}
	if rs := t.Sub("rope_scaling", true); rs != nil && rs.Has("mrope_section") {
		c.MRopeSection = rs.Ints("mrope_section", 3, 0)
		if t.Err() == nil && sum(c.MRopeSection) != c.HeadDim/2 {
			rs.Fail("mrope_section", "sums to %d; the three M-RoPE sections must cover head_dim/2 = %d", sum(c.MRopeSection), c.HeadDim/2)
		}
	}
	v := o.Sub("vision_config", false)
	c.VisionDepth = v.PosInt("depth")
	c.VisionHidden = v.PosInt("hidden_size")
	c.VisionHeads = v.PosInt("num_heads")
	c.VisionPatch = v.PosInt("patch_size")
	c.VisionTemporalPatch = v.OptInt("temporal_patch_size", 1, 64, 2)
	c.VisionMerge = v.OptInt("spatial_merge_size", 1, 64, 2)
	c.VisionOut = v.PosInt("out_hidden_size")
	if v.Has("deepstack_visual_indexes") {
		var idx []json.Number
		if v.Decode("deepstack_visual_indexes", &idx, "a list of integers") {
			c.DeepstackIndexes = v.Ints("deepstack_visual_indexes", len(idx), 0)
		}
	}
	if o.Err() == nil {
		switch {
		case c.VisionHidden%c.VisionHeads != 0:
			v.Fail("num_heads", "%d heads do not divide the vision width %d", c.VisionHeads, c.VisionHidden)
		case c.VisionOut != c.HiddenSize:
			v.Fail("out_hidden_size", "is %d but the language model's hidden_size is %d", c.VisionOut, c.HiddenSize)
		}
		for _, i := range c.DeepstackIndexes {
			if o.Err() == nil && i >= c.VisionDepth {
				v.Fail("deepstack_visual_indexes", "index %d is beyond the %d vision blocks", i, c.VisionDepth)
			}
		}
	}
	c.ImageTokenID = o.OptInt("image_token_id", 0, 1<<31, 151655)
	c.VideoTokenID = o.OptInt("video_token_id", 0, 1<<31, 151656)
	c.VisionStartID = o.OptInt("vision_start_token_id", 0, 1<<31, 151652)
	c.VisionEndID = o.OptInt("vision_end_token_id", 0, 1<<31, 151653)
	if o.Err() == nil {
		for f, id := range map[string]int{"image_token_id": c.ImageTokenID, "video_token_id": c.VideoTokenID, "vision_start_token_id": c.VisionStartID, "vision_end_token_id": c.VisionEndID} {
			if id >= c.VocabSize && o.Err() == nil {
				o.Fail(f, "token id %d is outside the %d-entry vocabulary", id, c.VocabSize)
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

// Summary is the one-line description the snapshot report prints.
func (c *ConfigFile) Summary() string {
	return fmt.Sprintf("Qwen3-VL: hidden %d, %d layers, %d/%d heads; vision %d blocks",
		c.HiddenSize, c.NumLayers, c.NumHeads, c.NumKVHeads, c.VisionDepth)
}
