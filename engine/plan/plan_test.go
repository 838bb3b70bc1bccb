package plan

import (
	"testing"

	"h3studio/engine/denoise"
	"h3studio/engine/layout"
)

const gib = 1 << 30

// TestDiTTargets checks h3.c's figures for the released DiT at 512²×22
// frames (20 steps, 50 layers): tracked storage ≤ 36.5 GiB resident and
// ≤ 2.0 GiB with two-block streaming, the AdaLN projections dropped once the
// modulation tables exist.
func TestDiTTargets(t *testing.T) {
	es, err := Run(Query{Canvas: layout.Canvas{Width: 512, Height: 512}, Frames: 22}, "dit")
	if err != nil {
		t.Fatal(err)
	}
	e := es[0]
	t.Logf("512²×22: rows %d, %.1f TFLOP/forward, weights %.2f GiB/forward, resident %.2f GiB, streaming %.2f GiB",
		e.Rows, e.FLOPs/1e12, e.WeightBytes/gib, float64(e.Resident.Peak)/gib, float64(e.Streaming.Peak)/gib)
	if want := 1866 + DefaultTextRows; e.Rows != want {
		t.Errorf("rows %d, want %d (1,792 video + 74 audio + text)", e.Rows, want)
	}
	if e.Evaluations != 20 {
		t.Errorf("%d evaluations, want 20", e.Evaluations)
	}
	if e.Resident.Peak > 36.5*gib {
		t.Errorf("resident peak %.2f GiB > 36.5 GiB", float64(e.Resident.Peak)/gib)
	}
	if e.Streaming.Peak > 2.0*gib {
		t.Errorf("streaming peak %.2f GiB > 2.0 GiB", float64(e.Streaming.Peak)/gib)
	}
	// Every block's four matrices are read once per forward: 50 × 770.7 MB.
	if w := e.WeightBytes / gib; w < 35.8 || w > 36.0 {
		t.Errorf("weight bytes per forward %.2f GiB, want ≈ 35.9", w)
	}
}

func TestControlsChangeTheWork(t *testing.T) {
	base := Query{Canvas: layout.Canvas{Width: 256, Height: 256}, Frames: 22}
	exact, err := Run(base, "dit")
	if err != nil {
		t.Fatal(err)
	}
	thin := base
	thin.Controls = denoise.Controls{Layers: 40}
	th, err := Run(thin, "dit")
	if err != nil {
		t.Fatal(err)
	}
	if r := th[0].FLOPs / exact[0].FLOPs; r < 0.78 || r > 0.82 {
		t.Errorf("40 of 50 layers: forward FLOPs ratio %.3f, want ≈ 0.8", r)
	}
	reuse := base
	reuse.Controls = denoise.Controls{Reuse: 2}
	re, err := Run(reuse, "dit")
	if err != nil {
		t.Fatal(err)
	}
	if re[0].Evaluations != 11 || re[0].TotalFLOPs >= exact[0].TotalFLOPs {
		t.Errorf("reuse 2: %d evaluations, %.3g vs %.3g total FLOPs", re[0].Evaluations, re[0].TotalFLOPs, exact[0].TotalFLOPs)
	}
}

func TestQueryErrors(t *testing.T) {
	for _, q := range []Query{
		{Canvas: layout.Canvas{Width: 500, Height: 512}},
		{Frames: 400},
		{Keyframes: 3},
		{Controls: denoise.Controls{Reuse: 2, CoreReuse: 2}},
	} {
		if _, err := Run(q); err == nil {
			t.Errorf("%+v accepted", q)
		}
	}
	if _, err := Run(Query{}, "nope"); err == nil {
		t.Error("unknown component accepted")
	}
}
