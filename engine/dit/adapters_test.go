package dit_test

import (
	"context"
	"fmt"
	"h3studio/engine/testkit"
	"math/rand/v2"
	"strings"
	"testing"

	"h3studio/engine/compute"
	"h3studio/engine/compute/testbackend"
	"h3studio/engine/dit"
	"h3studio/engine/safetensors"
)

// randomMatrix is a BF16-exact rows×cols matrix of normal values times scale.
func randomMatrix(rng *rand.Rand, dt compute.DType, rows, cols int, scale float64) dit.Matrix {
	v := make([]float32, rows*cols)
	for i := range v {
		v[i] = compute.RoundBF16(float32(rng.NormFloat64() * scale))
	}
	return dit.Matrix{DType: dt, Rows: rows, Cols: cols, Data: compute.EncodeFloat32(dt, v)}
}

// randomAdapters puts a rank-3 update on every adaptable module of cfg (q
// and v only on the refiner, to exercise empty parts; a full delta on one
// fc2; a bias delta on block 0's AdaLN), sized so that the update is
// clearly visible in the output.
func randomAdapters(cfg dit.Config, seed uint64, strength float32) dit.Adapters {
	rng := rand.New(rand.NewPCG(seed, 17))
	ad := dit.Adapters{}
	const r = 3
	add := func(s dit.Site, skip ...int) {
		parts, in, err := cfg.SiteShape(s)
		if err != nil {
			panic(err)
		}
		u := dit.Update{A: randomMatrix(rng, compute.BF16, r, in, 0.5), Scale: strength * 0.7, Source: "test " + s.String()}
		for c, out := range parts {
			b := randomMatrix(rng, compute.F32, out, r, 0.03)
			for _, k := range skip {
				if k == c {
					b = dit.Matrix{}
				}
			}
			u.B = append(u.B, b)
		}
		ad[s] = append(ad[s], u)
	}
	for i := 0; i < cfg.NumLayers; i++ {
		for _, p := range []dit.Proj{dit.ProjQKV, dit.ProjOut, dit.ProjFC1, dit.ProjFC2, dit.ProjAdaLN} {
			add(dit.Site{Stack: dit.StackBlocks, Block: i, Proj: p})
		}
	}
	for i := 0; i < cfg.RefinerLayers; i++ {
		add(dit.Site{Stack: dit.StackRefiner, Block: i, Proj: dit.ProjQKV}, 1)
		add(dit.Site{Stack: dit.StackRefiner, Block: i, Proj: dit.ProjFC1})
	}
	add(dit.Site{Stack: dit.StackFinal, Proj: dit.ProjAdaLN})
	// A second LoRA on block 1's q/k/v, a full delta on block 0's fc2 and a
	// bias delta on block 0's AdaLN projection.
	add(dit.Site{Stack: dit.StackBlocks, Block: 1, Proj: dit.ProjQKV}, 0)
	fc2 := dit.Site{Stack: dit.StackBlocks, Block: 0, Proj: dit.ProjFC2}
	ad[fc2] = append(ad[fc2], dit.Update{B: []dit.Matrix{randomMatrix(rng, compute.BF16, cfg.HiddenSize, cfg.FFNDim, 0.01)}, Scale: strength, Source: "test fc2.diff"})
	ada := dit.Site{Stack: dit.StackBlocks, Block: 0, Proj: dit.ProjAdaLN}
	ad[ada] = append(ad[ada], dit.Update{B: []dit.Matrix{{}}, Bias: []dit.Matrix{randomMatrix(rng, compute.BF16, 1, cfg.AdaLNWidth(), 0.05)}, Scale: strength, Source: "test adaln.diff_b"})
	return ad
}

func forwardWith(t *testing.T, l *loaded, o compute.Oracles, ad dit.Adapters, residency compute.Residency) []float32 {
	t.Helper()
	r := newRun(t, l, dit.Options{Oracles: o, Adapters: ad, Residency: residency})
	v, a, err := r.forward(t, context.Background(), dit.ForwardOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return append(v, a...)
}

// TestAdaptersMatchMergedF32 checks the run-time low-rank branch against
// the oracle lora-merge-f32 (weights merged in float32 at bind, then run at
// float32 under dit-f32) on the tiny transformer in both layouts, with an
// update on every projection including the AdaLN tables. Metric: rel-L2 of
// the concatenated video and audio velocities. Bounds: 1e-5 for the f32
// branch, 2e-2 for the released BF16 mixed precision (streaming included).
func TestAdaptersMatchMergedF32(t *testing.T) {
	f32 := compute.Oracles(0).With(dit.OracleF32)
	for _, f := range []fixture{fixtures[1], fixtures[2]} {
		t.Run(f.name, func(t *testing.T) {
			l := load(t, f)
			ad := randomAdapters(l.cfg, 5, 1)
			base := forwardWith(t, l, f32, nil, compute.Resident)
			ref := forwardWith(t, l, f32.With(dit.OracleLoRAMerge), ad, compute.Resident)
			if e := testkit.RelL2(base, ref); e < 0.05 {
				t.Fatalf("the test update barely moves the output (rel-L2 %.3g base vs merged)", e)
			}
			for _, c := range []struct {
				name      string
				o         compute.Oracles
				residency compute.Residency
				bound     float64
			}{
				{"f32", f32, compute.Resident, 1e-5},
				{"f32-unfused", f32.With(dit.OracleUnfused), compute.Resident, 1e-5},
				{"bf16", 0, compute.Resident, 2e-2},
				{"bf16-streaming", 0, compute.Streaming, 2e-2},
			} {
				got := forwardWith(t, l, c.o, ad, c.residency)
				e := testkit.RelL2(got, ref)
				t.Logf("%s %s: run-time branch vs merged f32 rel-L2 %.3g (bound %g; base vs merged %.3g)", f.name, c.name, e, c.bound, testkit.RelL2(base, ref))
				if !(e < c.bound) {
					t.Errorf("%s: rel-L2 %.3g ≥ %g", c.name, e, c.bound)
				}
			}
		})
	}
}

// TestAdaptersStrengthZeroExact: updates at scale 0 leave the output bit
// for bit unchanged (the branch adds exact zeros), in both precisions.
func TestAdaptersStrengthZeroExact(t *testing.T) {
	l := load(t, fixtures[1])
	for _, o := range []compute.Oracles{0, compute.Oracles(0).With(dit.OracleF32)} {
		want := forwardWith(t, l, o, nil, compute.Resident)
		got := forwardWith(t, l, o, randomAdapters(l.cfg, 9, 0), compute.Resident)
		if n, ok := sameBits(got, want); !ok {
			t.Errorf("oracles %v: %d values differ with updates at scale 0", o, n)
		}
	}
}

// TestAdaptersRefuseMisfit: an update whose shape does not fit its module,
// or a module the transformer lacks, is refused naming it.
func TestAdaptersRefuseMisfit(t *testing.T) {
	l := load(t, fixtures[1])
	ad := randomAdapters(l.cfg, 3, 1)
	s := dit.Site{Stack: dit.StackBlocks, Block: 1, Proj: dit.ProjOut}
	ad[s][0].B[0].Rows++
	ad[s][0].B[0].Data = append(ad[s][0].B[0].Data, make([]byte, 4*ad[s][0].B[0].Cols)...)
	if err := ad.Check(l.cfg); err == nil || !strings.Contains(err.Error(), "test blocks.1.attn.out_proj") {
		t.Errorf("a misfit lora_B gave %v", err)
	}
	ghost := dit.Adapters{{Stack: dit.StackBlocks, Block: l.cfg.NumLayers, Proj: dit.ProjFC1}: nil}
	if err := ghost.Check(l.cfg); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("blocks.%d.mlp.fc1", l.cfg.NumLayers)) {
		t.Errorf("a missing block gave %v", err)
	}
}

// TestAdaptersOnQuantizedWeights: LoRA updates apply on top of quantized
// linear weights (the run-time branch after the quantized product), resident
// and streamed. At scale 0 the quantized forward is unchanged bit for bit;
// at scale 1 the update moves the quantized forward as far as it moves the
// BF16 one, and the quantized forward with the update stays within the
// quantization's own distance of the BF16 forward with it (the bounds of
// TestQuantizedForwardQuality: int8 0.02, int4 0.1). Merging the updates
// into quantized weights (the lora-merge-f32 oracle) is refused, naming it.
func TestAdaptersOnQuantizedWeights(t *testing.T) {
	l := load(t, fixtures[1])
	ad := randomAdapters(l.cfg, 5, 1)
	fwd := func(q compute.QuantFormat, ad dit.Adapters, res compute.Residency) []float32 {
		r := newRun(t, l, dit.Options{Quant: q, Adapters: ad, Residency: res})
		v, a, err := r.forward(t, context.Background(), dit.ForwardOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return append(v, a...)
	}
	bfBase := fwd(compute.QuantFormat{}, nil, compute.Resident)
	bfLoRA := fwd(compute.QuantFormat{}, ad, compute.Resident)
	moved := testkit.RelL2(bfLoRA, bfBase)
	for _, c := range []struct {
		q     compute.QuantFormat
		res   compute.Residency
		bound float64
	}{
		{compute.Int8, compute.Resident, 0.02},
		{compute.Int8, compute.Streaming, 0.02},
		{compute.Int4, compute.Resident, 0.1},
	} {
		name := fmt.Sprintf("%s/%s", c.q, c.res)
		qBase := fwd(c.q, nil, c.res)
		if n, ok := sameBits(fwd(c.q, randomAdapters(l.cfg, 5, 0), c.res), qBase); !ok {
			t.Errorf("%s: updates at scale 0 change value %d of the quantized forward", name, n)
		}
		qLoRA := fwd(c.q, ad, c.res)
		qMoved, e := testkit.RelL2(qLoRA, qBase), testkit.RelL2(qLoRA, bfLoRA)
		t.Logf("%s: the update moves the forward by %.3g (BF16 %.3g); with it, quantized vs BF16 %.3g (without %.3g; bound %g)",
			name, qMoved, moved, e, testkit.RelL2(qBase, bfBase), c.bound)
		if qMoved < 0.05 || qMoved < 0.8*moved || qMoved > 1.25*moved {
			t.Errorf("%s: the update moves the quantized forward by %.3g, the BF16 one by %.3g", name, qMoved, moved)
		}
		if !(e < c.bound) {
			t.Errorf("%s: with the update, quantized vs BF16 rel-L2 %.3g ≥ %g", name, e, c.bound)
		}
	}
	b := testbackend.New(t)
	o := dit.Options{Quant: compute.Int8, Adapters: ad, Oracles: compute.Oracles(0).With(dit.OracleLoRAMerge)}
	if _, err := dit.Load(b, safetensors.NewBinder("dit", l.ck, b), &l.cfg, &o); err == nil || !strings.Contains(err.Error(), "lora-merge-f32") {
		t.Errorf("merging updates into quantized weights: %v", err)
	}
}
