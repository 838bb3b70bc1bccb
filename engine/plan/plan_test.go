package plan

import (
	"strings"
	"testing"

	"h3studio/engine/compute"
	"h3studio/engine/denoise"
	"h3studio/engine/layout"
	"h3studio/engine/qwen3vl"
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
		{Frames: 5}, // aligns to 5: below the 22 frames of one decoder chunk
		{TextRows: MaxTextRows + 1},
		{TextRows: -1},
		{Keyframes: 3},
		{Controls: denoise.Controls{Reuse: 2, CoreReuse: 2}},
	} {
		// The DiT alone: Normalize must refuse these, not a later estimator.
		if _, err := Run(q, "dit"); err == nil {
			t.Errorf("%+v accepted", q)
		}
	}
	if _, err := Run(Query{}, "nope"); err == nil {
		t.Error("unknown component accepted")
	}
}

// TestEveryComponent: every pipeline component has a row, in pipeline
// order, at the development size and at the release's largest default
// request, with work and storage in both residency modes that agree with
// the components' own cost models.
func TestEveryComponent(t *testing.T) {
	want := []string{"text-encoder", "dit", "video-vae", "video-vae-adaptive", "audio-vae"}
	if got := Components(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("components %v, want %v", got, want)
	}
	for _, c := range []struct {
		q                     Query
		tiles, adaptive, audA int
	}{
		{Query{Canvas: layout.Canvas{Width: 512, Height: 512}, Frames: 22}, 9, 4, 37},
		{Query{Canvas: layout.Canvas{Width: 1344, Height: 768}, Frames: 124}, 7 * 28, 7 * 15, 207},
	} {
		es, err := Run(c.q)
		if err != nil {
			t.Fatal(err)
		}
		by := map[string]Estimate{}
		for _, e := range es {
			by[e.Component] = e
			if e.FLOPs <= 0 || e.TotalFLOPs < e.FLOPs || e.WeightBytes <= 0 || e.Rows <= 0 || e.Evaluations < 1 {
				t.Errorf("%v %s: %+v", c.q.Canvas, e.Component, e)
			}
			for _, s := range []Storage{e.Resident, e.Streaming} {
				if s.Peak <= 0 || s.Peak != s.Weights+s.Activations {
					t.Errorf("%v %s: storage %+v", c.q.Canvas, e.Component, s)
				}
			}
			if e.Streaming.Peak > e.Resident.Peak {
				t.Errorf("%v %s: streaming peak %d above resident %d", c.q.Canvas, e.Component, e.Streaming.Peak, e.Resident.Peak)
			}
		}
		te := by["text-encoder"]
		f := qwen3vl.Plan(qwen3vl.ReleasedConfig(), compute.Resident, qwen3vl.PlanInput{Tokens: DefaultTextRows})
		if te.Resident.Peak != f.Peak || te.Streaming.Peak >= te.Resident.Peak/10 || te.Rows != DefaultTextRows {
			t.Errorf("text encoder %+v (qwen3vl.Plan peak %d)", te, f.Peak)
		}
		for name, passes := range map[string]int{"video-vae": c.tiles, "video-vae-adaptive": c.adaptive} {
			v := by[name]
			if v.Evaluations != passes || v.Streaming.Weights >= v.Resident.Weights/10 || v.TotalFLOPs != v.FLOPs*float64(passes) {
				t.Errorf("%v %s: %d passes (want %d), %+v", c.q.Canvas, name, v.Evaluations, passes, v)
			}
		}
		if a := by["audio-vae"]; a.Rows != c.audA || a.Evaluations != 2 || a.Resident != a.Streaming {
			t.Errorf("%v audio: %+v", c.q.Canvas, a)
		}
	}
}
