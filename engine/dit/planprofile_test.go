package dit_test

import (
	"context"
	"testing"

	"h3studio/engine/compute"
	"h3studio/engine/compute/cpu"
	"h3studio/engine/compute/meta"
	"h3studio/engine/dit"
	"h3studio/engine/safetensors"
)

// TestPlanPredictsProfile: the shape-only run the plan makes (engine/plan,
// the planning backend) reports the same per-forward figures as --profile
// measures on a computing backend — peak and live tracked storage,
// dispatches and blocks, exactly — for one forward of each fixture's model,
// exact and with core reuse. (FLOPs are logged, not compared: the two
// backends' counters weigh some non-matrix kernels with different
// per-element constants, ≈ 1 % apart on these tiny forwards.)
func TestPlanPredictsProfile(t *testing.T) {
	for _, f := range fixtures {
		l := load(t, f)
		profile := func(b compute.Backend, fo dit.ForwardOptions) []dit.ForwardProfile {
			var got []dit.ForwardProfile
			m, err := dit.Load(b, safetensors.NewBinder("dit", l.ck, b), &l.cfg, &dit.Options{Profile: func(p dit.ForwardProfile) { got = append(got, p) }})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			ctx := context.Background()
			lay := l.layout(t)
			emb := compute.MustAlloc(b, compute.F32, len(lay.TextIndices), l.cfg.TextDim)
			text, err := m.RefineText(ctx, emb)
			if err != nil {
				t.Fatal(err)
			}
			tab := l.tables(t, ctx, m)
			defer tab.Release()
			seq, err := m.NewSequence(lay, text)
			if err != nil {
				t.Fatal(err)
			}
			defer seq.Release()
			nv, na := len(lay.VideoIndices), len(lay.AudioIndices)
			step := dit.Step{Video: compute.MustAlloc(b, compute.F32, nv, l.cfg.PatchDim()), Audio: compute.MustAlloc(b, compute.F32, na, l.cfg.AudioInChannels),
				TimestepIndex: l.i64(t, "in.timestep_indices")}
			if err := b.Upload(step.Video, make([]byte, step.Video.Bytes())); err != nil {
				t.Fatal(err)
			}
			if err := b.Upload(step.Audio, make([]byte, step.Audio.Bytes())); err != nil {
				t.Fatal(err)
			}
			out := dit.Velocity{Video: compute.MustAlloc(b, compute.F32, nv, l.cfg.PatchDim()), Audio: compute.MustAlloc(b, compute.F32, na, l.cfg.AudioInChannels)}
			for _, o := range []dit.ForwardOptions{{Core: dit.CoreCache}, fo} {
				if err := m.Forward(ctx, seq, tab, step, out, o); err != nil {
					t.Fatal(err)
				}
			}
			return got
		}
		got := profile(cpu.New(cpu.Options{}), dit.ForwardOptions{Core: dit.CoreReuse})
		want := profile(meta.New(), dit.ForwardOptions{Core: dit.CoreReuse})
		if len(got) != 2 || len(want) != 2 {
			t.Fatalf("%s: %d and %d profiles", f.name, len(got), len(want))
		}
		for i := range got {
			c, p := got[i], want[i]
			if c.PeakBytes != p.PeakBytes || c.LiveBytes != p.LiveBytes || c.Dispatches != p.Dispatches || c.Blocks != p.Blocks {
				t.Errorf("%s forward %d: measured peak %d, live %d, %d dispatches, %g FLOPs, %d blocks; planned peak %d, live %d, %d dispatches, %g FLOPs, %d blocks",
					f.name, i, c.PeakBytes, c.LiveBytes, c.Dispatches, c.FLOPs, c.Blocks, p.PeakBytes, p.LiveBytes, p.Dispatches, p.FLOPs, p.Blocks)
			} else {
				t.Logf("%s forward %d: peak %d B, live %d B, %d dispatches, %g FLOPs (measured = planned)", f.name, i, c.PeakBytes, c.LiveBytes, c.Dispatches, c.FLOPs)
			}
		}
	}
}
