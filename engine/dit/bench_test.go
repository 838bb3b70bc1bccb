package dit_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"h3studio/engine/compute"
	"h3studio/engine/compute/cpu"
	"h3studio/engine/dit"
	"h3studio/engine/layout"
	"h3studio/engine/safetensors"
)

// BenchmarkTinyForward is one forward of the oracle's tiny model (dit_t2va
// inputs, 123 rows) at the released mixed precision and at float32.
func BenchmarkTinyForward(b *testing.B) {
	for _, p := range []struct {
		name    string
		oracles compute.Oracles
	}{{"bf16", 0}, {"f32", compute.Oracles(0).With(dit.OracleF32)}} {
		b.Run(p.name, func(b *testing.B) {
			l := load(b, fixtures[0])
			r := newRun(b, l, dit.Options{Oracles: p.oracles})
			for b.Loop() {
				if _, _, err := r.forward(b, context.Background(), dit.ForwardOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// medium is a small-but-not-tiny architecture for timing cancellation: one
// block takes tens of milliseconds on the CPU backend.
func medium() dit.Config {
	c := dit.Released()
	c.HiddenSize, c.NumLayers, c.RefinerLayers = 256, 8, 1
	c.Heads, c.HeadDim, c.FFNDim = 4, 64, 768
	c.TextDim, c.FreqDim, c.TimeHiddenDim, c.TimeEmbedDim, c.RopeFreqDim = 256, 64, 256, 128, 8
	return c
}

// randomSource is a checkpoint of random weights (scaled 1/√fan-in) with
// the inventory of PlanningSource.
type randomSource struct {
	safetensors.Source
	data map[string][]byte
}

func newRandomSource(c dit.Config) *randomSource {
	src := dit.PlanningSource(c, dit.OriginalLayout)
	r := &randomSource{Source: src, data: map[string][]byte{}}
	rng := rand.New(rand.NewPCG(1, 1))
	for _, n := range src.Names() {
		info, _ := src.Info(n)
		v := make([]float32, info.Shape.NumElements())
		scale := 1.0
		if info.Shape.Dim(-1) > 0 && len(info.Shape) == 2 {
			scale = 1 / math.Sqrt(float64(info.Shape.Dim(-1)))
		}
		for i := range v {
			if len(info.Shape) == 1 {
				v[i] = 1 + 0.1*float32(rng.NormFloat64())
			} else {
				v[i] = float32(scale * rng.NormFloat64())
			}
		}
		if n == "rope.inv_freq" {
			v = dit.InvFreq(c.RopeTheta, c.RopeFreqDim)
		}
		r.data[n] = compute.EncodeFloat32(info.DType, v)
	}
	return r
}

func (r *randomSource) Data(name string) ([]byte, error) { return r.data[name], nil }

// BenchmarkCancellationLatency measures how long a forward keeps running
// after its context is cancelled at a random moment inside a block (the
// forward checks its context between blocks, so the latency is at most one
// block). Reported: mean and worst latency, and the mean block time.
func BenchmarkCancellationLatency(b *testing.B) {
	c := medium()
	be := cpu.New(cpu.Options{})
	src := newRandomSource(c)
	var blockStart time.Time
	var blockTimes []time.Duration
	var trace func(string, *compute.Tensor)
	m, err := dit.Load(be, safetensors.NewBinder("dit", src, be), &c, &dit.Options{Trace: func(n string, t *compute.Tensor) {
		if trace != nil {
			trace(n, t)
		}
	}})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	tags := make([]int64, 64)
	for i := range tags {
		tags[i] = layout.TagText
	}
	lay, err := layout.Build(layout.Spec{TextTags: tags, Target: layout.Grid{T: 7, H: 16, W: 16}, AudioLatents: 37})
	if err != nil {
		b.Fatal(err)
	}
	emb, _ := compute.FromFloat32(be, compute.F32, compute.Shape{64, c.TextDim}, make([]float32, 64*c.TextDim))
	text, err := m.RefineText(ctx, emb)
	if err != nil {
		b.Fatal(err)
	}
	ts, idx := layout.RowTimesteps(lay, 0.3, 0.5)
	tab, err := m.Tables(ctx, ts, dit.TableOptions{})
	if err != nil {
		b.Fatal(err)
	}
	seq, err := m.NewSequence(dit.Layout{Positions: lay.Positions, Tags: lay.Tags, VideoIndices: lay.VideoIndices,
		AudioIndices: lay.AudioIndices, TextIndices: lay.TextIndices}, text)
	if err != nil {
		b.Fatal(err)
	}
	nv, na := len(lay.VideoIndices), len(lay.AudioIndices)
	step := dit.Step{Video: compute.MustAlloc(be, compute.F32, nv, c.PatchDim()), Audio: compute.MustAlloc(be, compute.F32, na, c.AudioInChannels), TimestepIndex: idx}
	out := dit.Velocity{Video: compute.MustAlloc(be, compute.F32, nv, c.PatchDim()), Audio: compute.MustAlloc(be, compute.F32, na, c.AudioInChannels)}
	// Block time from one full forward.
	blockStart = time.Now()
	trace = func(n string, _ *compute.Tensor) {
		if len(n) > 5 && n[:5] == "block" && n[len(n)-4:] == ".out" {
			blockTimes = append(blockTimes, time.Since(blockStart))
			blockStart = time.Now()
		}
	}
	if err := m.Forward(ctx, seq, tab, step, out, dit.ForwardOptions{}); err != nil {
		b.Fatal(err)
	}
	trace = nil
	sort.Slice(blockTimes, func(i, j int) bool { return blockTimes[i] < blockTimes[j] })
	block := blockTimes[len(blockTimes)/2]
	rng := rand.New(rand.NewPCG(2, 2))
	var lat []time.Duration
	for b.Loop() {
		for trial := 0; trial < 4; trial++ {
			cctx, cancel := context.WithCancel(ctx)
			delay := time.Duration(float64(block) * (1 + 3*rng.Float64()))
			fired := make(chan time.Time, 1)
			timer := time.AfterFunc(delay, func() { fired <- time.Now(); cancel() })
			err := m.Forward(cctx, seq, tab, step, out, dit.ForwardOptions{})
			end := time.Now()
			timer.Stop()
			cancel()
			if errors.Is(err, context.Canceled) {
				lat = append(lat, end.Sub(<-fired))
			}
		}
	}
	if len(lat) == 0 {
		b.Skip("no forward was cancelled mid-way (the machine is too fast for this size)")
	}
	var sum, worst time.Duration
	for _, d := range lat {
		sum += d
		worst = max(worst, d)
	}
	b.ReportMetric(float64(sum.Microseconds())/float64(len(lat))/1000, "ms-mean-latency")
	b.ReportMetric(float64(worst.Microseconds())/1000, "ms-worst-latency")
	b.ReportMetric(float64(block.Microseconds())/1000, "ms-per-block")
}
