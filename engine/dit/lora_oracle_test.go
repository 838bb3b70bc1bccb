package dit_test

import (
	"context"
	"h3studio/engine/testkit"
	"path/filepath"
	"testing"

	"h3studio/engine/compute"
	"h3studio/engine/dit"
	"h3studio/engine/lora"
)

// TestLoRAOracleParity checks a LoRA end to end against the official
// implementation: tools/oracle/lora_fixtures.py merges a PEFT-style LoRA
// (rank 3, alpha 6, every adaptable projection including the AdaLN
// projections, the refiner and the final AdaLN) into the float32 weights of
// the vendored diffusers transformer and runs the dit_fl2va / dit_ref2va
// fixture inputs. Here the same update, read from the PEFT file, from
// release names (interleaved QKV, fc1 [gate; value]) and from ComfyUI names
// (contiguous QKV, .alpha), runs as the run-time branch on the original
// layout (fl2va) and the diffusers layout (ref2va). Metric: rel-L2 of the
// video and audio velocities against the merged reference. Bounds: 1e-5
// (dit-f32), 2e-2 (released BF16 mixed precision).
func TestLoRAOracleParity(t *testing.T) {
	f32 := compute.Oracles(0).With(dit.OracleF32)
	for _, f := range []fixture{fixtures[1], fixtures[2]} {
		t.Run(f.name, func(t *testing.T) {
			l := load(t, f)
			ref := load(t, fixture{f.name, f.weights, "lora_" + f.name + ".safetensors"})
			wantV, wantA := ref.f32(t, "f32.out.sample"), ref.f32(t, "f32.out.audio_sample")
			for _, form := range []string{"peft", "release", "comfyui"} {
				ad, applied, err := lora.Load(l.cfg, []lora.Use{{Path: filepath.Join("testdata", "lora_"+f.name+"_"+form+".safetensors"), Strength: 1}})
				if err != nil {
					t.Fatal(err)
				}
				if a := applied[0]; len(a.Unmatched)+len(a.Unknown) > 0 {
					t.Fatalf("%s: %+v", form, a)
				}
				for _, p := range []struct {
					name  string
					o     compute.Oracles
					bound float64
				}{{"f32", f32, 1e-5}, {"bf16", 0, 2e-2}} {
					r := newRun(t, l, dit.Options{Oracles: p.o, Adapters: ad})
					v, a, err := r.forward(t, context.Background(), dit.ForwardOptions{})
					if err != nil {
						t.Fatal(err)
					}
					ev, ea := testkit.RelL2(v, wantV), testkit.RelL2(a, wantA)
					t.Logf("%s %s %s: video rel-L2 %.3g, audio %.3g (bound %g)", f.name, form, p.name, ev, ea, p.bound)
					if !(ev < p.bound && ea < p.bound) {
						t.Errorf("%s %s: rel-L2 video %.3g audio %.3g ≥ %g", form, p.name, ev, ea, p.bound)
					}
				}
			}
		})
	}
}
