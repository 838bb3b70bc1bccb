package qwen3vl

import (
	"fmt"

	"h3studio/engine/compute"
)

// Tensor name prefixes of the released text_encoder/ layout
// (H3-ENCODERS-VAES.md §6.3, §7.8).
const (
	LanguagePrefix = "model.language_model."
	VisionPrefix   = "model.visual."
)

// WeightSpec is one tensor the encoder reads: its full name and shape.
type WeightSpec struct {
	Name  string
	Shape compute.Shape
}

// layerNames are a decoder layer's tensors (relative to layers.{i}.).
func layerSpecs(c *Config) []WeightSpec {
	t := c.Text
	d, q, kv := t.HiddenSize, t.NumHeads*t.HeadDim, t.NumKVHeads*t.HeadDim
	return []WeightSpec{
		{"input_layernorm.weight", compute.Shape{d}},
		{"self_attn.q_proj.weight", compute.Shape{q, d}},
		{"self_attn.k_proj.weight", compute.Shape{kv, d}},
		{"self_attn.v_proj.weight", compute.Shape{kv, d}},
		{"self_attn.q_norm.weight", compute.Shape{t.HeadDim}},
		{"self_attn.k_norm.weight", compute.Shape{t.HeadDim}},
		{"self_attn.o_proj.weight", compute.Shape{d, q}},
		{"post_attention_layernorm.weight", compute.Shape{d}},
		{"mlp.gate_proj.weight", compute.Shape{t.IntermediateSize, d}},
		{"mlp.up_proj.weight", compute.Shape{t.IntermediateSize, d}},
		{"mlp.down_proj.weight", compute.Shape{d, t.IntermediateSize}},
	}
}

// LayerPrefix is the name prefix of decoder layer i.
func LayerPrefix(i int) string { return fmt.Sprintf("%slayers.%d.", LanguagePrefix, i) }

// LayerSpecs lists the full names and shapes of decoder layer i.
func (c *Config) LayerSpecs(i int) []WeightSpec {
	rel := layerSpecs(c)
	out := make([]WeightSpec, len(rel))
	for j, s := range rel {
		out[j] = WeightSpec{LayerPrefix(i) + s.Name, s.Shape}
	}
	return out
}

// EmbedSpec is the token embedding table.
func (c *Config) EmbedSpec() WeightSpec {
	return WeightSpec{LanguagePrefix + "embed_tokens.weight", compute.Shape{c.Text.VocabSize, c.Text.HiddenSize}}
}

// VisionSpecs lists every vision tower tensor (full names).
func (c *Config) VisionSpecs() []WeightSpec {
	v := c.Vision
	dv, iv, dm, out := v.HiddenSize, v.IntermediateSize, c.MergedWidth(), v.OutHiddenSize
	p := VisionPrefix
	specs := []WeightSpec{
		{p + "patch_embed.proj.weight", compute.Shape{dv, v.InChannels, v.TemporalPatchSize, v.PatchSize, v.PatchSize}},
		{p + "patch_embed.proj.bias", compute.Shape{dv}},
		{p + "pos_embed.weight", compute.Shape{v.NumPositions, dv}},
	}
	for j := 0; j < v.Depth; j++ {
		b := fmt.Sprintf("%sblocks.%d.", p, j)
		specs = append(specs,
			WeightSpec{b + "norm1.weight", compute.Shape{dv}}, WeightSpec{b + "norm1.bias", compute.Shape{dv}},
			WeightSpec{b + "attn.qkv.weight", compute.Shape{3 * dv, dv}}, WeightSpec{b + "attn.qkv.bias", compute.Shape{3 * dv}},
			WeightSpec{b + "attn.proj.weight", compute.Shape{dv, dv}}, WeightSpec{b + "attn.proj.bias", compute.Shape{dv}},
			WeightSpec{b + "norm2.weight", compute.Shape{dv}}, WeightSpec{b + "norm2.bias", compute.Shape{dv}},
			WeightSpec{b + "mlp.linear_fc1.weight", compute.Shape{iv, dv}}, WeightSpec{b + "mlp.linear_fc1.bias", compute.Shape{iv}},
			WeightSpec{b + "mlp.linear_fc2.weight", compute.Shape{dv, iv}}, WeightSpec{b + "mlp.linear_fc2.bias", compute.Shape{dv}},
		)
	}
	merger := func(prefix string, normWidth int) {
		specs = append(specs,
			WeightSpec{prefix + "norm.weight", compute.Shape{normWidth}}, WeightSpec{prefix + "norm.bias", compute.Shape{normWidth}},
			WeightSpec{prefix + "linear_fc1.weight", compute.Shape{dm, dm}}, WeightSpec{prefix + "linear_fc1.bias", compute.Shape{dm}},
			WeightSpec{prefix + "linear_fc2.weight", compute.Shape{out, dm}}, WeightSpec{prefix + "linear_fc2.bias", compute.Shape{out}},
		)
	}
	for k := range v.DeepstackIndexes {
		merger(fmt.Sprintf("%sdeepstack_merger_list.%d.", p, k), dm)
	}
	merger(p+"merger.", dv)
	return specs
}

// UnusedPrefixes are the released tensors H3 never reads: decoder layers at
// and beyond the tap, the final norm and the LM head.
func (c *Config) UnusedPrefixes(layers int) []string {
	out := []string{LanguagePrefix + "norm.", "lm_head."}
	for i := layers; i < c.Text.NumLayers; i++ {
		out = append(out, LayerPrefix(i))
	}
	return out
}

// SpecBytes is the storage of specs in dtype dt.
func SpecBytes(specs []WeightSpec, dt compute.DType) int64 {
	var n int64
	for _, s := range specs {
		n += int64(s.Shape.NumElements()) * int64(dt.Size())
	}
	return n
}
