package qwen3vl

import (
	"context"
	"fmt"
	"testing"

	"h3studio/engine/compute"
	"h3studio/engine/compute/cpu"
)

// TestPlanMatchesMeasured: Plan's activation peak equals the CPU backend's
// measured peak of live storage for every fixture case, precision and mode
// (weights are mapped on the CPU backend, so live storage is activations).
func TestPlanMatchesMeasured(t *testing.T) {
	p := openParity(t)
	b := cpu.New(cpu.Options{})
	for _, mode := range []compute.Residency{compute.Resident, compute.Streaming} {
		m := loadTest(t, b, mode)
		for _, c := range []string{"text_t2va", "text_fl2va", "text_video", "text_ref2va"} {
			in := caseInput(t, p, m, c)
			runs, err := m.validate(in)
			if err != nil {
				t.Fatal(err)
			}
			var blocks []Grid
			for _, r := range runs {
				blocks = append(blocks, r.Grid)
			}
			for _, dt := range []compute.DType{compute.F32, compute.BF16} {
				b.ResetPeak()
				base := b.Stats().LiveBytes
				out, err := m.Encode(context.Background(), in, EncodeOptions{Precision: dt})
				if err != nil {
					t.Fatal(err)
				}
				got := b.Stats().PeakBytes - base
				b.Free(out.Hidden)
				f := Plan(m.Config(), mode, PlanInput{Tokens: len(in.IDs), Blocks: blocks, Precision: dt})
				if want := max(f.VisionActivations, f.TextActivations); got != want {
					t.Errorf("%s %s %v: measured activation peak %d, planned %d (vision %d, text %d)", mode, c, dt, got, want, f.VisionActivations, f.TextActivations)
				}
			}
		}
	}
}

// TestPlanReleased pins the released model's weight figures (spec §6.3:
// ≈0.975 GB per layer, 50 layers ≈ 48.8 GB) and the streaming bound.
func TestPlanReleased(t *testing.T) {
	c := ReleasedConfig()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if c.TapLayers() != 50 {
		t.Fatalf("tap %d", c.TapLayers())
	}
	in := PlanInput{Tokens: 512, Blocks: []Grid{{1, 48, 84}}}
	res := Plan(c, compute.Resident, in)
	str := Plan(c, compute.Streaming, in)
	const layer = 2 * (5120*8192*2 + 5120*1024*2 + 3*5120*25600 + 2*5120 + 2*128)
	if res.LayerBytes != layer || res.VisionPhaseWeights != 50*layer+res.VisionBytes {
		t.Fatalf("resident %+v", res)
	}
	if str.TextPhaseWeights != 2*layer || str.Streamed != 50*layer {
		t.Fatalf("streaming %+v", str)
	}
	if str.Peak >= res.Peak/10 {
		t.Fatalf("streaming peak %d not far below resident %d", str.Peak, res.Peak)
	}
	t.Logf("released, 512 tokens + one 768×1344 keyframe, BF16:\n%s\n%s", describe(res), describe(str))
}

func describe(f Footprint) string {
	gb := func(n int64) string { return fmt.Sprintf("%.2f GB", float64(n)/1e9) }
	return fmt.Sprintf("%-9s layer %s, vision %s; vision phase %s + %s act; decoder phase %s + %s act; peak %s; streamed %s",
		f.Residency, gb(f.LayerBytes), gb(f.VisionBytes), gb(f.VisionPhaseWeights), gb(f.VisionActivations),
		gb(f.TextPhaseWeights), gb(f.TextActivations), gb(f.Peak), gb(f.Streamed))
}
