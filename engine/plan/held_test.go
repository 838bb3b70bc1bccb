package plan

import (
	"strings"
	"testing"

	"h3studio/engine/compute"
	"h3studio/engine/dit"
	"h3studio/engine/layout"
)

// TestDiTHoldsWhatTheEngineHolds pins the DiT row's weights at its peak to
// what the engine holds in the loop, from the released inventory: the
// patch projections, final norm and heads plus every block's attention and
// MLP weights (resident) or two of them, the running block and the next
// one bound ahead (streaming); never the AdaLN projections (folded into
// the modulation tables, which the row counts as activations, and their
// pages released) nor the token refiner (used once per take, released
// before the loop). rope.inv_freq is recomputed, never bound.
func TestDiTHoldsWhatTheEngineHolds(t *testing.T) {
	cfg := dit.Released()
	src := dit.PlanningSource(cfg, dit.OriginalLayout)
	var block, edge int64
	for _, n := range src.Names() {
		info, _ := src.Info(n)
		switch {
		case strings.Contains(n, ".adaln_proj.") || strings.HasPrefix(n, "token_refiner.") ||
			strings.HasPrefix(n, "condition_proj.") || strings.HasPrefix(n, "time_embedder.") || n == "rope.inv_freq":
		case strings.HasPrefix(n, "blocks.0."):
			block += info.Bytes()
		case !strings.HasPrefix(n, "blocks."):
			edge += info.Bytes()
		}
	}
	e, err := Run(Query{Canvas: layout.Canvas{Width: 512, Height: 512}, Frames: 22}, "dit")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		what string
		s    Storage
		want int64
	}{
		{compute.Resident.String(), e[0].Resident, edge + int64(cfg.NumLayers)*block},
		{compute.Streaming.String(), e[0].Streaming, edge + 2*block},
	} {
		if c.s.Weights != c.want {
			t.Errorf("%s: weights at the peak %d bytes, want %d (edge %d, %d per block)", c.what, c.s.Weights, c.want, edge, block)
		}
	}
}
