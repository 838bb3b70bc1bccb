package dit_test

import (
	"context"
	"errors"
	"h3studio/engine/testkit"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"h3studio/engine/compute"
	"h3studio/engine/compute/cpu"
	"h3studio/engine/compute/testbackend"
	"h3studio/engine/dit"
	"h3studio/engine/safetensors"
)

// The testdata folder holds the oracle's tiny checkpoint in both layouts
// (FL2VA/transformer: original, per-head interleaved qkv_proj and [gate;
// value] fc1; transformer_ref: diffusers, to_q/to_k/to_v and [value; gate])
// and the inputs and outputs of the dit_* fixtures (shared/oracle-data, seed
// 0, torch 2.11 CPU).

type fixture struct {
	name    string
	weights string
	file    string
}

var fixtures = []fixture{
	{"t2va", "FL2VA/transformer", "dit_t2va.safetensors"},
	{"fl2va", "FL2VA/transformer", "dit_fl2va.safetensors"},
	{"ref2va", "transformer_ref", "dit_ref2va.safetensors"},
}

type loaded struct {
	cfg dit.Config
	ck  *safetensors.Checkpoint
	fx  *safetensors.File
}

func load(t testing.TB, f fixture) *loaded {
	t.Helper()
	dir := filepath.Join("testdata", f.weights)
	cfg, err := dit.ReadConfig(dir)
	if err != nil {
		t.Fatal(err)
	}
	ck, err := safetensors.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ck.Close() })
	fx := testkit.Open(t, filepath.Join("testdata", f.file))
	return &loaded{cfg, ck, fx}
}

func (l *loaded) f32(t testing.TB, name string) []float32 {
	t.Helper()
	v, _ := testkit.Float32s(t, l.fx, name)
	return v
}

// tables is m's modulation tables for the fixture's timestep; the caller
// releases them.
func (l *loaded) tables(t testing.TB, ctx context.Context, m *dit.Model) *dit.Tables {
	t.Helper()
	tab, err := m.Tables(ctx, l.f32(t, "in.timestep"), dit.TableOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

func (l *loaded) i64(t testing.TB, name string) []int64 {
	t.Helper()
	v, _ := testkit.Int64s(t, l.fx, name)
	return v
}

func (l *loaded) f64(t testing.TB, name string) []float64 {
	t.Helper()
	d, err := l.fx.Data(name)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]float64, len(d)/8)
	for i := range out {
		out[i] = math.Float64frombits(uint64(d[8*i]) | uint64(d[8*i+1])<<8 | uint64(d[8*i+2])<<16 | uint64(d[8*i+3])<<24 |
			uint64(d[8*i+4])<<32 | uint64(d[8*i+5])<<40 | uint64(d[8*i+6])<<48 | uint64(d[8*i+7])<<56)
	}
	return out
}

func (l *loaded) layout(t testing.TB) dit.Layout {
	return dit.Layout{
		Positions:    l.f64(t, "in.position_ids"),
		Tags:         l.i64(t, "in.token_tags"),
		VideoIndices: l.i64(t, "in.video_indices"),
		AudioIndices: l.i64(t, "in.audio_indices"),
		TextIndices:  l.i64(t, "in.text_indices"),
		// 22 frames, 4×6 latents: 7 latent frames of 2×3 tokens end the sequence.
		TargetGrid: [3]int{7, 2, 3},
	}
}

// run is one forward of a fixture's inputs.
type run struct {
	m        *dit.Model
	b        compute.Backend
	seq      *dit.Sequence
	tab      *dit.Tables
	step     dit.Step
	out      dit.Velocity
	text     *compute.Tensor
	nv, na   int
	patchDim int
}

// newRun opens the fixture's model on the test backend (testbackend: the
// CPU reference, or Metal with H3_TEST_BACKEND=metal).
func newRun(t testing.TB, l *loaded, opts dit.Options) *run {
	t.Helper()
	b := testbackend.New(t)
	m, err := dit.Load(b, safetensors.NewBinder("dit", l.ck, b), &l.cfg, &opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	ctx := context.Background()
	lay := l.layout(t)
	L := len(lay.TextIndices)
	emb, err := compute.FromFloat32(b, compute.F32, compute.Shape{L, l.cfg.TextDim}, l.f32(t, "in.encoder_hidden_states"))
	if err != nil {
		t.Fatal(err)
	}
	text, err := m.RefineText(ctx, emb)
	if err != nil {
		t.Fatal(err)
	}
	tab := l.tables(t, ctx, m)
	t.Cleanup(tab.Release)
	seq, err := m.NewSequence(lay, text)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(seq.Release)
	r := &run{m: m, b: b, seq: seq, tab: tab, text: text, nv: len(lay.VideoIndices), na: len(lay.AudioIndices), patchDim: l.cfg.PatchDim()}
	video, _ := compute.FromFloat32(b, compute.F32, compute.Shape{r.nv, r.patchDim}, l.f32(t, "in.hidden_states"))
	audio, _ := compute.FromFloat32(b, compute.F32, compute.Shape{r.na, l.cfg.AudioInChannels}, l.f32(t, "in.audio_hidden_states"))
	r.step = dit.Step{Video: video, Audio: audio, TimestepIndex: l.i64(t, "in.timestep_indices")}
	r.out = dit.Velocity{
		Video: compute.MustAlloc(b, compute.F32, r.nv, r.patchDim),
		Audio: compute.MustAlloc(b, compute.F32, r.na, l.cfg.AudioInChannels),
	}
	return r
}

func (r *run) forward(t testing.TB, ctx context.Context, fo dit.ForwardOptions) ([]float32, []float32, error) {
	err := r.m.Forward(ctx, r.seq, r.tab, r.step, r.out, fo)
	if err != nil {
		return nil, nil, err
	}
	v, err := compute.ToFloat32(r.out.Video)
	if err != nil {
		return nil, nil, err
	}
	a, err := compute.ToFloat32(r.out.Audio)
	return v, a, err
}

// TestFixtureParity runs the three dit_* fixtures at float32 (dit-f32
// oracle) and at the released mixed precision. Metric: rel-L2 of the video
// and audio velocities. Bounds: 1e-5 (f32), 2e-2 (bf16). Measured (seed-0
// fixtures): f32 ≤ 2.9e-7, bf16 ≤ 1.8e-3 (see docs/dit.md).
func TestFixtureParity(t *testing.T) {
	for _, f := range fixtures {
		for _, p := range []struct {
			prefix  string
			oracles compute.Oracles
			bound   float64
		}{{"f32", compute.Oracles(0).With(dit.OracleF32), 1e-5}, {"bf16", 0, 2e-2}} {
			t.Run(f.name+"/"+p.prefix, func(t *testing.T) {
				l := load(t, f)
				r := newRun(t, l, dit.Options{Oracles: p.oracles})
				v, a, err := r.forward(t, context.Background(), dit.ForwardOptions{})
				if err != nil {
					t.Fatal(err)
				}
				for _, c := range []struct {
					name string
					got  []float32
				}{{"out.sample", v}, {"out.audio_sample", a}} {
					e := testkit.RelL2(c.got, l.f32(t, p.prefix+"."+c.name))
					t.Logf("%s %s.%s rel-L2 %.3g (bound %g)", f.name, p.prefix, c.name, e, p.bound)
					if !(e < p.bound) {
						t.Errorf("%s.%s: rel-L2 %.3g ≥ %g", p.prefix, c.name, e, p.bound)
					}
				}
			})
		}
	}
}

// TestCancellationBetweenBlocks cancels the context while block 1 runs (from
// the trace hook) and checks, by counters, that exactly two blocks ran and
// the error wraps context.Canceled.
func TestCancellationBetweenBlocks(t *testing.T) {
	l := load(t, fixtures[0])
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opts := dit.Options{Trace: func(name string, _ *compute.Tensor) {
		if name == "block1.out" {
			cancel()
		}
	}}
	r := newRun(t, l, opts)
	before := r.m.Counters()
	_, _, err := r.forward(t, ctx, dit.ForwardOptions{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	after := r.m.Counters()
	if got := after.Blocks - before.Blocks; got != 2 {
		t.Errorf("%d blocks ran after cancellation during block 1, want 2", got)
	}
	if after.Forwards != before.Forwards {
		t.Errorf("a cancelled forward was counted as completed")
	}
	// An already cancelled context stops before the first block.
	_, _, err = r.forward(t, ctx, dit.ForwardOptions{})
	if !errors.Is(err, context.Canceled) || r.m.Counters().Blocks != after.Blocks {
		t.Errorf("forward on a cancelled context: err %v, blocks %d → %d", err, after.Blocks, r.m.Counters().Blocks)
	}
}

// TestSpeedControlWork checks that each forward option runs exactly the
// blocks it promises.
func TestSpeedControlWork(t *testing.T) {
	l := load(t, fixtures[0])
	r := newRun(t, l, dit.Options{})
	N := int64(l.cfg.NumLayers)
	ctx := context.Background()
	exact, _, err := r.forward(t, ctx, dit.ForwardOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name              string
		fo                dit.ForwardOptions
		blocks, reduced   int64
		core              int64
		sameAsExact, diff bool
	}{
		{"exact", dit.ForwardOptions{}, N, 0, 1, true, false},
		{"skip block 1", dit.ForwardOptions{Active: []bool{true, false, true}}, N - 1, 0, 1, false, true},
		{"cache core", dit.ForwardOptions{Core: dit.CoreCache}, N, 0, 1, true, false},
		{"reuse core", dit.ForwardOptions{Core: dit.CoreReuse}, 0, 0, 0, false, false},
		{"token reduction 1..2", dit.ForwardOptions{Reduce: &dit.TokenSpan{Begin: 1, End: 2}}, N, 1, 1, false, true},
		{"token reduction 1..end", dit.ForwardOptions{Reduce: &dit.TokenSpan{Begin: 1, End: 3}}, N, 2, 1, false, true},
	}
	for _, c := range cases {
		before := r.m.Counters()
		v, _, err := r.forward(t, ctx, c.fo)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		after := r.m.Counters()
		if d := after.Blocks - before.Blocks; d != c.blocks {
			t.Errorf("%s: %d blocks, want %d", c.name, d, c.blocks)
		}
		if d := after.ReducedBlocks - before.ReducedBlocks; d != c.reduced {
			t.Errorf("%s: %d reduced blocks, want %d", c.name, d, c.reduced)
		}
		if d := after.CoreForwards - before.CoreForwards; d != c.core {
			t.Errorf("%s: %d core forwards, want %d", c.name, d, c.core)
		}
		e := testkit.RelL2(v, exact)
		t.Logf("%s: rel-L2 vs exact %.3g", c.name, e)
		if c.sameAsExact && e != 0 {
			t.Errorf("%s: differs from the exact forward (rel-L2 %.3g)", c.name, e)
		}
		if c.diff && e == 0 {
			t.Errorf("%s: identical to the exact forward, so the control did nothing", c.name)
		}
	}
	// Core reuse with the same inputs reproduces the cached forward up to the
	// rounding of the residual.
	before := r.m.Counters()
	v, _, err := r.forward(t, ctx, dit.ForwardOptions{Core: dit.CoreReuse})
	if err != nil {
		t.Fatal(err)
	}
	if e := testkit.RelL2(v, exact); e > 2e-2 {
		t.Errorf("core reuse on unchanged inputs: rel-L2 %.3g vs exact", e)
	}
	if r.m.Counters().Blocks != before.Blocks {
		t.Errorf("core reuse ran blocks")
	}
}

// TestStreamingMatchesResident checks that streaming block weights changes
// nothing numerically and keeps at most two blocks bound.
func TestStreamingMatchesResident(t *testing.T) {
	l := load(t, fixtures[1])
	res := newRun(t, l, dit.Options{})
	want, _, err := res.forward(t, context.Background(), dit.ForwardOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st := newRun(t, l, dit.Options{Residency: compute.Streaming})
	if err := st.m.BindCore(nil); err != nil {
		t.Fatal(err)
	}
	edge := st.m.WeightBytes()
	got, _, err := st.forward(t, context.Background(), dit.ForwardOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if e := testkit.RelL2(got, want); e != 0 {
		t.Errorf("streaming differs from resident: rel-L2 %.3g", e)
	}
	if err := res.m.BindCore(nil); err != nil {
		t.Fatal(err)
	}
	perBlock := (res.m.WeightBytes() - edge) / int64(l.cfg.NumLayers)
	if bound := st.m.WeightBytes() - edge; bound > 2*perBlock {
		t.Errorf("streaming keeps %d bytes of blocks bound, more than two blocks (%d)", bound, 2*perBlock)
	}
	// While each block runs the next one is read ahead from disk (wrapping
	// to the first for the next forward): every block's weights once per
	// forward, without the AdaLN projections (folded into the tables).
	var blockBytes int64
	for _, name := range l.ck.Names() {
		info, _ := l.ck.Info(name)
		if (strings.HasPrefix(name, "blocks.") || strings.HasPrefix(name, "transformer_blocks.")) && !strings.Contains(name, ".adaln_proj.") {
			blockBytes += info.Bytes()
		}
	}
	if got := st.m.Counters().ReadAheadBytes; got != blockBytes {
		t.Errorf("streaming read ahead %d bytes in one forward, want the blocks' %d", got, blockBytes)
	}
	if got := res.m.Counters().ReadAheadBytes; got != 0 {
		t.Errorf("resident mode read ahead %d bytes", got)
	}
}

func TestSelectBlocks(t *testing.T) {
	scores50 := make([]float64, 50)
	for i := range scores50 {
		scores50[i] = float64(100 - i) // later blocks score lower
	}
	scores50[0], scores50[1], scores50[49] = 0, 0, 0 // protected despite low scores
	act, err := dit.SelectBlocks(scores50, 45)
	if err != nil {
		t.Fatal(err)
	}
	var off []int
	for i, a := range act {
		if !a {
			off = append(off, i)
		}
	}
	if want := []int{44, 45, 46, 47, 48}; len(off) != 5 || off[0] != want[0] || off[4] != want[4] {
		t.Errorf("skipped %v, want %v", off, want)
	}
	act, _ = dit.SelectBlocks([]float64{5, 1, 7}, 35)
	if act[0] != true || act[1] != false || act[2] != true {
		t.Errorf("3-block stack at 35 layers: %v, want block 1 skipped", act)
	}
	act, _ = dit.SelectBlocks([]float64{5, 1, 7}, 45)
	if !act[0] || !act[1] || !act[2] {
		t.Errorf("3-block stack at 45 layers keeps every block, got %v", act)
	}
	for _, bad := range []int{34, 51} {
		if _, err := dit.SelectBlocks(scores50, bad); err == nil {
			t.Errorf("layers %d accepted", bad)
		}
	}
}

// TestCompactTables checks that keeping only the (timestep, tag) rows a
// forward reads changes nothing, and that a row outside them is refused.
func TestCompactTables(t *testing.T) {
	l := load(t, fixtures[1])
	r := newRun(t, l, dit.Options{})
	want, _, err := r.forward(t, context.Background(), dit.ForwardOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ts := l.f32(t, "in.timestep")
	keep := make([]bool, len(ts)*dit.Modalities)
	lay := l.layout(t)
	dit.MarkUsed(keep, lay.Tags, r.step.TimestepIndex)
	tab, err := r.m.Tables(context.Background(), ts, dit.TableOptions{Keep: keep})
	if err != nil {
		t.Fatal(err)
	}
	defer tab.Release()
	if tab.Blocks[0].Dim(0) >= len(keep) {
		t.Fatalf("compact table has %d rows of %d", tab.Blocks[0].Dim(0), len(keep))
	}
	r.tab = tab
	got, _, err := r.forward(t, context.Background(), dit.ForwardOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if e := testkit.RelL2(got, want); e != 0 {
		t.Errorf("compact tables change the output: rel-L2 %.3g", e)
	}
	// Drop a row the forward needs.
	for i, k := range keep {
		if k {
			keep[i] = false
			break
		}
	}
	tab2, err := r.m.Tables(context.Background(), ts, dit.TableOptions{Keep: keep})
	if err != nil {
		t.Fatal(err)
	}
	defer tab2.Release()
	r.tab = tab2
	if _, _, err := r.forward(t, context.Background(), dit.ForwardOptions{}); err == nil {
		t.Error("a forward needing a dropped table row succeeded")
	}
}

func TestPlanningSourceInventory(t *testing.T) {
	for _, c := range []struct {
		l     dit.WeightLayout
		count int
	}{{dit.OriginalLayout, 535}, {dit.DiffusersLayout, 638}} {
		src := dit.PlanningSource(dit.Released(), c.l)
		names := src.Names()
		var bytes, params int64
		for _, n := range names {
			info, _ := src.Info(n)
			bytes += info.Bytes()
			params += int64(info.Shape.NumElements())
		}
		// H3-DIT §3: 535 original tensors (638 diffusers), ≈ 33.1 B parameters, ≈ 66.3 GB.
		if len(names) != c.count || params < 33.0e9 || params > 33.2e9 || bytes < 66.2e9 || bytes > 66.4e9 {
			t.Errorf("%v: %d tensors, %d parameters, %d bytes", c.l, len(names), params, bytes)
		}
		b := cpu.New(cpu.Options{})
		cfg := dit.Released()
		if _, err := dit.Load(b, safetensors.NewBinder("dit", src, b), &cfg, &dit.Options{}); err != nil {
			t.Errorf("%v: the released inventory does not open: %v", c.l, err)
		}
	}
}

// TestStrictBinding checks that a checkpoint with a missing, a mis-shaped
// and an unexpected tensor is refused with each named.
func TestStrictBinding(t *testing.T) {
	cfg := dit.Released()
	src := &editedSource{Source: dit.PlanningSource(cfg, dit.OriginalLayout),
		drop: "blocks.7.mlp.fc2.weight", reshape: "blocks.3.attn.q_norm.weight", extra: "blocks.50.norm1.weight"}
	b := cpu.New(cpu.Options{})
	_, err := dit.Load(b, safetensors.NewBinder("dit", src, b), &cfg, &dit.Options{})
	if err == nil {
		t.Fatal("a damaged inventory opened")
	}
	for _, want := range []string{"missing tensor blocks.7.mlp.fc2.weight", "blocks.3.attn.q_norm.weight: want shape [128]", "unexpected tensor blocks.50.norm1.weight"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

// TestCorruptDepthRefused checks that a config whose depth the checkpoint
// cannot hold (a corrupt num_layers of 100,000,000) is refused by name
// before the inventory of that depth is listed, which would exhaust memory.
func TestCorruptDepthRefused(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*dit.Config)
		want string
	}{
		{"num_layers", func(c *dit.Config) { c.NumLayers = 100_000_000 }, "num_layers 100000000"},
		{"refiner", func(c *dit.Config) { c.RefinerLayers = 100_000_000 }, "token_refiner_num_layers 100000000"},
	} {
		src := dit.PlanningSource(dit.Released(), dit.OriginalLayout)
		cfg := dit.Released()
		c.edit(&cfg)
		b := cpu.New(cpu.Options{})
		_, err := dit.Load(b, safetensors.NewBinder("dit", src, b), &cfg, &dit.Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "the checkpoint holds 535") {
			t.Errorf("%s: got %v, want a refusal naming %q and the checkpoint's 535 tensors", c.name, err, c.want)
		}
	}
}

type editedSource struct {
	safetensors.Source
	drop, reshape, extra string
}

func (e *editedSource) Info(name string) (safetensors.TensorInfo, bool) {
	switch name {
	case e.drop:
		return safetensors.TensorInfo{}, false
	case e.extra:
		return safetensors.TensorInfo{Name: name, DType: compute.BF16, Shape: compute.Shape{5376}}, true
	}
	i, ok := e.Source.Info(name)
	if name == e.reshape {
		i.Shape = compute.Shape{129}
	}
	return i, ok
}

func (e *editedSource) Names() []string {
	var out []string
	for _, n := range e.Source.Names() {
		if n != e.drop {
			out = append(out, n)
		}
	}
	return append(out, e.extra)
}

// TestReleasedPages: the pages of the mapped checkpoint behind every weight
// the model has let go are dropped (Binder.Release): after RefineText and
// Tables, the token refiner, context embedder, time MLP and every AdaLN
// projection; after a streamed forward, every block too; a resident
// forward drops nothing more. Each tensor gives back the whole pages
// inside its bytes.
func TestReleasedPages(t *testing.T) {
	if _, device := testbackend.New(t).(compute.HostMapper); device {
		t.Skip("a backend viewing the mapping from a device keeps its pages (safetensors.Binder.Release)")
	}
	l := load(t, fixtures[1])
	ps := uintptr(os.Getpagesize())
	pages := func(keep func(string) bool) int64 {
		var n int64
		for _, name := range l.ck.Names() {
			if !keep(name) {
				continue
			}
			d, err := l.ck.Data(name)
			if err != nil || len(d) == 0 {
				continue
			}
			start := uintptr(unsafe.Pointer(&d[0]))
			first, last := (start+ps-1)/ps*ps, (start+uintptr(len(d)))/ps*ps
			if last > first {
				n += int64(last - first)
			}
		}
		return n
	}
	prep := func(name string) bool {
		for _, p := range []string{"token_refiner.", "condition_proj.", "time_embedder."} {
			if strings.HasPrefix(name, p) {
				return true
			}
		}
		return strings.Contains(name, ".adaln_proj.")
	}
	block := func(name string) bool { return strings.HasPrefix(name, "blocks.") && !prep(name) }
	want := pages(prep)
	if want == 0 {
		t.Fatal("the fixture has no tensor of a whole page: the test cannot fail")
	}
	for _, residency := range []compute.Residency{compute.Resident, compute.Streaming} {
		r := newRun(t, l, dit.Options{Residency: residency})
		if got := r.m.Counters().ReleasedBytes; got != want {
			t.Errorf("%s: released %d bytes after RefineText and Tables, want the prep weights' %d", residency, got, want)
		}
		if _, _, err := r.forward(t, context.Background(), dit.ForwardOptions{}); err != nil {
			t.Fatal(err)
		}
		w := want
		if residency == compute.Streaming {
			w += pages(block) // each block after its forward (block 0 is bound again, for the next forward)
		}
		if got := r.m.Counters().ReleasedBytes; got != w {
			t.Errorf("%s: released %d bytes after a forward, want %d", residency, got, w)
		}
	}
}
