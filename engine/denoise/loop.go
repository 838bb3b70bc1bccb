// Package denoise is MiniMax-H3's request loop: from text embeddings,
// condition latents and initial noise to the generated video and audio
// latents, for t2va, fl2va (first, last or both keyframes) and ref2va. It
// mirrors diffusers' modular pipeline blocks (modular_pipelines/minimax_h3:
// PrepareLayout / Ref2VAPrepareLayout, PrepareLatents, SetTimesteps,
// LoopDenoiser, LoopSchedulerStep, AfterDenoise) to spec H3-DIT.md §4–§13 as
// corrected by ERRATA.md:
//
//   - the packed layout [text | conditions | target audio | target video]
//     (engine/layout);
//   - condition rows noised once to t = f32(0.999) (scale_noise) and pinned:
//     only the generated rows are ever updated; reference audio stays clean;
//   - per-row timesteps (text and target video: the video t; target audio:
//     the audio t; visual conditions: max(t, 0.999); reference audio: 1);
//   - the two shifted σ grids (video 12, audio 3) stepped in lockstep with
//     the float32 Euler update;
//   - h3.c's speed controls (controls.go): velocity reuse, gate-ranked layer
//     thinning, core reuse and token reduction.
//
// The modulation tables for every timestep of the request are computed once
// before the loop (keeping only the (timestep, modality) rows the steps
// read), the text is refined once, and the DiT's AdaLN projections are
// released before the first step. The context is checked between steps (and
// by the DiT between blocks).
package denoise

import (
	"context"
	"fmt"
	"math"
	"sort"

	"h3studio/engine/compute"
	"h3studio/engine/dit"
	"h3studio/engine/layout"
	"h3studio/engine/sampler"
)

// Keyframe is one FL2VA keyframe: its normalized clean latent [C, 1, H, W]
// on the target's latent grid and the noise it is mixed with.
type Keyframe struct {
	Anchor layout.Anchor
	Latent []float32
	Noise  []float32
}

// Reference is one Ref2VA reference. Visual references (images, videos)
// carry a normalized latent [C, T, h, w] on their own grid and the noise
// mixed into it; audio (a standalone audio reference or a video's
// soundtrack) carries its clean channel-major rows [2·A, audio channels].
type Reference struct {
	Spec   layout.Reference
	Latent []float32
	Noise  []float32
	Audio  []float32
}

// Request is one denoising run.
type Request struct {
	// Text holds the text conditioning [L, text_dim] (the text encoder's
	// tap; any float dtype) and TextTags each row's tag (1 text, 0 vision
	// block).
	Text     *compute.Tensor
	TextTags []int64
	// Target is the generated video's latent grid; AudioLatents the
	// generated audio's latents per stereo channel.
	Target       layout.Grid
	AudioLatents int
	// Keyframes (fl2va) or References (ref2va), at most one of the two.
	Keyframes  []Keyframe
	References []Reference
	// VideoNoise [C, T, H, W] and AudioNoise [2, audio channels, A] are the
	// initial latents. When both are nil, every noise tensor (the
	// conditions' included) is drawn from Seed with NoiseSource
	// (engine/sampler: the portable generator by default, in the
	// reference's order: conditions, video, audio).
	VideoNoise, AudioNoise []float32
	Seed                   uint64
	NoiseSource            sampler.Source
	Controls               Controls
}

// StepRecord describes one finished step (for progress, previews and the
// oracle's loop fixtures).
type StepRecord struct {
	Step, Steps int
	Evaluated   bool // false when the velocity was extrapolated (reuse)
	// Timesteps are the step's distinct timesteps (sorted) and
	// TimestepIndex each row's index into them (the reference's per-step
	// timestep / timestep_indices).
	Timesteps     []float32
	TimestepIndex []int64
	// VideoVelocity [Nv·patch] and AudioVelocity [Na·channels] are the
	// velocities of every video and audio row; VideoRows and AudioRows the
	// rows after the update (conditions untouched). Valid during the call.
	VideoVelocity, AudioVelocity []float32
	VideoRows, AudioRows         []float32
}

// Prepared describes the loop's inputs after preparation (valid during the
// Observer call).
type Prepared struct {
	Layout                   *layout.Layout
	VideoRows, AudioRows     []float32 // packed rows entering the loop
	ConditionRows            []float32 // the noised visual condition rows (pinned)
	VideoSigmas, AudioSigmas []float32
	VideoTimesteps           []float32
	AudioTimesteps           []float32
	Active                   []bool // blocks that run (nil: all)
}

// Observer receives the loop's progress. Either function may be nil.
type Observer struct {
	Prepared func(p *Prepared)
	Step     func(r *StepRecord)
}

// Result is the generated latents.
type Result struct {
	Latents      []float32 // [C, T, H, W], normalized
	AudioLatents []float32 // [2, audio channels, A], normalized
	Forwards     int       // model evaluations run
	Active       []bool    // the blocks that ran (nil: all)
	// Seed and NoiseSource record where drawn noise came from (Drawn false:
	// the request supplied its noise).
	Seed        uint64
	NoiseSource sampler.Source
	Drawn       bool
}

// Run denoises one request on m (opened by the caller; its weights are
// bound and released as the phases need them).
func Run(ctx context.Context, m *dit.Model, req Request, obs Observer) (res *Result, err error) {
	defer compute.Recover(&err)
	c := m.Config()
	ctl := req.Controls.Normalize()
	if err := ctl.Validate(); err != nil {
		return nil, err
	}
	if req.Text == nil || req.Text.Rank() != 2 || req.Text.Dim(0) != len(req.TextTags) {
		return nil, fmt.Errorf("denoise: text %v does not match %d text tags", req.Text, len(req.TextTags))
	}
	patch := layout.Patch{T: c.PatchSize[0], H: c.PatchSize[1], W: c.PatchSize[2]}
	spec := layout.Spec{TextTags: req.TextTags, Target: req.Target, AudioLatents: req.AudioLatents, Patch: patch}
	for _, k := range req.Keyframes {
		spec.Keyframes = append(spec.Keyframes, k.Anchor)
	}
	for _, r := range req.References {
		spec.References = append(spec.References, r.Spec)
	}
	lay, err := layout.Build(spec)
	if err != nil {
		return nil, fmt.Errorf("denoise: %w", err)
	}
	drawn := req.VideoNoise == nil && req.AudioNoise == nil
	if drawn {
		if req, err = drawNoise(c, patch, req); err != nil {
			return nil, err
		}
	}
	prep, err := prepareRows(c, patch, lay, req)
	if err != nil {
		return nil, err
	}
	videoShift, audioShift := ctl.shifts()
	pair, err := sampler.NewPair(ctl.Steps, videoShift, audioShift)
	if err != nil {
		return nil, fmt.Errorf("denoise: %w", err)
	}
	steps := pair.Steps()
	plan := PlanSteps(Controls{Steps: steps, Reuse: ctl.Reuse, Layers: ctl.Layers, CoreReuse: ctl.CoreReuse, TokenReduction: ctl.TokenReduction}, c.NumLayers)
	reuse, err := sampler.PlanReuse(pair, ctl.Reuse)
	if err != nil {
		return nil, fmt.Errorf("denoise: %w", err)
	}

	// Per-step timesteps, the request's distinct timesteps and the table
	// rows the steps read.
	stepTs := make([][]float32, steps)
	stepIdx := make([][]int64, steps)
	var distinct []float32
	seen := map[float32]bool{}
	for i := 0; i < steps; i++ {
		stepTs[i], stepIdx[i] = layout.RowTimesteps(lay, pair.Video.Timesteps[i], pair.Audio.Timesteps[i])
		for _, t := range stepTs[i] {
			if !seen[t] {
				seen[t] = true
				distinct = append(distinct, t)
			}
		}
	}
	sort.Slice(distinct, func(i, j int) bool { return distinct[i] < distinct[j] })
	global := make(map[float32]int64, len(distinct))
	for i, t := range distinct {
		global[t] = int64(i)
	}
	keep := make([]bool, len(distinct)*dit.Modalities)
	rowIdx := make([][]int64, steps)
	for i := range rowIdx {
		g := make([]int64, len(stepIdx[i]))
		for r, ti := range stepIdx[i] {
			g[r] = global[stepTs[i][ti]]
		}
		rowIdx[i] = g
		if plan[i].Evaluate {
			dit.MarkUsed(keep, lay.Tags, g)
		}
	}

	// Text, tables, active blocks, the sequence.
	b := m.Backend()
	text, err := m.RefineText(ctx, req.Text)
	if err != nil {
		return nil, err
	}
	defer b.Free(text)
	thin := ctl.Layers < MaxLayers
	tab, err := m.Tables(ctx, distinct, dit.TableOptions{Keep: keep, Scores: thin})
	if err != nil {
		return nil, err
	}
	defer tab.Release()
	var active []bool
	if thin {
		if active, err = dit.SelectBlocks(tab.GateScores(), ctl.Layers); err != nil {
			return nil, err
		}
		tab.Prune(active)
	}
	if err := m.BindCore(active); err != nil {
		return nil, err
	}
	dl := dit.Layout{Positions: lay.Positions, Tags: lay.Tags, VideoIndices: lay.VideoIndices,
		AudioIndices: lay.AudioIndices, TextIndices: lay.TextIndices,
		TargetGrid: [3]int{req.Target.T, req.Target.H / patch.H, req.Target.W / patch.W}}
	seq, err := m.NewSequence(dl, text)
	if err != nil {
		return nil, err
	}
	defer seq.Release()

	if obs.Prepared != nil {
		obs.Prepared(&Prepared{Layout: lay, VideoRows: prep.video, AudioRows: prep.audio, ConditionRows: prep.cond,
			VideoSigmas: pair.Video.Sigmas, AudioSigmas: pair.Audio.Sigmas,
			VideoTimesteps: pair.Video.Timesteps, AudioTimesteps: pair.Audio.Timesteps, Active: active})
	}

	// The loop.
	nv, na := len(lay.VideoIndices), len(lay.AudioIndices)
	pd, ac := c.PatchDim(), c.AudioInChannels
	vIn := compute.MustAlloc(b, compute.F32, nv, pd)
	aIn := compute.MustAlloc(b, compute.F32, na, ac)
	vOut := compute.MustAlloc(b, compute.F32, nv, pd)
	aOut := compute.MustAlloc(b, compute.F32, na, ac)
	defer b.Free(vIn, aIn, vOut, aOut)
	vv := make([]float32, nv*pd)
	av := make([]float32, na*ac)
	var lastV, lastA, prevV, prevA []float32
	cv, ca := lay.ConditionVideoRows*pd, lay.ConditionAudioRows*ac
	res = &Result{Active: active, Drawn: drawn}
	if drawn {
		res.Seed, res.NoiseSource = req.Seed, req.NoiseSource
	}
	for i := 0; i < steps; i++ {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("denoise: cancelled before step %d of %d: %w", i+1, steps, err)
		}
		p := plan[i]
		if p.Evaluate {
			if err := upload(b, vIn, prep.video); err != nil {
				return nil, err
			}
			if err := upload(b, aIn, prep.audio); err != nil {
				return nil, err
			}
			fo := dit.ForwardOptions{Active: active, Core: p.Core, Reduce: p.Reduce}
			if err := m.Forward(ctx, seq, tab, dit.Step{Video: vIn, Audio: aIn, TimestepIndex: rowIdx[i]}, dit.Velocity{Video: vOut, Audio: aOut}, fo); err != nil {
				return nil, fmt.Errorf("denoise: step %d of %d: %w", i+1, steps, err)
			}
			if err := download(b, vv, vOut); err != nil {
				return nil, err
			}
			if err := download(b, av, aOut); err != nil {
				return nil, err
			}
			if err := finite(vv, av, pd, ac); err != nil {
				return nil, fmt.Errorf("denoise: step %d of %d: %w", i+1, steps, err)
			}
			res.Forwards++
			if ctl.Reuse > 1 {
				prevV, prevA = lastV, lastA
				lastV, lastA = append([]float32(nil), vv...), append([]float32(nil), av...)
			}
		} else {
			// Velocity reuse: extrapolate linearly in σ from the last two
			// evaluations, on each modality's own grid (h3.c --reuse).
			if r := reuse[i]; r.Previous < 0 {
				copy(vv, lastV)
				copy(av, lastA)
			} else {
				sampler.Extrapolate(vv, lastV, prevV, r.VideoRatio)
				sampler.Extrapolate(av, lastA, prevA, r.AudioRatio)
			}
		}
		// Euler on the generated rows only; conditions stay pinned.
		pair.Video.Step(i, prep.video[cv:], prep.video[cv:], vv[cv:])
		pair.Audio.Step(i, prep.audio[ca:], prep.audio[ca:], av[ca:])
		if obs.Step != nil {
			obs.Step(&StepRecord{Step: i, Steps: steps, Evaluated: p.Evaluate, Timesteps: stepTs[i], TimestepIndex: stepIdx[i],
				VideoVelocity: vv, AudioVelocity: av, VideoRows: prep.video, AudioRows: prep.audio})
		}
	}
	vs := layout.VideoShape{C: c.InChannels, T: req.Target.T, H: req.Target.H, W: req.Target.W}
	if res.Latents, err = layout.Unpatchify(nil, prep.video[cv:], vs, patch); err != nil {
		return nil, err
	}
	if res.AudioLatents, err = layout.UnpackAudio(nil, prep.audio[ca:], ac, req.AudioLatents); err != nil {
		return nil, err
	}
	return res, nil
}

// drawNoise fills the request's noise from its seed: one draw per visual
// condition in packed order, then the video latent, then the audio rows
// (the reference's order, ERRATA F15).
func drawNoise(c dit.Config, patch layout.Patch, req Request) (Request, error) {
	spec := sampler.NoiseSpec{
		Video:         layout.VideoShape{C: c.InChannels, T: req.Target.T, H: req.Target.H, W: req.Target.W},
		AudioLatents:  req.AudioLatents,
		AudioChannels: c.AudioInChannels,
		Patch:         patch,
	}
	for range req.Keyframes {
		spec.Conditions = append(spec.Conditions, layout.VideoShape{C: c.InChannels, T: 1, H: req.Target.H, W: req.Target.W})
	}
	for _, r := range req.References {
		if r.Spec.Kind != layout.RefAudio {
			g := r.Spec.Latent
			spec.Conditions = append(spec.Conditions, layout.VideoShape{C: c.InChannels, T: g.T, H: g.H, W: g.W})
		}
	}
	n, err := sampler.InitialNoise(req.NoiseSource, req.Seed, spec)
	if err != nil {
		return req, fmt.Errorf("denoise: %w", err)
	}
	out := req
	out.Keyframes = append([]Keyframe(nil), req.Keyframes...)
	out.References = append([]Reference(nil), req.References...)
	k := 0
	for i := range out.Keyframes {
		out.Keyframes[i].Noise = n.Conditions[k]
		k++
	}
	for i := range out.References {
		if out.References[i].Spec.Kind != layout.RefAudio {
			out.References[i].Noise = n.Conditions[k]
			k++
		}
	}
	out.VideoNoise = n.Video
	if out.AudioNoise, err = layout.UnpackAudio(nil, n.AudioRows, c.AudioInChannels, req.AudioLatents); err != nil {
		return req, fmt.Errorf("denoise: %w", err)
	}
	return out, nil
}

type prepared struct {
	video, audio, cond []float32
}

// prepareRows builds the packed rows entering the loop (PrepareLatents):
// visual conditions noised to t = 0.999 and patchified, in packed order,
// then the target noise patchified; reference audio rows (clean), then the
// target audio noise packed channel-major.
func prepareRows(c dit.Config, patch layout.Patch, lay *layout.Layout, req Request) (*prepared, error) {
	p := &prepared{}
	C := c.InChannels
	addVisual := func(what string, latent, noise []float32, g layout.Grid) error {
		vs := layout.VideoShape{C: C, T: g.T, H: g.H, W: g.W}
		if len(latent) != vs.Len() || len(noise) != vs.Len() {
			return fmt.Errorf("denoise: %s: latent has %d values and noise %d, the %v grid needs %d", what, len(latent), len(noise), g, vs.Len())
		}
		mixed := make([]float32, vs.Len())
		sampler.ScaleNoise(mixed, latent, noise, sampler.KeyframeNoiseLevel)
		rows, err := layout.Patchify(nil, mixed, vs, patch)
		if err != nil {
			return fmt.Errorf("denoise: %s: %w", what, err)
		}
		p.cond = append(p.cond, rows...)
		return nil
	}
	var audioRefs []float32
	for i, k := range req.Keyframes {
		g := layout.Grid{T: 1, H: req.Target.H, W: req.Target.W}
		if err := addVisual(fmt.Sprintf("keyframe %d (%v)", i, k.Anchor), k.Latent, k.Noise, g); err != nil {
			return nil, err
		}
	}
	for i, r := range req.References {
		switch r.Spec.Kind {
		case layout.RefImage, layout.RefVideo:
			if r.Spec.Kind == layout.RefVideo && r.Spec.AudioLatents > 0 {
				if err := addAudio(&audioRefs, i, r, c); err != nil {
					return nil, err
				}
			}
			if err := addVisual(fmt.Sprintf("reference %d (%v)", i, r.Spec.Kind), r.Latent, r.Noise, r.Spec.Latent); err != nil {
				return nil, err
			}
		case layout.RefAudio:
			if err := addAudio(&audioRefs, i, r, c); err != nil {
				return nil, err
			}
		}
	}
	vs := layout.VideoShape{C: C, T: req.Target.T, H: req.Target.H, W: req.Target.W}
	if len(req.VideoNoise) != vs.Len() {
		return nil, fmt.Errorf("denoise: video noise has %d values, the target %v latent needs %d", len(req.VideoNoise), req.Target, vs.Len())
	}
	target, err := layout.Patchify(nil, req.VideoNoise, vs, patch)
	if err != nil {
		return nil, fmt.Errorf("denoise: %w", err)
	}
	p.video = append(append([]float32(nil), p.cond...), target...)
	ac := c.AudioInChannels
	if len(req.AudioNoise) != layout.AudioChannels*ac*req.AudioLatents {
		return nil, fmt.Errorf("denoise: audio noise has %d values, [2, %d, %d] needs %d", len(req.AudioNoise), ac, req.AudioLatents, layout.AudioChannels*ac*req.AudioLatents)
	}
	arows, err := layout.PackAudio(nil, req.AudioNoise, ac, req.AudioLatents)
	if err != nil {
		return nil, fmt.Errorf("denoise: %w", err)
	}
	p.audio = append(audioRefs, arows...)
	if len(p.video) != len(lay.VideoIndices)*c.PatchDim() || len(p.audio) != len(lay.AudioIndices)*ac {
		return nil, fmt.Errorf("denoise: prepared %d video and %d audio values for a layout of %d and %d rows", len(p.video), len(p.audio), len(lay.VideoIndices), len(lay.AudioIndices))
	}
	return p, nil
}

func addAudio(dst *[]float32, i int, r Reference, c dit.Config) error {
	want := layout.AudioChannels * r.Spec.AudioLatents * c.AudioInChannels
	if len(r.Audio) != want {
		return fmt.Errorf("denoise: reference %d: %d audio values, %d latents × 2 channels × %d need %d", i, len(r.Audio), r.Spec.AudioLatents, c.AudioInChannels, want)
	}
	*dst = append(*dst, r.Audio...)
	return nil
}

func upload(b compute.Backend, t *compute.Tensor, v []float32) error {
	return b.Upload(t, compute.EncodeFloat32(compute.F32, v))
}

func download(b compute.Backend, v []float32, t *compute.Tensor) error {
	raw := make([]byte, t.Bytes())
	if err := b.Download(raw, t); err != nil {
		return err
	}
	copy(v, compute.DecodeFloat32(t.DType(), raw))
	return nil
}

// finite reports the first NaN or infinity of a forward's velocities.
func finite(video, audio []float32, pd, ac int) error {
	for i, v := range video {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return fmt.Errorf("the DiT produced %v in the video velocity (row %d)", v, i/pd)
		}
	}
	for i, v := range audio {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return fmt.Errorf("the DiT produced %v in the audio velocity (row %d)", v, i/ac)
		}
	}
	return nil
}
