package engine

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"time"

	"h3studio/engine/audiovae"
	"h3studio/engine/compute"
	"h3studio/engine/compute/meta"
	"h3studio/engine/denoise"
	"h3studio/engine/dit"
	"h3studio/engine/layout"
	"h3studio/engine/prompt"
	"h3studio/engine/qwen3vl"
	"h3studio/engine/safetensors"
	"h3studio/engine/snapshot"
	"h3studio/engine/videovae"
)

// Predictions. Plan predicts each phase's work from shapes alone — FLOPs of
// the text encoder, the DiT loop (run shape-only on the meta backend over
// the model's own code) and both decoders (their packages' cost models),
// and unit counts for the other phases — and its peak storage. Durations
// come from the session's own measurements: the seconds per unit of work
// each phase took on this device in earlier generations (and, for a phase
// never run yet, the FLOP rate of the phases that did run). Until a
// session has measured anything its time estimate is unknown (zero), never
// invented. During a generation the ETA uses the running phase's measured
// rate.

// flopPhases are the phases whose work is counted in FLOPs.
var flopPhases = map[Phase]bool{PhaseText: true, PhaseDenoise: true, PhaseVideoDecode: true, PhaseAudioDecode: true}

// phaseOrder is the order phases run in.
var phaseOrder = []Phase{PhaseLoad, PhaseReferences, PhaseText, PhaseDenoise, PhaseVideoDecode, PhaseAudioDecode, PhaseExport}

// rates are a session's measured throughputs. Safe for concurrent use.
type rates struct {
	mu       sync.Mutex
	perPhase map[Phase]float64 // seconds per work unit
	// flopWall and flopWork are the seconds and FLOPs of the FLOP phases
	// measured, each halved at every new measurement (recent phases count
	// more): their ratio, weighted by work, is the seconds per FLOP used
	// for a FLOP phase never run yet.
	flopWall, flopWork float64
}

func newRates() *rates { return &rates{perPhase: map[Phase]float64{}} }

// minMeasuredFraction: a FLOP rate measured over less than this fraction
// of the work it is to predict is not an estimate. Extrapolating a 5-ms
// text phase (small matrices, dominated by overheads) to the denoising
// loop and the decoders predicted the demo generation 10× too long; the
// first denoising step grounds the estimate.
const minMeasuredFraction = 0.01

// own predicts a phase's duration from its own measured rate.
func (r *rates) own(ph Phase, work float64) (float64, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if work <= 0 {
		return 0, true
	}
	if v, ok := r.perPhase[ph]; ok {
		return v * work, true
	}
	return 0, false
}

// extrapolate predicts work FLOPs of phases never measured from the FLOP
// rate measured so far plus liveWall seconds over liveWork FLOPs of the
// running phase; ok is false when that rate rests on too little work.
func (r *rates) extrapolate(work, liveWall, liveWork float64) (float64, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	wall, measured := r.flopWall+liveWall, r.flopWork+liveWork
	if work <= 0 {
		return 0, true
	}
	if wall <= 0 || measured < minMeasuredFraction*work {
		return 0, false
	}
	return wall / measured * work, true
}

func (r *rates) observe(ph Phase, wall time.Duration, work float64) {
	if work <= 0 || wall <= 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	v := wall.Seconds() / work
	if old, ok := r.perPhase[ph]; ok {
		v = (old + v) / 2 // follow the device (thermal state, other load) without jumping
	}
	r.perPhase[ph] = v
	if flopPhases[ph] {
		r.flopWall = r.flopWall/2 + wall.Seconds()
		r.flopWork = r.flopWork/2 + work
	}
}

// workPlan is the predicted work of a plan's phases.
type workPlan struct {
	work  map[Phase]float64 // FLOPs for flopPhases, units otherwise
	peak  int64             // predicted peak storage of the chosen mode (0: unknown)
	notes []string
}

// estimate predicts the rest of a running generation.
type estimate struct {
	r    *rates
	w    workPlan
	mu   sync.Mutex
	seen map[Phase]bool
}

func (s *Session) newEstimate(p Plan) *estimate {
	return &estimate{r: s.est, w: p.work, seen: map[Phase]bool{}}
}

// observe records a finished phase: its measured FLOPs when the backend
// counts them, else its predicted work.
func (e *estimate) observe(ph Phase, wall time.Duration, flops float64) {
	work := e.w.work[ph]
	if flopPhases[ph] && flops > 0 {
		work = flops
	}
	e.r.observe(ph, wall, work)
	e.mu.Lock()
	e.seen[ph] = true
	e.mu.Unlock()
}

// remaining predicts the time left: the running phase from its own
// measured rate (or its prediction before its first unit), then every
// later phase from the session's rates; FLOP phases never measured from
// the FLOP rate measured so far, the running phase's included. Zero means
// unknown.
func (e *estimate) remaining(cur Phase, elapsed time.Duration, done, total int) time.Duration {
	var left, unmeasured, liveWall, liveWork float64
	switch {
	case done > 0 && total > 0:
		left = elapsed.Seconds() * float64(total-done) / float64(done)
		if flopPhases[cur] {
			liveWall, liveWork = elapsed.Seconds(), e.w.work[cur]*float64(done)/float64(total)
		}
	default:
		sec, ok := e.r.own(cur, e.w.work[cur])
		switch {
		case ok:
			left = max(0, sec-elapsed.Seconds())
		case flopPhases[cur]:
			unmeasured += e.w.work[cur]
		default:
			return 0
		}
	}
	after := false
	for _, ph := range phaseOrder {
		if ph == cur {
			after = true
			continue
		}
		if !after {
			continue
		}
		w, planned := e.w.work[ph]
		if !planned {
			continue
		}
		sec, ok := e.r.own(ph, w)
		switch {
		case ok:
			left += sec
		case flopPhases[ph]:
			unmeasured += w
		}
		// else: a short bookkeeping phase never measured yet
	}
	sec, ok := e.r.extrapolate(unmeasured, liveWall, liveWork)
	if !ok {
		return 0
	}
	return time.Duration((left + sec) * float64(time.Second))
}

// total predicts the whole generation (zero: unknown).
func (r *rates) total(w workPlan) time.Duration {
	var sec, unmeasured float64
	for ph, work := range w.work {
		s, ok := r.own(ph, work)
		switch {
		case ok:
			sec += s
		case flopPhases[ph]:
			unmeasured += work
		}
	}
	s, ok := r.extrapolate(unmeasured, 0, 0)
	if !ok {
		return 0
	}
	return time.Duration((sec + s) * float64(time.Second))
}

// predict fills a resolved plan's predictions: packed rows, work per phase,
// peak storage and the time estimate. A failure to predict leaves the
// fields unknown and adds a note; it never rejects the request.
func (s *Session) predict(p *Plan) {
	part := snapshot.FL2VA
	if p.Task == TaskRef2VA {
		part = snapshot.Ref2VA
	}
	pi, err := s.partitionInfo(part)
	if err != nil {
		p.Notes = append(p.Notes, "no time or memory estimate: "+err.Error())
		return
	}
	key := predictionKey(p)
	s.predMu.Lock()
	c, ok := s.preds[key]
	s.predMu.Unlock()
	if !ok {
		w, err := s.predictWork(pi, p)
		if err != nil {
			p.Notes = append(p.Notes, "no time or memory estimate: "+err.Error())
			return
		}
		c = cachedPrediction{w: w, textRows: p.TextRows, rows: p.Rows, refs: append([]ReferencePlan(nil), p.References...)}
		s.predMu.Lock()
		if len(s.preds) >= 64 {
			clear(s.preds)
		}
		s.preds[key] = c
		s.predMu.Unlock()
	}
	w := c.w
	w.work = maps.Clone(c.w.work)
	p.TextRows, p.Rows = c.textRows, c.rows
	copy(p.References, c.refs)
	w.work[PhaseLoad] = float64(s.componentsToLoad(pi.part, p.Task, s.memoryModeFor(p.Request.Memory)))
	p.work = w
	p.PeakBytes = w.peak
	p.Estimate = s.est.total(w)
	p.Notes = append(p.Notes, w.notes...)
}

// cachedPrediction is a plan's prediction, kept by predictionKey: the GUI
// plans the same draft again and again while the user edits.
type cachedPrediction struct {
	w              workPlan
	textRows, rows int
	refs           []ReferencePlan
}

// predictionKey is everything a prediction depends on.
func predictionKey(p *Plan) string {
	r := p.Request
	return fmt.Sprintf("%s|%q|%dx%d|%dx%d|%d|%d/%d/%d/%d/%v|%s|%d|%s|%s|%+v", p.Task, r.Prompt, r.Width, r.Height, r.RenderWidth, r.RenderHeight,
		r.Frames, r.Steps, r.Reuse, r.Layers, r.CoreReuse, r.TokenReduction, r.Memory, len(p.anchors()), r.RefImageSize, r.RefVideoCanvas, p.References)
}

// textRows predicts the text encoder's sequence: the prompt's tokens, the
// labels, and the vision blocks of the keyframes and references at the
// sizes the processor will give them.
func textRows(pi *partInfo, p *Plan) (int, []qwen3vl.Grid, error) {
	r := p.Request
	merge := pi.qcfg.Vision.SpatialMergeSize
	factor := pi.proc.Factor()
	req := prompt.Request{Task: prompt.T2VA, Prompt: r.Prompt}
	var grids []qwen3vl.Grid
	imageGrid := func(w, h int) (prompt.Grid, error) {
		hh, ww, err := qwen3vl.SmartResizeImage(h, w, factor, pi.procConfig().Image)
		if err != nil {
			return prompt.Grid{}, err
		}
		grids = append(grids, qwen3vl.Grid{T: 1, H: hh / (factor / merge), W: ww / (factor / merge)})
		return prompt.Grid{H: hh / factor, W: ww / factor}, nil
	}
	mc := p.ModelCanvas(r)
	switch p.Task {
	case TaskFL2VA:
		req.Task = prompt.FL2VA
		for _, on := range []bool{r.First != "" || r.FirstImage != nil, r.Last != "" || r.LastImage != nil} {
			if on {
				g, err := imageGrid(mc.Width, mc.Height)
				if err != nil {
					return 0, nil, err
				}
				req.Keyframes = append(req.Keyframes, g)
			}
		}
	case TaskRef2VA:
		req.Task = prompt.Ref2VA
		for _, rp := range p.References {
			switch rp.Kind {
			case RefImage:
				g, err := imageGrid(rp.Width, rp.Height)
				if err != nil {
					return 0, nil, err
				}
				req.References = append(req.References, prompt.Reference{Kind: prompt.Image, Grid: g})
			case RefAudio:
				req.References = append(req.References, prompt.Reference{Kind: prompt.Audio})
			default:
				blocks, err := prompt.SampleVideo(rp.QwenFrames)
				if err != nil {
					return 0, nil, err
				}
				hh, ww, err := qwen3vl.SmartResizeVideo(2*len(blocks), rp.Height, rp.Width, pi.qcfg.Vision.TemporalPatchSize, factor, pi.procConfig().Video, false)
				if err != nil {
					return 0, nil, err
				}
				for range blocks {
					grids = append(grids, qwen3vl.Grid{T: 1, H: hh / (factor / merge), W: ww / (factor / merge)})
				}
				req.References = append(req.References, prompt.Reference{Kind: prompt.Video, Grid: prompt.Grid{H: hh / factor, W: ww / factor},
					Blocks: blocks, Soundtrack: rp.Sound})
			}
		}
	}
	pres, err := prompt.Present(pi.tok, req, prompt.Options{EmptyPrompt: prompt.PadEmpty})
	if err != nil {
		return 0, nil, err
	}
	return pres.Len(), grids, nil
}

// predictWork predicts every phase's work and the peak storage.
func (s *Session) predictWork(pi *partInfo, p *Plan) (workPlan, error) {
	r := p.Request
	w := workPlan{work: map[Phase]float64{}}
	for i := range p.References {
		rp := &p.References[i]
		if rp.VAEFrames > 0 && pi.vcfg != nil {
			rp.LatentFrames = pi.vcfg.Temporal().EncodeLatents(rp.VAEFrames)
		}
	}
	L, grids, err := textRows(pi, p)
	if err != nil {
		return w, err
	}
	p.TextRows = L
	mode := s.memoryModeFor(p.Request.Memory)
	// Text encoder: FLOPs of the decoder layers (the vision tower is
	// small next to them) and its storage plan.
	w.work[PhaseText] = qwen3vl.TextFLOPs(pi.qcfg, L, 0)
	qm := qwen3vl.Resident
	if mode == MemoryStreaming {
		qm = qwen3vl.Streaming
	}
	tf := qwen3vl.Plan(pi.qcfg, qm, qwen3vl.PlanInput{Tokens: L, Blocks: grids})

	// DiT: the loop run shape-only.
	du, rows, err := ditUsage(pi.dcfg, p, L, mode == MemoryStreaming)
	if err != nil {
		return w, err
	}
	p.Rows = rows
	w.work[PhaseDenoise] = du.FLOPs

	// Decoders.
	lh, lw := p.ModelCanvas(r).Latent()
	type part struct{ weights, act int64 }
	parts := []part{{tf.TextPhaseWeights, tf.Peak - tf.TextPhaseWeights}, {du.WeightsAtPeak, du.PeakTotal - du.WeightsAtPeak}}
	if pi.vcfg != nil {
		vc, err := videovae.EstimateDecode(pi.vcfg, p.LatentFrames, lh, lw, nil, compute.F32)
		if err != nil {
			return w, err
		}
		w.work[PhaseVideoDecode] = vc.FLOPs
		parts = append(parts, part{vc.WeightBytes, vc.DeviceBytes + vc.HostBytes})
	}
	if pi.acfg != nil {
		ac, err := audiovae.EstimateDecode(pi.acfg, layout.AudioChannels, p.AudioLatents)
		if err != nil {
			return w, err
		}
		w.work[PhaseAudioDecode] = ac.FLOPs
		parts = append(parts, part{ac.WeightBytes, ac.DeviceBytes + ac.HostBytes})
	}
	if mode == MemoryStreaming {
		for _, pt := range parts {
			w.peak = max(w.peak, pt.weights+pt.act)
		}
	} else {
		var weights, act int64
		for _, pt := range parts {
			weights += pt.weights
			act = max(act, pt.act)
		}
		w.peak = weights + act
	}
	if p.Task != TaskT2VA {
		w.work[PhaseReferences] = float64(conditionUnits(*p))
		w.notes = append(w.notes, "the memory estimate leaves out encoding the conditions")
	}
	w.work[PhaseLoad] = float64(s.componentsToLoad(pi.part, p.Task, mode))
	w.work[PhaseExport] = float64(r.Frames)
	return w, nil
}

// componentsToLoad counts the components a generation would load now.
func (s *Session) componentsToLoad(part snapshot.Partition, task Task, mode MemoryMode) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.busy || s.cur == nil || s.cur.part != part || s.cur.loadedMode != mode {
		return 4
	}
	n := 0
	for _, loaded := range []bool{s.cur.text != nil, s.cur.dit != nil, s.cur.vvae != nil, s.cur.avae != nil} {
		if !loaded {
			n++
		}
	}
	return n
}

// memoryModeFor is memoryMode before the peak is known: auto predicts the
// resident mode.
func (s *Session) memoryModeFor(m MemoryMode) MemoryMode {
	if m == MemoryStreaming {
		return m
	}
	return MemoryResident
}

// ditUsage runs the request's denoising loop shape-only: the model's own
// code on the meta backend over a data-less checkpoint of its config.
func ditUsage(cfg dit.Config, p *Plan, textRows int, streaming bool) (u meta.Usage, rows int, err error) {
	defer compute.Recover(&err)
	r := p.Request
	mb := meta.New()
	m, err := dit.Open(mb, safetensors.NewBinder("dit", dit.PlanningSource(cfg, dit.OriginalLayout), mb.Weights()), cfg, dit.Options{Streaming: streaming})
	if err != nil {
		return u, 0, err
	}
	defer m.Close()
	text := compute.MustAlloc(mb, compute.BF16, textRows, cfg.TextDim)
	tags := make([]int64, textRows)
	for i := range tags {
		tags[i] = layout.TagText
	}
	lh, lw := p.ModelCanvas(r).Latent()
	C := cfg.InChannels
	req := denoise.Request{Text: text, TextTags: tags, Target: layout.Grid{T: p.LatentFrames, H: lh, W: lw}, AudioLatents: p.AudioLatents,
		VideoNoise: make([]float32, C*p.LatentFrames*lh*lw), AudioNoise: make([]float32, layout.AudioChannels*cfg.AudioInChannels*p.AudioLatents),
		Controls: denoise.Controls{Steps: r.Steps, Reuse: r.Reuse, Layers: r.Layers, CoreReuse: r.CoreReuse, TokenReduction: r.TokenReduction}}
	switch p.Task {
	case TaskFL2VA:
		for _, a := range p.anchors() {
			n := C * lh * lw
			req.Keyframes = append(req.Keyframes, denoise.Keyframe{Anchor: a, Latent: make([]float32, n), Noise: make([]float32, n)})
		}
	case TaskRef2VA:
		for _, rp := range p.References {
			var dr denoise.Reference
			switch rp.Kind {
			case RefAudio:
				dr.Spec = layout.Reference{Kind: layout.RefAudio, AudioLatents: rp.AudioLatents}
			case RefImage:
				g := layout.Grid{T: 1, H: rp.Height / 16, W: rp.Width / 16}
				dr.Spec = layout.Reference{Kind: layout.RefImage, Latent: g}
			default:
				g := layout.Grid{T: rp.LatentFrames, H: rp.Height / 16, W: rp.Width / 16}
				dr.Spec = layout.Reference{Kind: layout.RefVideo, Latent: g, AudioLatents: rp.AudioLatents}
			}
			if dr.Spec.Kind != layout.RefAudio {
				n := C * dr.Spec.Latent.T * dr.Spec.Latent.H * dr.Spec.Latent.W
				dr.Latent, dr.Noise = make([]float32, n), make([]float32, n)
			}
			if dr.Spec.AudioLatents > 0 {
				dr.Audio = make([]float32, layout.AudioChannels*dr.Spec.AudioLatents*cfg.AudioInChannels)
			}
			req.References = append(req.References, dr)
		}
	}
	obs := denoise.Observer{Prepared: func(pp *denoise.Prepared) { rows = pp.Layout.Rows() }}
	if _, err := denoise.Run(context.Background(), m, req, obs); err != nil {
		return u, 0, fmt.Errorf("engine: planning the denoising loop: %w", err)
	}
	return mb.Usage(), rows, nil
}

// procConfig returns the processor's pixel limits.
func (pi *partInfo) procConfig() qwen3vl.ProcessorConfig { return pi.pcfg }
