package plan

import (
	"context"
	"fmt"
	"h3studio/engine/lora"
	"sort"

	"h3studio/engine/compute"
	"h3studio/engine/compute/meta"
	"h3studio/engine/denoise"
	"h3studio/engine/dit"
	"h3studio/engine/layout"
	"h3studio/engine/safetensors"
	"h3studio/engine/sampler"
)

// The DiT row: the released 50-block transformer run shape-only through
// engine/dit's own phases in the order a request runs them — RefineText,
// Tables for every distinct timestep of the schedule (keeping only the
// (timestep, modality) rows the steps read), block selection, BindCore,
// then one Forward of each distinct kind the step plan uses.

func init() { Register("dit", 20, estimateDiT) }

func estimateDiT(q Query) (Estimate, error) {
	cfg := dit.Released()
	T, err := layout.LatentFrames(q.Frames)
	if err != nil {
		return Estimate{}, err
	}
	A := layout.AudioLatents(q.Frames)
	lh, lw := q.Canvas.Latent()
	tags := make([]int64, q.TextRows)
	for i := range tags {
		tags[i] = layout.TagText
	}
	spec := layout.Spec{TextTags: tags, Target: layout.Grid{T: T, H: lh, W: lw}, AudioLatents: A}
	for i := 0; i < q.Keyframes; i++ {
		spec.Keyframes = append(spec.Keyframes, []layout.Anchor{layout.First, layout.Last}[i])
	}
	lay, err := layout.Build(spec)
	if err != nil {
		return Estimate{}, err
	}
	steps := denoise.PlanSteps(q.Controls, cfg.NumLayers)
	est := Estimate{Component: "dit", Rows: lay.Rows(), RowsUnit: "packed rows", Evaluations: denoise.Forwards(steps)}
	for _, residency := range []compute.Residency{compute.Resident, compute.Streaming} {
		r, err := runDiT(cfg, lay, [3]int{T, lh / 2, lw / 2}, q, steps, residency)
		if err != nil {
			return Estimate{}, err
		}
		if residency == compute.Streaming {
			est.Streaming = r.storage
		} else {
			est.Resident = r.storage
			est.FLOPs, est.WeightBytes, est.TotalFLOPs = r.flops, r.weightBytes, r.total
			if r.weightTraffic > 1.01*r.weightBytes {
				r.notes = append(r.notes, fmt.Sprintf("row-chunked feed-forward reads %.1f GiB of weights per forward", r.weightTraffic/(1<<30)))
			}
			est.Notes = r.notes
		}
	}
	return est, nil
}

type ditRun struct {
	storage            Storage
	flops, weightBytes float64 // one exact forward over the active blocks
	weightTraffic      float64 // its weight bytes read, re-reads of chunked kernels included
	total              float64 // the request's forwards
	notes              []string
}

func runDiT(cfg dit.Config, lay *layout.Layout, grid [3]int, q Query, steps []denoise.StepPlan, residency compute.Residency) (r ditRun, err error) {
	defer compute.Recover(&err)
	ctx := context.Background()
	mb := meta.New()
	ad, err := lora.Shapes(cfg, q.LoRAs)
	if err != nil {
		return r, err
	}
	m, err := dit.Load(mb, safetensors.NewBinder("dit", dit.PlanningSource(cfg, dit.OriginalLayout), mb.Weights()), &cfg, &dit.Options{Residency: residency, Adapters: ad, Quant: q.Quant})
	if err != nil {
		return r, err
	}
	// Text: the encoder's BF16 output is refined once and released.
	emb := compute.MustAlloc(mb, compute.BF16, len(lay.TextIndices), cfg.TextDim)
	text, err := m.RefineText(ctx, emb)
	if err != nil {
		return r, err
	}
	mb.Free(emb)

	// The request's distinct timesteps (the released σ grids) and the table
	// rows its steps read.
	pair, err := sampler.NewPair(len(steps), sampler.VideoShift, sampler.AudioShift)
	if err != nil {
		return r, err
	}
	tv, ta := pair.Video.Timesteps, pair.Audio.Timesteps
	var perStep [][]int64
	var distinct []float32
	seen := map[float32]bool{}
	stepTs := make([][]float32, len(steps))
	for i := range steps {
		ts, idx := layout.RowTimesteps(lay, tv[i], ta[i])
		stepTs[i] = ts
		perStep = append(perStep, idx)
		for _, t := range ts {
			if !seen[t] {
				seen[t] = true
				distinct = append(distinct, t)
			}
		}
	}
	sort.Slice(distinct, func(i, j int) bool { return distinct[i] < distinct[j] })
	global := map[float32]int64{}
	for i, t := range distinct {
		global[t] = int64(i)
	}
	keep := make([]bool, len(distinct)*dit.Modalities)
	rowIdx := make([][]int64, len(steps))
	for i, idx := range perStep {
		g := make([]int64, len(idx))
		for r, ti := range idx {
			g[r] = global[stepTs[i][ti]]
		}
		rowIdx[i] = g
		dit.MarkUsed(keep, lay.Tags, g)
	}
	tab, err := m.Tables(ctx, distinct, dit.TableOptions{Keep: keep, Scores: q.Controls.Layers < denoise.MaxLayers})
	if err != nil {
		return r, err
	}
	var active []bool
	if q.Controls.Layers < denoise.MaxLayers {
		if active, err = dit.SelectBlocks(tab.GateScores(), q.Controls.Layers); err != nil {
			return r, err
		}
		tab.Prune(active)
	}
	if err := m.BindCore(active); err != nil {
		return r, err
	}
	seq, err := m.NewSequence(dit.Layout{Positions: lay.Positions, Tags: lay.Tags, VideoIndices: lay.VideoIndices,
		AudioIndices: lay.AudioIndices, TextIndices: lay.TextIndices, TargetGrid: grid}, text)
	if err != nil {
		return r, err
	}
	nv, na := len(lay.VideoIndices), len(lay.AudioIndices)
	step := dit.Step{
		Video: compute.MustAlloc(mb, compute.F32, nv, cfg.PatchDim()),
		Audio: compute.MustAlloc(mb, compute.F32, na, cfg.AudioInChannels),
	}
	out := dit.Velocity{
		Video: compute.MustAlloc(mb, compute.F32, nv, cfg.PatchDim()),
		Audio: compute.MustAlloc(mb, compute.F32, na, cfg.AudioInChannels),
	}
	forward := func(i int, fo dit.ForwardOptions) (meta.Usage, error) {
		mb.MarkReads()
		before := mb.Usage()
		step.TimestepIndex = rowIdx[i]
		if err := m.Forward(ctx, seq, tab, step, out, fo); err != nil {
			return meta.Usage{}, err
		}
		return mb.Usage().Sub(before), nil
	}
	// One forward per distinct kind, in step order (a core cache precedes
	// its reuse), then the exact forward if the plan has none.
	type kind struct {
		core   dit.CoreMode
		reduce dit.TokenSpan
	}
	work := map[kind]meta.Usage{}
	for i, p := range steps {
		if !p.Evaluate {
			continue
		}
		k := kind{core: p.Core}
		if p.Reduce != nil {
			k.reduce = *p.Reduce
		}
		w, ok := work[k]
		if !ok {
			if w, err = forward(i, dit.ForwardOptions{Active: active, Core: p.Core, Reduce: p.Reduce}); err != nil {
				return r, err
			}
			work[k] = w
		}
		r.total += w.FLOPs
	}
	exact, ok := work[kind{core: dit.CoreRun}]
	if !ok {
		if exact, err = forward(0, dit.ForwardOptions{Active: active}); err != nil {
			return r, err
		}
	}
	r.flops, r.weightBytes, r.weightTraffic = exact.FLOPs, exact.DistinctWeightBytes, exact.WeightBytesRead
	u := mb.Usage()
	r.storage = Storage{Peak: u.PeakTotal, Weights: u.WeightsAtPeak, Activations: u.PeakTotal - u.WeightsAtPeak}
	r.notes = append(r.notes, fmt.Sprintf("%d distinct timesteps; modulation tables %.2f GiB (%d of %d (timestep, modality) rows kept)",
		len(distinct), float64(tab.Bytes())/(1<<30), countTrue(keep), len(keep)))
	if active != nil {
		r.notes = append(r.notes, fmt.Sprintf("%d of %d blocks active", countTrue(active), cfg.NumLayers))
	}
	return r, nil
}

func countTrue(v []bool) int {
	n := 0
	for _, b := range v {
		if b {
			n++
		}
	}
	return n
}
