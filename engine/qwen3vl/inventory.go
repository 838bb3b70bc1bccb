package qwen3vl

import (
	"strings"

	"h3studio/engine/compute"
	"h3studio/engine/safetensors"
)

// Inventory lists every tensor Load reads from a text_encoder/ checkpoint of
// configuration c (the embedding, all c.Text.NumLayers decoder layers and the
// vision tower; the final norm and LM head, which H3 never reads, are left
// out), in the release's dtype (BF16), with an initialisation rule for
// random test checkpoints (the demo model): norm weights 1 + N(0, 0.1²),
// biases N(0, 0.02²), the token embedding N(0, 1), the vision position
// table N(0, 0.02²), matrices N(0, 1/fan-in).
func Inventory(c *Config) safetensors.Inventory {
	specs := []WeightSpec{c.EmbedSpec()}
	for i := 0; i < c.Text.NumLayers; i++ {
		specs = append(specs, c.LayerSpecs(i)...)
	}
	specs = append(specs, c.VisionSpecs()...)
	inv := make(safetensors.Inventory, 0, len(specs))
	for _, w := range specs {
		s := safetensors.Spec{Name: w.Name, DType: compute.BF16, Shape: w.Shape.Clone()}
		switch {
		case w.Name == c.EmbedSpec().Name:
			s.Init = safetensors.Init{Kind: safetensors.InitNormal, Scale: 1}
		case strings.HasSuffix(w.Name, "pos_embed.weight"):
			s.Init = safetensors.Init{Kind: safetensors.InitNormal, Scale: 0.02}
		case len(w.Shape) == 1 && strings.HasSuffix(w.Name, ".weight"):
			s.Init = safetensors.Init{Kind: safetensors.InitOnes, Scale: 0.1}
		case strings.HasSuffix(w.Name, ".bias"):
			s.Init = safetensors.Init{Kind: safetensors.InitNormal, Scale: 0.02}
		default:
			s.Init = safetensors.Init{Kind: safetensors.InitNormal}
		}
		inv = append(inv, s)
	}
	return inv
}
