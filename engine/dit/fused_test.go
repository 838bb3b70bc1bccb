package dit_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"h3studio/engine/compute"
	"h3studio/engine/compute/meta"
	"h3studio/engine/compute/testbackend"
	"h3studio/engine/dit"
	"h3studio/engine/safetensors"
)

// oracleSets are the fused DiT's oracles, one at a time and all together.
var oracleSets = []struct {
	name string
	o    compute.Oracles
}{
	{"dit-unfused-adaln", compute.Oracles(0).With(dit.OracleUnfusedAdaLN)},
	{"dit-unfused-gate-adaln", compute.Oracles(0).With(dit.OracleUnfusedGateAdaLN)},
	{"dit-unfused-cross-block", compute.Oracles(0).With(dit.OracleUnfusedCrossBlock)},
	{"dit-unfused-qk-rope", compute.Oracles(0).With(dit.OracleUnfusedQKRoPE)},
	{"dit-unfused", compute.Oracles(0).With(dit.OracleUnfused)},
}

func sameBits(a, b []float32) (int, bool) {
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return i, false
		}
	}
	return 0, len(a) == len(b)
}

// TestFusedMatchesUnfused checks that the fused kernels change no bit of a
// forward: for every fixture (both checkpoint layouts), both precisions and
// speed controls that cut the cross-block hand-off (a skipped block, a
// token-reduced span, streaming), the default path and each unfused oracle
// give identical velocities and intermediates (the refined text included).
// With H3_TEST_BACKEND=metal it compares the fused kernels with the Metal
// backend's own unfused kernels (dit-unfused only, to keep the emulation
// short).
func TestFusedMatchesUnfused(t *testing.T) {
	controls := []struct {
		name string
		fo   dit.ForwardOptions
	}{
		{"exact", dit.ForwardOptions{}},
		{"skip block 1", dit.ForwardOptions{Active: []bool{true, false, true}}},
		{"token reduction 1..2", dit.ForwardOptions{Reduce: &dit.TokenSpan{Begin: 1, End: 2}}},
	}
	for _, f := range fixtures {
		for _, prec := range []struct {
			name string
			o    compute.Oracles
		}{{"bf16", 0}, {"f32", compute.Oracles(0).With(dit.OracleF32)}} {
			t.Run(f.name+"/"+prec.name, func(t *testing.T) {
				l := load(t, f)
				type result struct{ v, a []float32 }
				trace := map[string][]float32{}
				runAll := func(o compute.Oracles, residency compute.Residency, record bool) []result {
					opts := dit.Options{Oracles: prec.o | o, Residency: residency}
					if record {
						opts.Trace = func(name string, x *compute.Tensor) {
							if strings.HasPrefix(name, "block") || name == "token_refiner" || name == "norm_out" {
								v, err := compute.ToFloat32(x)
								if err != nil {
									t.Fatal(err)
								}
								trace[fmt.Sprintf("%v/%s", o, name)] = v
							}
						}
					}
					r := newRun(t, l, opts)
					var out []result
					for _, c := range controls {
						v, a, err := r.forward(t, context.Background(), c.fo)
						if err != nil {
							t.Fatalf("%s: %v", c.name, err)
						}
						out = append(out, result{v, a})
					}
					return out
				}
				want := runAll(0, compute.Resident, true)
				check := func(name string, got []result) {
					for i, c := range controls {
						for _, p := range []struct {
							what string
							g, w []float32
						}{{"video", got[i].v, want[i].v}, {"audio", got[i].a, want[i].a}} {
							if j, ok := sameBits(p.g, p.w); !ok {
								t.Errorf("%s, %s: %s velocity differs from the fused path at %d (%g vs %g)", name, c.name, p.what, j, p.g[j], p.w[j])
							}
						}
					}
				}
				sets := oracleSets
				if testbackend.Metal() {
					sets = sets[len(sets)-1:] // emulated: all fusions at once only (slow)
				}
				for _, os := range sets {
					check(os.name, runAll(os.o, compute.Resident, os.name == "dit-unfused"))
				}
				if !testbackend.Metal() {
					check("streaming", runAll(0, compute.Streaming, false))
				}
				unf := compute.Oracles(0).With(dit.OracleUnfused)
				n := 0
				for k, v := range trace {
					if strings.HasPrefix(k, fmt.Sprintf("%v/", unf)) {
						continue
					}
					w := trace[fmt.Sprintf("%v/", unf)+strings.SplitN(k, "/", 2)[1]]
					if j, ok := sameBits(v, w); !ok {
						t.Errorf("%s differs from the unfused path at %d", k, j)
					}
					n++
				}
				if n < 5 {
					t.Fatalf("only %d intermediates compared", n)
				}
			})
		}
	}
}

// blockDispatches runs one forward of the dit_t2va layout (123 rows) with
// configuration cfg on the planning backend and returns the dispatches
// recorded between the end of block 0 and the end of each later block.
func blockDispatches(t *testing.T, cfg dit.Config, o compute.Oracles) []int64 {
	t.Helper()
	l := load(t, fixtures[0])
	mb := meta.New()
	var marks []int64
	m, err := dit.Load(mb, safetensors.NewBinder("dit", dit.PlanningSource(cfg, dit.OriginalLayout), mb.Weights()), &cfg,
		&dit.Options{Oracles: o, Trace: func(name string, _ *compute.Tensor) {
			if strings.HasPrefix(name, "block") && strings.HasSuffix(name, ".out") {
				marks = append(marks, mb.Usage().Dispatches)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	lay := l.layout(t)
	text, err := m.RefineText(ctx, compute.MustAlloc(mb, compute.BF16, len(lay.TextIndices), cfg.TextDim))
	if err != nil {
		t.Fatal(err)
	}
	tab := l.tables(t, ctx, m)
	seq, err := m.NewSequence(lay, text)
	if err != nil {
		t.Fatal(err)
	}
	nv, na := len(lay.VideoIndices), len(lay.AudioIndices)
	step := dit.Step{Video: compute.MustAlloc(mb, compute.F32, nv, cfg.PatchDim()), Audio: compute.MustAlloc(mb, compute.F32, na, cfg.AudioInChannels),
		TimestepIndex: l.i64(t, "in.timestep_indices")}
	out := dit.Velocity{Video: compute.MustAlloc(mb, compute.F32, nv, cfg.PatchDim()), Audio: compute.MustAlloc(mb, compute.F32, na, cfg.AudioInChannels)}
	if err := m.Forward(ctx, seq, tab, step, out, dit.ForwardOptions{}); err != nil {
		t.Fatal(err)
	}
	var per []int64
	for i := 1; i < len(marks); i++ {
		per = append(per, marks[i]-marks[i-1])
	}
	return per
}

// TestDispatchesPerBlock pins the kernels one DiT block records (every
// kernel call is one Metal dispatch for BF16/F32 activations): the
// released 50-block configuration (56 heads of 128, projected 8 heads at a
// time) and the tiny oracle model (3 heads), on 123 rows (one feed-forward
// chunk; each further 2,048 rows adds 3 dispatches). Fused, a block after
// the first takes its attention input from the previous block and hands
// the next one its own; the last block ends with a plain gated residual.
func TestDispatchesPerBlock(t *testing.T) {
	tiny, err := dit.ReadConfig("testdata/FL2VA/transformer")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name         string
		cfg          dit.Config
		o            compute.Oracles
		middle, last int64 // blocks 1..N-2, block N-1
	}{
		// 7 × (QKV MatMul + QKNormRoPE), attention, transpose, out MatMul,
		// GatedAddRMSNormModulate, FC1, GLU, FC2, GatedAddRMSNormModulate.
		{"released/fused", dit.Released(), 0, 22, 22},
		// + RMSNormModulate at the start, GatedAdd at the end.
		{"released/dit-unfused-cross-block", dit.Released(), compute.Oracles(0).With(dit.OracleUnfusedCrossBlock), 23, 23},
		// 2 (RMSNorm, Modulate) + 7 × (MatMul, Transpose, 3 Copy) + 4
		// (QK-norms, RoPEs) + 3 + GatedAdd + 2 + 3 + GatedAdd.
		{"released/dit-unfused", dit.Released(), compute.Oracles(0).With(dit.OracleUnfused), 51, 51},
		{"tiny/fused", tiny, 0, 10, 10},
		{"tiny/dit-unfused", tiny, compute.Oracles(0).With(dit.OracleUnfused), 21, 21},
	} {
		per := blockDispatches(t, c.cfg, c.o)
		if len(per) != c.cfg.NumLayers-1 {
			t.Fatalf("%s: %d block marks", c.name, len(per)+1)
		}
		t.Logf("%s: %d dispatches per block (blocks 1..%d)", c.name, per[0], c.cfg.NumLayers-1)
		for i, n := range per {
			want := c.middle
			if i == len(per)-1 {
				want = c.last
			}
			if n != want {
				t.Errorf("%s: block %d records %d dispatches, want %d", c.name, i+1, n, want)
			}
		}
	}
}

// TestForwardProfile checks the per-forward profile: blocks, dispatches
// (the block stack's share pinned by TestDispatchesPerBlock), device time,
// peak storage, and the summary line.
func TestForwardProfile(t *testing.T) {
	l := load(t, fixtures[0])
	var got []dit.ForwardProfile
	var sum dit.ProfileSummary
	r := newRun(t, l, dit.Options{Profile: func(p dit.ForwardProfile) { got = append(got, p); sum.Add(p) }})
	ctx := context.Background()
	for _, fo := range []dit.ForwardOptions{{}, {Core: dit.CoreCache}, {Core: dit.CoreReuse}} {
		if _, _, err := r.forward(t, ctx, fo); err != nil {
			t.Fatal(err)
		}
	}
	if len(got) != 3 {
		t.Fatalf("%d profiles for 3 forwards", len(got))
	}
	exact, reuse := got[0], got[2]
	// The block stack: 11 + 10 + 10 dispatches (fused; the first block
	// computes its own pre-norm) against the one Add of a core reuse.
	if exact.Blocks != 3 || reuse.Blocks != 0 || exact.Dispatches-reuse.Dispatches != 30 {
		t.Errorf("exact %+v, core reuse %+v", exact, reuse)
	}
	for i, p := range got {
		if p.DeviceTime <= 0 || p.Wall <= 0 || p.PeakBytes <= 0 || p.PeakBytes < p.LiveBytes || p.FLOPs <= 0 {
			t.Errorf("forward %d: %+v", i, p)
		}
		if testbackend.Metal() == (p.DeviceTime == p.Wall) {
			t.Errorf("forward %d: device time %v, wall %v on %s", i, p.DeviceTime, p.Wall, r.b.Name())
		}
	}
	s := sum.String()
	t.Log(s)
	if sum.Forwards != 3 || sum.Blocks != 6 || !strings.HasPrefix(s, "3 DiT forwards: ") {
		t.Errorf("summary %+v: %s", sum, s)
	}
}
