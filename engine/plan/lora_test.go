package plan

import (
	"testing"

	"h3studio/engine/compute"
	"h3studio/engine/denoise"
	"h3studio/engine/dit"
	"h3studio/engine/layout"
)

// TestLoopCountsLoRA: the low-rank branch of a LoRA (shape-only, rank 128
// on the six projections of every block, as lightx2v's Turbo files) counts
// in the predicted FLOPs and storage: at least its matmuls' 2·rows·r·(in +
// out) per module and forward (h3.c's 2 %-per-forward figure is rank 64),
// and its weights on top of the peak.
func TestLoopCountsLoRA(t *testing.T) {
	cfg := dit.Released()
	const r = 128
	ad := dit.Adapters{}
	var perRow float64 // matmul FLOPs of the branch per packed row and forward
	var bytes int64
	for i := 0; i < cfg.NumLayers; i++ {
		for _, p := range []dit.Proj{dit.ProjQKV, dit.ProjOut, dit.ProjFC1, dit.ProjFC2} {
			s := dit.Site{Stack: dit.StackBlocks, Block: i, Proj: p}
			parts, in, _ := cfg.SiteShape(s)
			u := dit.Update{A: dit.Matrix{DType: compute.BF16, Rows: r, Cols: in}, Scale: 1}
			perRow += 2 * r * float64(in)
			bytes += 2 * r * int64(in)
			for _, out := range parts {
				u.B = append(u.B, dit.Matrix{DType: compute.BF16, Rows: out, Cols: r})
				perRow += 2 * float64(out) * r
				bytes += 2 * int64(out) * r
			}
			ad[s] = []dit.Update{u}
		}
	}
	loop := Loop{TextRows: 64, Target: layout.Grid{T: 2, H: 8, W: 8}, AudioLatents: 12, Controls: denoise.Controls{Steps: 4}}
	base, rows, err := LoopUsage(cfg, loop, compute.Resident, compute.QuantFormat{})
	if err != nil {
		t.Fatal(err)
	}
	loop.Adapters = ad
	with, _, err := LoopUsage(cfg, loop, compute.Resident, compute.QuantFormat{})
	if err != nil {
		t.Fatal(err)
	}
	want := perRow * float64(rows) * 4
	extra := with.FLOPs - base.FLOPs
	t.Logf("rows %d: branch %.3g FLOPs over 4 forwards (%.2f%% of the loop; matmuls %.3g), %d MiB of factors",
		rows, extra, 100*extra/base.FLOPs, want, bytes>>20)
	if extra < want || extra > 1.2*want {
		t.Errorf("the branch adds %.4g FLOPs, want ≈ %.4g (its matmuls)", extra, want)
	}
	if d := with.PeakTotal - base.PeakTotal; d < bytes {
		t.Errorf("the peak grows by %d bytes, less than the factors' %d", d, bytes)
	}
}
