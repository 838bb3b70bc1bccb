package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"os"
	"path/filepath"

	"h3studio/engine/compute"
	"h3studio/engine/layout"
	"h3studio/engine/lora"
	"h3studio/engine/plan"
	"h3studio/engine/prompt"
	"h3studio/engine/qwen3vl"
	"h3studio/engine/request"
	"h3studio/engine/snapshot"
	"h3studio/engine/videovae"
)

// Predictions. Plan predicts each phase's work from shapes alone with
// engine/plan — FLOPs of the text encoder, the DiT loop (run shape-only on
// the meta backend over the model's own code) and both decoders, and unit
// counts for the other phases — and its peak storage; the time estimate
// comes from the session's measured rates (plan.Rates).

// Plan validates r and resolves every default without loading any weight
// (conditioning files are probed, tokenizer and configs read). Errors that
// reject the request are *RequestError values naming the rule.
func (s *Session) Plan(r Request) (Plan, error) {
	if r.Memory == "" {
		r.Memory = s.opts.Memory
	}
	p, err := request.Resolve(r, s.facts, request.ProbeWith(s.opts.Opener))
	if err != nil {
		return p, err
	}
	s.resolveMemory(&p)
	s.noteFit(&p)
	return p, nil
}

// noteFit adds a note when the predicted peak exceeds the device's memory
// budget (memoryBudget): that no mode fits (auto) or, for an explicit
// mode, what streaming the weights would predict, and what needs less. It
// refuses nothing: the prediction errs on the large side (it counts the
// decoders' host buffers).
func (s *Session) noteFit(p *Plan) {
	budget := s.memoryBudget()
	p.MemoryBudget = budget
	if budget <= 0 || p.PeakBytes <= 0 || p.PeakBytes <= budget {
		return
	}
	gb := func(n int64) string { return fmt.Sprintf("%.1f GB", float64(n)/1e9) }
	less := "a smaller canvas, a render canvas or fewer frames need less"
	if p.Request.Memory == MemoryAuto {
		p.Notes = append(p.Notes, fmt.Sprintf("no memory mode fits this device's %s: %s, the predicted peak %s, may run out of memory or swap (%s)",
			gb(budget), p.Memory, gb(p.PeakBytes), less))
		return
	}
	if modeResidency(p.Memory) != compute.Streaming {
		q := *p
		q.Notes = nil
		q.Memory = MemoryMode(modeName(plan.Mode{Residency: compute.Streaming, Quant: modeQuant(p.Memory)}))
		s.predict(&q)
		switch {
		case q.PeakBytes <= 0:
		case q.PeakBytes <= budget:
			p.Notes = append(p.Notes, fmt.Sprintf("%s, the predicted peak %s exceeds this device's %s and may run out of memory; streaming the weights (--ssd-streaming) predicts %s",
				p.Memory, gb(p.PeakBytes), gb(budget), gb(q.PeakBytes)))
			return
		default:
			p.Notes = append(p.Notes, fmt.Sprintf("the predicted peak is %s resident and %s streaming the weights, more than this device's %s: the generation may run out of memory (%s)",
				gb(p.PeakBytes), gb(q.PeakBytes), gb(budget), less))
			return
		}
	}
	p.Notes = append(p.Notes, fmt.Sprintf("the predicted peak %s exceeds this device's %s: the generation may run out of memory (%s)", gb(p.PeakBytes), gb(budget), less))
}

// memoryMode is the plan's memory mode (resolveMemory; resident when unset).
func (s *Session) memoryMode(p Plan) MemoryMode {
	if p.Memory == MemoryAuto {
		return MemoryResident
	}
	return p.Memory
}

// phases are the generation's phases for the planner: the order they run
// in and those whose work is counted in FLOPs.
var phases = plan.Phases[Phase]{
	Order: []Phase{PhaseLoad, PhaseReferences, PhaseText, PhaseDenoise, PhaseVideoDecode, PhaseAudioDecode, PhaseExport},
	FLOPs: map[Phase]bool{PhaseText: true, PhaseDenoise: true, PhaseVideoDecode: true, PhaseAudioDecode: true},
}

// workPlan is the predicted work of a plan's phases (request.Prediction).
type workPlan = request.Prediction

func (s *Session) newEstimate(p Plan) *plan.Progress[Phase] {
	return plan.NewProgress(s.est, p.Prediction.Work)
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
	key := newPredictionKey(p)
	c, ok := s.preds.Get(key)
	if !ok {
		w, err := s.predictWork(pi, p)
		if err != nil {
			p.Notes = append(p.Notes, "no time or memory estimate: "+err.Error())
			return
		}
		c = cachedPrediction{w: w, textRows: p.TextRows, rows: p.Rows, refs: append([]ReferencePlan(nil), p.References...)}
		s.preds.Put(key, c)
	}
	w := c.w
	w.Work = maps.Clone(c.w.Work)
	p.TextRows, p.Rows = c.textRows, c.rows
	copy(p.References, c.refs)
	w.Work[PhaseLoad] = float64(s.componentsToLoad(pi.Partition, p.Task, s.memoryMode(*p)))
	p.Prediction = w
	p.PeakBytes, p.DevicePeakBytes = w.Memory.Peak, w.Memory.DevicePeak
	p.Estimate = s.est.Total(w.Work)
	p.Notes = append(p.Notes, w.Notes...)
}

// cachedPrediction is a plan's prediction, kept by predictionKey: the GUI
// plans the same draft again and again while the user edits.
type cachedPrediction struct {
	w              workPlan
	textRows, rows int
	refs           []ReferencePlan
}

// predictionKey is everything a prediction depends on.
type predictionKey struct {
	task                          Task
	prompt                        string
	width, height, rw, rh, frames int
	controls                      [4]int // steps, reuse, layers, core reuse
	shifts                        [2]float64
	loras                         string // each LoRA's path, strength and alpha
	tokenReduction                bool
	preview                       bool
	memory                        MemoryMode
	anchors                       int
	refImageSize                  string
	refVideoCanvas                string
	nrefs                         int
	refs                          [MaxReferences]ReferencePlan
}

func newPredictionKey(p *Plan) predictionKey {
	r := p.Request
	k := predictionKey{task: p.Task, prompt: r.Prompt, width: r.Width, height: r.Height, rw: r.RenderWidth, rh: r.RenderHeight, frames: r.Frames,
		controls: [4]int{r.Steps, r.Reuse, r.Layers, r.CoreReuse}, tokenReduction: r.TokenReduction, preview: r.Preview, memory: p.Memory,
		anchors: len(p.Anchors()), refImageSize: string(r.RefImageSize), refVideoCanvas: string(r.RefVideoCanvas), nrefs: len(p.References)}
	copy(k.refs[:], p.References)
	k.shifts = [2]float64{r.VideoShift, r.AudioShift}
	for _, l := range r.LoRAs {
		k.loras += l.String() + "\x00"
	}
	return k
}

// ratesKey identifies what the measured rates depend on: the backend and
// its device, and the transformer's configuration (its shapes set the
// kernels' efficiency; the weights' values do not matter).
func (s *Session) ratesKey() (key, device, model string) {
	d := s.opts.Backend.Device()
	device = d.Backend + ": " + d.Name
	h := sha256.New()
	for _, part := range []snapshot.Partition{snapshot.FL2VA, snapshot.Ref2VA} {
		if c := s.snap.Find(part, snapshot.Transformer); c != nil {
			if b, err := os.ReadFile(filepath.Join(c.ConfigDir, "config.json")); err == nil {
				h.Write(b)
			}
			break
		}
	}
	model = s.name
	key = device + " | " + model + " | " + hex.EncodeToString(h.Sum(nil))[:16]
	return key, device, model
}

// loadRates starts the session's rates from the rates file, when it has an
// entry for this device and model. A missing, unreadable or malformed file
// only means no head start; it is logged, never an error.
func (s *Session) loadRates() {
	path := s.opts.RatesFile
	if path == "" {
		return
	}
	key, _, _ := s.ratesKey()
	if err := s.est.Load(path, key); err != nil && !os.IsNotExist(err) {
		s.log.Warn("measured rates not used", "file", path, "err", err)
	}
}

// saveRates writes the session's rates into the rates file. Failures are
// logged: a generation never fails for it.
func (s *Session) saveRates() {
	path := s.opts.RatesFile
	if path == "" {
		return
	}
	key, device, model := s.ratesKey()
	if err := s.est.Save(path, key, device, model); err != nil {
		s.log.Warn("measured rates not saved", "file", path, "err", err)
	}
}

// textRows predicts the text encoder's sequence (plan.TextRows).
func textRows(pi *partInfo, p *Plan) (int, []qwen3vl.Grid, error) {
	r := p.Request
	t := plan.Text{Prompt: r.Prompt, Task: prompt.T2VA, Canvas: p.ModelCanvas(r)}
	switch p.Task {
	case TaskFL2VA:
		t.Task, t.Keyframes = prompt.FL2VA, len(p.Anchors())
	case TaskRef2VA:
		t.Task = prompt.Ref2VA
		for _, rp := range p.References {
			k := prompt.Video
			switch rp.Kind {
			case RefImage:
				k = prompt.Image
			case RefAudio:
				k = prompt.Audio
			}
			t.References = append(t.References, plan.TextReference{Kind: k, Width: rp.Width, Height: rp.Height, QwenFrames: rp.QwenFrames, Sound: rp.Sound})
		}
	}
	return plan.TextRows(pi.Tokenizer, pi.Text, pi.ProcessorConfig, pi.Processor.Factor(), t)
}

// predictWork predicts every phase's work and the peak storage.
func (s *Session) predictWork(pi *partInfo, p *Plan) (workPlan, error) {
	r := p.Request
	w := workPlan{Work: plan.Work[Phase]{}}
	for i := range p.References {
		rp := &p.References[i]
		if rp.VAEFrames > 0 && pi.VideoVAE != nil {
			rp.LatentFrames = pi.VideoVAE.Temporal().EncodeLatents(rp.VAEFrames)
		}
	}
	L, grids, err := textRows(pi, p)
	if err != nil {
		return w, err
	}
	p.TextRows = L
	mode := s.memoryMode(*p)
	lh, lw := p.ModelCanvas(r).Latent()
	loop := plan.Loop{TextRows: L, Target: layout.Grid{T: p.LatentFrames, H: lh, W: lw}, AudioLatents: p.AudioLatents, Controls: r.Controls()}
	if loop.Adapters, err = lora.Shapes(pi.DiT, r.LoRAs); err != nil {
		return w, err
	}
	switch p.Task {
	case TaskFL2VA:
		loop.Keyframes = p.Anchors()
	case TaskRef2VA:
		for _, rp := range p.References {
			loop.References = append(loop.References, rp.LatentSpec())
		}
	}
	pr, err := plan.Predict(plan.Request{Text: pi.Text, DiT: pi.DiT, Video: pi.VideoVAE, Audio: pi.AudioVAE, Grids: grids, Loop: loop,
		Mode: modeOf(mode), Budget: s.memoryBudget(), StreamVideoDecoder: s.opts.StreamVideoDecoder})
	if err != nil {
		return w, err
	}
	p.Rows = pr.Rows
	w.Memory = pr.Memory
	w.Work[PhaseText] = pr.TextFLOPs
	w.Work[PhaseDenoise] = pr.DenoiseFLOPs
	if r := p.Request; r.Preview {
		lh, lw := p.ModelCanvas(r).Latent()
		if pf, err := videovae.PreviewFLOPs(pi.VideoVAE, r.Steps, p.LatentFrames, lh, lw); err == nil {
			w.Work[PhaseDenoise] += pf
		}
	}
	if pi.VideoVAE != nil {
		w.Work[PhaseVideoDecode] = pr.VideoDecodeFLOPs
	}
	if pi.AudioVAE != nil {
		w.Work[PhaseAudioDecode] = pr.AudioDecodeFLOPs
	}
	if p.Task != TaskT2VA {
		w.Work[PhaseReferences] = float64(conditionUnits(*p))
		w.Notes = append(w.Notes, "the memory estimate leaves out encoding the conditions")
	}
	w.Work[PhaseLoad] = float64(s.componentsToLoad(pi.Partition, p.Task, mode))
	w.Work[PhaseExport] = float64(r.Frames)
	return w, nil
}

// componentsToLoad counts the components a generation would load now.
func (s *Session) componentsToLoad(part snapshot.Partition, task Task, mode MemoryMode) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.busy || s.cur == nil || s.cur.Partition != part || s.cur.loadedMode != mode {
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
