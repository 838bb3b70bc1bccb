package plan

import (
	"fmt"

	"h3studio/engine/compute"
	"h3studio/engine/qwen3vl"
)

// The text encoder row: the released Qwen3-VL-32B language model running
// H3's 50 of its 64 layers over the prompt's text rows (t2va: no vision
// blocks), with the storage model of engine/qwen3vl (qwen3vl.Plan mirrors
// Encode's allocations; its test checks it against the CPU backend's
// measured peak) in both residency modes: every layer resident, or the
// layers streamed two at a time.

func init() { Register("text-encoder", 10, estimateText) }

func estimateText(q Query) (Estimate, error) {
	c := qwen3vl.ReleasedConfig()
	in := qwen3vl.PlanInput{Tokens: q.TextRows}
	res := qwen3vl.Plan(c, compute.Resident, in)
	str := qwen3vl.Plan(c, compute.Streaming, in)
	fl := qwen3vl.TextFLOPs(c, q.TextRows, 0)
	e := Estimate{
		Component: "text-encoder", Rows: q.TextRows, RowsUnit: "tokens", Evaluations: 1,
		FLOPs: fl, TotalFLOPs: fl, WeightBytes: float64(int64(c.TapLayers()) * res.LayerBytes),
		Resident: footprintStorage(res), Streaming: footprintStorage(str),
	}
	e.Notes = append(e.Notes, fmt.Sprintf("%d of %d decoder layers, %.2f GiB each; the resident mode also holds the vision tower (%.2f GiB), the streaming mode binds it only for pictures and videos",
		c.TapLayers(), c.Text.NumLayers, float64(res.LayerBytes)/(1<<30), float64(res.VisionBytes)/(1<<30)))
	return e, nil
}

// footprintStorage is a text-encoder footprint's peak phase.
func footprintStorage(f qwen3vl.Footprint) Storage {
	w, a := f.TextPhaseWeights, f.TextActivations
	if f.VisionPhaseWeights+f.VisionActivations > w+a {
		w, a = f.VisionPhaseWeights, f.VisionActivations
	}
	return Storage{Peak: w + a, Weights: w, Activations: a}
}
