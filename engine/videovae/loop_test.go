package videovae

import (
	"context"
	"h3studio/engine/testkit"
	"testing"

	"h3studio/engine/compute/testbackend"
)

// TestLoopDecodeToPixels: loop_t2va_f32's out.video recomputed from its
// out.latents (the pipeline's VideoDecodeStep: de-normalize, decode,
// ImageNet un-normalize, clamp; [F, 3, H, W] order). The check's bound is
// 1e-4. Measured (seed 0): 1.1e-7 (the other two loops, checked once
// outside the tests: 1.1e-7 and 1.2e-7).
func TestLoopDecodeToPixels(t *testing.T) {
	fx := openFixture(t, "loop_video.safetensors")
	m := openLayout(t, testbackend.New(t), "original")
	for _, loop := range []string{"loop_t2va_f32"} {
		z := fx.volume(t, loop+".out.latents")
		v, err := m.DecodeToPixels(context.Background(), z, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := fx.volume(t, loop+".out.video") // [1, F, 3, H, W] read as [F, 3, H, W]
		if v.T != want.C || v.C != want.T || v.H != want.H || v.W != want.W {
			t.Fatalf("%s: decoded [%d %d %d %d] (C,F,H,W), fixture [F,C,H,W] %v", loop, v.C, v.T, v.H, v.W, want.Shape())
		}
		e := testkit.RelL2(v.TimeMajor(), want.Data)
		if !(e < 1e-5) {
			t.Errorf("%s: out.video rel-L2 %.3g ≥ 1e-5", loop, e)
		}
		t.Logf("%s: out.video rel-L2 %.2g", loop, e)
	}
}
