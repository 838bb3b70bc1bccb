package dit

import (
	"strings"

	"h3studio/engine/safetensors"
)

// Inventory lists every tensor of a transformer checkpoint of configuration
// c in layout l, exactly what Open accounts for: the names and shapes of the
// layout, the release's dtypes (BF16, with the float32 patch projections,
// time MLP, heads and rope.inv_freq of PlanningSource) and an initialisation
// rule for random test checkpoints (the demo model): norm weights
// 1 + N(0, 0.1²), biases N(0, 0.02²), matrices N(0, 1/fan-in) and
// rope.inv_freq its exact values 1/theta^(i/F).
func Inventory(c Config, l WeightLayout) safetensors.Inventory {
	src := PlanningSource(c, l)
	inv := make(safetensors.Inventory, 0, len(src.Names()))
	for _, n := range src.Names() {
		info, _ := src.Info(n)
		s := safetensors.Spec{Name: n, DType: info.DType, Shape: info.Shape.Clone()}
		switch {
		case n == "rope.inv_freq":
			s.Init = safetensors.Init{Kind: safetensors.InitValues, Values: InvFreq(c.RopeTheta, c.RopeFreqDim)}
		case len(info.Shape) == 1 && strings.HasSuffix(n, ".weight"):
			s.Init = safetensors.Init{Kind: safetensors.InitOnes, Scale: 0.1}
		case strings.HasSuffix(n, ".bias"):
			s.Init = safetensors.Init{Kind: safetensors.InitNormal, Scale: 0.02}
		default:
			s.Init = safetensors.Init{Kind: safetensors.InitNormal}
		}
		inv = append(inv, s)
	}
	return inv
}
