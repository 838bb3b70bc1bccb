package denoise_test

import (
	"context"
	"errors"
	"fmt"
	"h3studio/engine/testkit"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"h3studio/engine/compute"
	"h3studio/engine/compute/testbackend"
	"h3studio/engine/denoise"
	"h3studio/engine/dit"
	"h3studio/engine/layout"
	"h3studio/engine/safetensors"
)

// testdata holds the inputs, per-step velocities and final latents of the
// oracle's loop fixtures (shared/oracle-data, seed 0); the tiny checkpoints
// are engine/dit's testdata.

const (
	fl2vaWeights  = "../dit/testdata/FL2VA/transformer"
	ref2vaWeights = "../dit/testdata/transformer_ref"
)

type fixtureFile struct{ f *safetensors.File }

func openFixture(t testing.TB, name string) fixtureFile {
	t.Helper()
	return fixtureFile{testkit.Open(t, filepath.Join("testdata", name+".safetensors"))}
}

func (x fixtureFile) f32(t testing.TB, name string) []float32 {
	t.Helper()
	v, _ := testkit.Float32s(t, x.f, name)
	return v
}

func (x fixtureFile) i64(t testing.TB, name string) []int64 {
	t.Helper()
	v, _ := testkit.Int64s(t, x.f, name)
	return v
}

// openModel opens a tiny transformer on the test backend (testbackend: the
// CPU reference, or Metal with H3_TEST_BACKEND=metal).
func openModel(t testing.TB, dir string, opts dit.Options) (*dit.Model, compute.Backend) {
	t.Helper()
	cfg, err := dit.ReadConfig(dir)
	if err != nil {
		t.Fatal(err)
	}
	ck, err := safetensors.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	b := testbackend.New(t)
	m, err := dit.Load(b, safetensors.NewBinder("dit", ck, b), &cfg, &opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(); ck.Close() })
	return m, b
}

// request builds the fixture's request: 22 frames = 7 latent frames of
// 4×6, 37 audio latents, keyframes for fl2va.
func request(t testing.TB, b compute.Backend, x fixtureFile, anchors []layout.Anchor, steps int) denoise.Request {
	t.Helper()
	emb := x.f32(t, "in.prompt_embeds")
	tags := x.i64(t, "in.text_token_tags")
	text, err := compute.FromFloat32(b, compute.F32, compute.Shape{len(tags), len(emb) / len(tags)}, emb)
	if err != nil {
		t.Fatal(err)
	}
	req := denoise.Request{Text: text, TextTags: tags, Target: layout.Grid{T: 7, H: 4, W: 6}, AudioLatents: 37,
		VideoNoise: x.f32(t, "in.video_noise"), AudioNoise: x.f32(t, "in.audio_noise"), Controls: denoise.Controls{Steps: steps}}
	for i, a := range anchors {
		req.Keyframes = append(req.Keyframes, denoise.Keyframe{Anchor: a,
			Latent: x.f32(t, fmt.Sprintf("in.condition_latents.%d", i)), Noise: x.f32(t, fmt.Sprintf("in.condition_noise.%d", i))})
	}
	return req
}

// TestLoopParity runs the three loop fixtures (4-point grids, 3 forwards)
// and compares every step's velocities and the final latents with the
// oracle. Bounds: 1e-4 (f32 loops), 2e-2 (bf16). Measured: ≤ 2.3e-7 (f32),
// ≤ 3.3e-3 (bf16); see docs/dit.md.
func TestLoopParity(t *testing.T) {
	for _, c := range []struct {
		name    string
		anchors []layout.Anchor
		oracles compute.Oracles
		bound   float64
	}{
		{"loop_t2va_f32", nil, compute.Oracles(0).With(dit.OracleF32), 1e-4},
		{"loop_fl2va_f32", []layout.Anchor{layout.First, layout.Last}, compute.Oracles(0).With(dit.OracleF32), 1e-4},
		{"loop_t2va_bf16", nil, 0, 2e-2},
	} {
		t.Run(c.name, func(t *testing.T) {
			x := openFixture(t, c.name)
			m, b := openModel(t, fl2vaWeights, dit.Options{Oracles: c.oracles})
			req := request(t, b, x, c.anchors, 3)
			worst := 0.0
			check := func(name string, got []float32) {
				e := testkit.RelL2(got, x.f32(t, name))
				worst = max(worst, e)
				if !(e < c.bound) {
					t.Errorf("%s: rel-L2 %.3g ≥ %g", name, e, c.bound)
				}
			}
			obs := denoise.Observer{
				Prepared: func(p *denoise.Prepared) {
					if len(c.anchors) > 0 {
						check("prep.condition_rows", p.ConditionRows)
					}
				},
				Step: func(s *denoise.StepRecord) {
					check(fmt.Sprintf("step%d.noise_pred", s.Step), s.VideoVelocity)
					check(fmt.Sprintf("step%d.audio_noise_pred", s.Step), s.AudioVelocity)
				},
			}
			res, err := denoise.Run(context.Background(), m, req, obs)
			if err != nil {
				t.Fatal(err)
			}
			check("out.latents", res.Latents)
			check("out.audio_latents", res.AudioLatents)
			if res.Forwards != 3 {
				t.Errorf("%d forwards, want 3", res.Forwards)
			}
			t.Logf("%s: worst rel-L2 %.3g (bound %g)", c.name, worst, c.bound)
		})
	}
}

// TestConditionRowsPinned checks that the keyframe rows never change while
// every generated row does.
func TestConditionRowsPinned(t *testing.T) {
	x := openFixture(t, "loop_fl2va_f32")
	m, b := openModel(t, fl2vaWeights, dit.Options{})
	req := request(t, b, x, []layout.Anchor{layout.First, layout.Last}, 4)
	var cond []float32
	obs := denoise.Observer{
		Prepared: func(p *denoise.Prepared) { cond = append([]float32(nil), p.ConditionRows...) },
		Step: func(s *denoise.StepRecord) {
			if e := testkit.RelL2(s.VideoRows[:len(cond)], cond); e != 0 {
				t.Errorf("step %d moved the condition rows (rel-L2 %.3g)", s.Step, e)
			}
		},
	}
	if _, err := denoise.Run(context.Background(), m, req, obs); err != nil {
		t.Fatal(err)
	}
	if len(cond) != 12*96 {
		t.Fatalf("%d condition values, want 2 keyframes × 6 rows × 96", len(cond))
	}
}

// TestCancellationBetweenSteps cancels after step 1 and checks, by
// counters, that exactly two forwards ran.
func TestCancellationBetweenSteps(t *testing.T) {
	x := openFixture(t, "loop_t2va_f32")
	m, b := openModel(t, fl2vaWeights, dit.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req := request(t, b, x, nil, 6)
	before := m.Counters()
	_, err := denoise.Run(ctx, m, req, denoise.Observer{Step: func(s *denoise.StepRecord) {
		if s.Step == 1 {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "before step 3 of 6") {
		t.Fatalf("err = %v, want a cancellation before step 3", err)
	}
	if got := m.Counters().Forwards - before.Forwards; got != 2 {
		t.Errorf("%d forwards ran, want 2", got)
	}
}

func TestBadRequests(t *testing.T) {
	x := openFixture(t, "loop_t2va_f32")
	m, b := openModel(t, fl2vaWeights, dit.Options{})
	nan := request(t, b, x, nil, 2)
	nan.VideoNoise = append([]float32(nil), nan.VideoNoise...)
	nan.VideoNoise[5] = float32(math.NaN())
	cases := []struct {
		name string
		edit func(r *denoise.Request)
		want string
	}{
		{"steps", func(r *denoise.Request) { r.Controls.Steps = 1001 }, "steps must be in [2, 1000]"},
		{"reuse with core reuse", func(r *denoise.Request) { r.Controls.Reuse, r.Controls.CoreReuse = 2, 3 }, "reuse and core-reuse cannot be combined"},
		{"noise size", func(r *denoise.Request) { r.VideoNoise = r.VideoNoise[:10] }, "video noise has 10 values"},
		{"audio size", func(r *denoise.Request) { r.AudioLatents = 36 }, "audio noise has"},
		{"keyframe size", func(r *denoise.Request) {
			r.Keyframes = []denoise.Keyframe{{Anchor: layout.First, Latent: make([]float32, 5), Noise: make([]float32, 5)}}
		}, "keyframe 0 (first): latent has 5 values"},
		{"odd grid", func(r *denoise.Request) { r.Target.W = 5 }, "layout"},
		{"text tags", func(r *denoise.Request) { r.TextTags = r.TextTags[:3] }, "does not match 3 text tags"},
		{"NaN", func(r *denoise.Request) { *r = nan }, "step 1 of 2: the DiT produced NaN"},
	}
	for _, c := range cases {
		req := request(t, b, x, nil, 2)
		c.edit(&req)
		_, err := denoise.Run(context.Background(), m, req, denoise.Observer{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want it to mention %q", c.name, err, c.want)
		}
	}
}

// TestRef2VA runs a ref2va request on the Ref2VA weights (diffusers layout)
// with an image, a video with soundtrack and an audio reference, and checks
// that every reference row stays pinned and the outputs are finite.
func TestRef2VA(t *testing.T) {
	x := openFixture(t, "loop_t2va_f32")
	m, b := openModel(t, ref2vaWeights, dit.Options{})
	req := request(t, b, x, nil, 3)
	rnd := func(n int, seed float32) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(math.Sin(float64(seed + float32(i)*0.37)))
		}
		return v
	}
	req.References = []denoise.Reference{
		{Spec: layout.Reference{Kind: layout.RefImage, Latent: layout.Grid{T: 1, H: 4, W: 4}}, Latent: rnd(24*16, 1), Noise: rnd(24*16, 2)},
		{Spec: layout.Reference{Kind: layout.RefVideo, Latent: layout.Grid{T: 2, H: 4, W: 6}, AudioLatents: 10},
			Latent: rnd(24*2*24, 3), Noise: rnd(24*2*24, 4), Audio: rnd(2*10*32, 5)},
		{Spec: layout.Reference{Kind: layout.RefAudio, AudioLatents: 8}, Audio: rnd(2*8*32, 6)},
	}
	var v0, a0 []float32
	var nCondV, nCondA int
	obs := denoise.Observer{
		Prepared: func(p *denoise.Prepared) {
			nCondV, nCondA = p.Layout.ConditionVideoRows*96, p.Layout.ConditionAudioRows*32
			v0 = append([]float32(nil), p.VideoRows[:nCondV]...)
			a0 = append([]float32(nil), p.AudioRows[:nCondA]...)
		},
		Step: func(s *denoise.StepRecord) {
			if testkit.RelL2(s.VideoRows[:nCondV], v0) != 0 || testkit.RelL2(s.AudioRows[:nCondA], a0) != 0 {
				t.Errorf("step %d moved reference rows", s.Step)
			}
		},
	}
	res, err := denoise.Run(context.Background(), m, req, obs)
	if err != nil {
		t.Fatal(err)
	}
	if nCondV != (4+12)*96 || nCondA != (20+16)*32 {
		t.Errorf("reference rows: %d video, %d audio values", nCondV, nCondA)
	}
	for _, v := range append(res.Latents, res.AudioLatents...) {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			t.Fatal("non-finite output")
		}
	}
}

// TestPresetsWork runs the tiny model for 20 steps with each speed control
// and checks, by the model's counters, that it ran exactly the forwards,
// blocks and token-reduced blocks the control promises (3-block stack:
// layers scale to round(K·3/50) active blocks, token reduction to block
// span [1, 2)). It logs how far each preset moves the final latents from the
// exact path (rel-L2; figures in docs/dit.md).
func TestPresetsWork(t *testing.T) {
	x := openFixture(t, "loop_t2va_f32")
	m, b := openModel(t, fl2vaWeights, dit.Options{})
	cases := []struct {
		name                      string
		c                         denoise.Controls
		forwards, blocks, reduced int64
	}{
		{"exact", denoise.Controls{}, 20, 60, 0},
		{"reuse 2", denoise.Controls{Reuse: 2}, 11, 33, 0},
		{"reuse 3", denoise.Controls{Reuse: 3}, 8, 24, 0},
		{"layers 45", denoise.Controls{Layers: 45}, 20, 60, 0}, // round(2.7) = 3 of 3 blocks
		{"layers 40", denoise.Controls{Layers: 40}, 20, 40, 0}, // round(2.4) = 2 of 3 blocks
		{"core-reuse 4", denoise.Controls{CoreReuse: 4}, 20, 18, 0},
		{"core-reuse 6", denoise.Controls{CoreReuse: 6}, 20, 15, 0},
		{"token reduction", denoise.Controls{TokenReduction: true}, 20, 60, 20},
		{"fast (layers 45, reuse 2)", denoise.Controls{Layers: 45, Reuse: 2}, 11, 33, 0},
		{"aggressive (layers 40, reuse 3)", denoise.Controls{Layers: 40, Reuse: 3}, 8, 16, 0},
		{"layers 45, core-reuse 4", denoise.Controls{Layers: 45, CoreReuse: 4}, 20, 18, 0},
		{"layers 45, reuse 2, token reduction", denoise.Controls{Layers: 45, Reuse: 2, TokenReduction: true}, 11, 33, 11},
	}
	var exactV, exactA []float32
	for _, c := range cases {
		req := request(t, b, x, nil, 20)
		req.Controls = c.c
		req.Controls.Steps = 20
		before := m.Counters()
		res, err := denoise.Run(context.Background(), m, req, denoise.Observer{})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		after := m.Counters()
		if got := after.Forwards - before.Forwards; got != c.forwards || int64(res.Forwards) != c.forwards {
			t.Errorf("%s: %d forwards, want %d", c.name, got, c.forwards)
		}
		if got := after.Blocks - before.Blocks; got != c.blocks {
			t.Errorf("%s: %d blocks, want %d", c.name, got, c.blocks)
		}
		if got := after.ReducedBlocks - before.ReducedBlocks; got != c.reduced {
			t.Errorf("%s: %d token-reduced blocks, want %d", c.name, got, c.reduced)
		}
		if exactV == nil {
			exactV, exactA = res.Latents, res.AudioLatents
			continue
		}
		ev, ea := testkit.RelL2(res.Latents, exactV), testkit.RelL2(res.AudioLatents, exactA)
		t.Logf("%-36s forwards %2d blocks %2d  video latents rel-L2 %.3g, audio %.3g", c.name, c.forwards, c.blocks, ev, ea)
		if c.blocks != 60 && ev == 0 {
			t.Errorf("%s: skipped work yet identical to the exact path", c.name)
		}
	}
}

// TestSeededNoise draws the noise from the seed when the request gives
// none: the same seed reproduces the same latents, another seed changes
// them, and the seed is recorded.
func TestSeededNoise(t *testing.T) {
	x := openFixture(t, "loop_fl2va_f32")
	m, b := openModel(t, fl2vaWeights, dit.Options{})
	run := func(seed uint64) *denoise.Result {
		req := request(t, b, x, []layout.Anchor{layout.First, layout.Last}, 2)
		req.VideoNoise, req.AudioNoise, req.Seed = nil, nil, seed
		for i := range req.Keyframes {
			req.Keyframes[i].Noise = nil
		}
		res, err := denoise.Run(context.Background(), m, req, denoise.Observer{})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	a, again, other := run(42), run(42), run(7)
	if !a.Drawn || a.Seed != 42 || a.NoiseSource != "" && a.NoiseSource != "portable" {
		t.Errorf("result records drawn %v, seed %d, source %q", a.Drawn, a.Seed, a.NoiseSource)
	}
	if testkit.RelL2(again.Latents, a.Latents) != 0 || testkit.RelL2(again.AudioLatents, a.AudioLatents) != 0 {
		t.Error("the same seed gave different latents")
	}
	if testkit.RelL2(other.Latents, a.Latents) == 0 {
		t.Error("another seed gave the same latents")
	}
}
