package studio

import (
	"context"
	"errors"
	"fmt"
	"image"
	"os"
	"time"

	"h3studio/engine"
	"h3studio/engine/media"
)

// Queue is the generation queue: takes asked for by the window (the
// draft, a seed grid, the first start's sample take) and by the local
// /v1/videos API, run one at a time on the loaded model or, with
// SetRemote, on a server. The jobs live in the Studio (Snapshot.Jobs) so
// the progress panel, the viewer's live preview and the library see one
// state; Queue is the handle on them (Studio.Queue).
type Queue struct{ s *Studio }

// Queue returns the generation queue.
func (s *Studio) Queue() Queue { return Queue{s} }

// Generating reports whether a take the user asked for is running or
// queued. The first start's sample take does not count: quitting just
// cancels it.
func (q Queue) Generating() bool {
	q.s.mu.Lock()
	defer q.s.mu.Unlock()
	for _, j := range q.s.jobs {
		if (j.state == JobQueued || j.state == JobRunning) && !j.sample {
			return true
		}
	}
	return false
}

// Busy reports whether a job is running or queued.
func (q Queue) Busy() bool {
	q.s.mu.Lock()
	defer q.s.mu.Unlock()
	if q.s.running != nil {
		return true
	}
	for _, j := range q.s.jobs {
		if j.state == JobQueued {
			return true
		}
	}
	return false
}

// JobID identifies a job of this session.
type JobID int

// JobState is a job's place in its life.
type JobState uint8

// Job states.
const (
	JobQueued JobState = iota
	JobRunning
	JobDone
	JobFailed
	JobCancelled
)

func (s JobState) String() string {
	return [...]string{"queued", "running", "done", "failed", "cancelled"}[s]
}

// PhaseOrder is the order of a generation's phases; each has its own bar.
var PhaseOrder = []engine.Phase{
	engine.PhaseLoad, engine.PhaseText, engine.PhaseReferences, engine.PhaseDenoise,
	engine.PhaseVideoDecode, engine.PhaseAudioDecode, engine.PhaseExport,
}

// PhaseName is a phase as the progress panel names it.
func PhaseName(p engine.Phase) string {
	switch p {
	case engine.PhaseLoad:
		return "Loading"
	case engine.PhaseText:
		return "Reading the prompt"
	case engine.PhaseReferences:
		return "Reading references"
	case engine.PhaseDenoise:
		return "Denoising"
	case engine.PhaseVideoDecode:
		return "Decoding video"
	case engine.PhaseAudioDecode:
		return "Decoding sound"
	case engine.PhaseExport:
		return "Saving"
	case engine.PhaseDone:
		return "Done"
	}
	return string(p)
}

// PhaseState is a phase's place in a job.
type PhaseState uint8

// Phase states.
const (
	PhasePending PhaseState = iota
	PhaseActive
	PhaseFinished
)

// PhaseView is one phase's progress.
type PhaseView struct {
	Phase       engine.Phase
	Name        string
	Done, Total int
	State       PhaseState
	Elapsed     time.Duration
}

// Fraction is the phase's completed share (0..1).
func (p PhaseView) Fraction() float64 {
	switch {
	case p.State == PhaseFinished:
		return 1
	case p.Total <= 0:
		return 0
	}
	return min(1, float64(p.Done)/float64(p.Total))
}

// JobView is a job as the window shows it.
type JobView struct {
	ID      JobID
	State   JobState
	Title   string
	Task    engine.Task
	Seed    uint64
	Phases  []PhaseView
	Current engine.Phase
	Elapsed time.Duration
	ETA     time.Duration // 0 when unknown
	// PeakBytes is the plan's predicted peak (the result's measured one
	// once done).
	PeakBytes int64
	Message   string // the engine's latest message, or why it failed
	TakeID    string // the saved take (done jobs)
	Canceling bool
	Created   time.Time // when it was queued
	Finished  time.Time // when it ended (zero while queued or running)
}

type phaseProgress struct {
	done, total int
	start, end  time.Time
}

type job struct {
	id          JobID
	draft       Draft
	req         engine.Request
	gen         Generator
	state       JobState
	created     time.Time
	started     time.Time
	finished    time.Time
	phases      map[engine.Phase]*phaseProgress
	cur         engine.Phase
	eta         time.Duration // engine's ETA from the latest event
	etaAt       time.Time
	plan        *engine.Plan
	message     string
	preview     *image.RGBA
	previewAt   time.Time
	take        string
	peak        int64
	cancel      context.CancelFunc
	cancelAsked bool
	sample      bool // the first start's sample take (RenderSampleTake)
	// onEnd runs once when the job leaves the queue or finishes (the API
	// removes the take's uploaded files).
	onEnd func()
}

func (j *job) view(now time.Time) JobView {
	v := JobView{ID: j.id, State: j.state, Title: j.title(), Task: j.draft.Task(), Seed: j.req.Seed,
		Current: j.cur, Message: j.message, TakeID: j.take, Canceling: j.cancelAsked && j.state == JobRunning, PeakBytes: j.peak,
		Created: j.created, Finished: j.finished}
	if j.plan != nil && v.PeakBytes == 0 {
		v.PeakBytes = j.plan.PeakBytes
	}
	end := now
	if !j.finished.IsZero() {
		end = j.finished
	}
	if !j.started.IsZero() {
		v.Elapsed = end.Sub(j.started)
	}
	curIdx := phaseIndex(j.cur)
	for i, p := range PhaseOrder {
		if p == engine.PhaseReferences && v.Task == engine.TaskT2VA {
			continue
		}
		pv := PhaseView{Phase: p, Name: PhaseName(p)}
		if pp := j.phases[p]; pp != nil {
			pv.Done, pv.Total = pp.done, pp.total
			stop := end
			if !pp.end.IsZero() {
				stop = pp.end
			}
			pv.Elapsed = stop.Sub(pp.start)
		}
		switch {
		case j.state == JobDone, curIdx > i:
			pv.State = PhaseFinished
		case curIdx == i && j.state == JobRunning:
			pv.State = PhaseActive
		}
		v.Phases = append(v.Phases, pv)
	}
	if j.state == JobRunning {
		v.ETA = j.estimateRemaining(now)
	}
	return v
}

// title names the job in lists and notices.
func (j *job) title() string {
	if j.sample {
		return SampleTakeTitle
	}
	return Title(j.draft.Prompt)
}

func phaseIndex(p engine.Phase) int {
	if p == engine.PhaseDone {
		return len(PhaseOrder)
	}
	for i, q := range PhaseOrder {
		if q == p {
			return i
		}
	}
	return -1
}

// estimateRemaining: the engine's own ETA when it sends one; otherwise the
// plan's estimate, corrected by the measured denoising step time once steps
// have been measured (decoding is assumed to take a sixth of denoising).
func (j *job) estimateRemaining(now time.Time) time.Duration {
	if j.eta > 0 {
		return max(0, j.eta-now.Sub(j.etaAt))
	}
	if d := j.phases[engine.PhaseDenoise]; d != nil && d.done > 0 && d.total > 0 {
		per := now.Sub(d.start) / time.Duration(d.done)
		if !d.end.IsZero() {
			per = d.end.Sub(d.start) / time.Duration(d.done)
		}
		rem := per * time.Duration(d.total-d.done)
		decode := per * time.Duration(d.total) / 6
		if vd := j.phases[engine.PhaseVideoDecode]; vd != nil && vd.total > 0 {
			decode = decode * time.Duration(vd.total-vd.done) / time.Duration(vd.total)
		}
		return rem + decode
	}
	if j.plan != nil && j.plan.Estimate > 0 && !j.started.IsZero() {
		if rem := j.plan.Estimate - now.Sub(j.started); rem > 0 {
			return rem
		}
	}
	return 0
}

// ErrNotReady is returned by Generate when the draft or the model is not
// ready; its text says why.
var ErrNotReady = errors.New("studio: not ready")

// Generate queues the draft as a job. While a job runs, the new one waits
// its turn (Generate again while running queues).
func (q Queue) Generate() (JobID, error) {
	q.s.mu.Lock()
	ok, why := q.s.canGenerateLocked(q.s.problemsLocked())
	if !ok {
		q.s.mu.Unlock()
		return 0, fmt.Errorf("%w: %s", ErrNotReady, why)
	}
	var plan *engine.Plan
	if q.s.plan != nil && q.s.planVer == q.s.draftVer {
		p := *q.s.plan
		plan = &p
	}
	id := q.s.enqueueLocked(q.s.draft.Clone(), plan)
	q.s.mu.Unlock()
	q.s.notify()
	return id, nil
}

func (s *Studio) enqueueLocked(d Draft, plan *engine.Plan) JobID {
	return s.enqueueJobLocked(d, plan, false).id
}

func (s *Studio) enqueueJobLocked(d Draft, plan *engine.Plan, sample bool) *job {
	return s.enqueueRequestLocked(d, d.Request(), plan, sample)
}

// enqueueRequestLocked queues a job running req, described by d (its
// title, task and inputs in take.json).
func (s *Studio) enqueueRequestLocked(d Draft, req engine.Request, plan *engine.Plan, sample bool) *job {
	s.nextJob++
	gen := s.gen
	if s.remote != nil && !sample {
		gen = s.remote // Run on server: the take goes to the server
	}
	j := &job{id: s.nextJob, draft: d, req: req, gen: gen, state: JobQueued, created: s.opts.Now(), phases: map[engine.Phase]*phaseProgress{}, plan: plan, sample: sample}
	s.jobs = append(s.jobs, j)
	s.sortJobsLocked()
	s.changedLocked()
	if s.running == nil {
		s.running = j // reserved until runJobs picks it
		s.opts.Go(s.runJobs)
	}
	return j
}

// sortJobsLocked keeps the running job first, then the queue in order,
// then finished jobs newest first (at most 20).
func (s *Studio) sortJobsLocked() {
	var run, queued, done []*job
	for _, j := range s.jobs {
		switch j.state {
		case JobRunning:
			run = append(run, j)
		case JobQueued:
			queued = append(queued, j)
		default:
			done = append(done, j)
		}
	}
	for i, k := 0, len(done)-1; i < k; i, k = i+1, k-1 {
		if done[i].finished.Before(done[k].finished) {
			done[i], done[k] = done[k], done[i]
		}
	}
	if len(done) > 20 {
		done = done[:20]
	}
	s.jobs = append(append(run, queued...), done...)
}

// Cancel stops a job: a queued one leaves the queue, the running one is
// cancelled through its context (the engine stops at its next step, tile or
// block boundary and nothing reaches the library).
func (q Queue) Cancel(id JobID) {
	q.s.update(func() {
		for _, j := range q.s.jobs {
			if j.id != id {
				continue
			}
			switch j.state {
			case JobQueued:
				j.state = JobCancelled
				j.finished = q.s.opts.Now()
				j.message = "Removed from the queue."
				if end := j.onEnd; end != nil {
					j.onEnd = nil
					q.s.opts.Go(end)
				}
				q.s.sortJobsLocked()
			case JobRunning:
				j.cancelAsked = true
				if j.cancel != nil {
					j.cancel()
				}
			}
		}
	})
}

// CancelAll cancels the running job and empties the queue.
func (q Queue) CancelAll() {
	q.s.mu.Lock()
	var ids []JobID
	for _, j := range q.s.jobs {
		if j.state == JobQueued || j.state == JobRunning {
			ids = append(ids, j.id)
		}
	}
	q.s.mu.Unlock()
	for i := len(ids) - 1; i >= 0; i-- {
		q.Cancel(ids[i])
	}
}

// runJobs is the worker: it runs queued jobs one at a time until the queue
// is empty. Only one runJobs is active at any time (s.running guards it).
func (s *Studio) runJobs() {
	for {
		s.mu.Lock()
		var j *job
		for _, q := range s.jobs {
			if q.state == JobQueued {
				j = q
				break
			}
		}
		if j == nil || s.closed {
			s.running = nil
			s.changedLocked()
			s.mu.Unlock()
			s.notify()
			return
		}
		ctx, cancel := context.WithCancel(s.ctx)
		j.state, j.cancel, j.started = JobRunning, cancel, s.opts.Now()
		s.running = j
		if !j.sample { // the sample renders behind the drawn placeholder
			s.viewer.Follow = true
		}
		s.sortJobsLocked()
		s.changedLocked()
		s.mu.Unlock()
		s.notify()

		s.runJob(ctx, j)
		cancel()
		s.mu.Lock()
		end := j.onEnd
		j.onEnd = nil
		s.mu.Unlock()
		if end != nil {
			end()
		}
	}
}

func (s *Studio) runJob(ctx context.Context, j *job) {
	fail := func(state JobState, msg string) {
		s.update(func() {
			j.state, j.finished, j.message = state, s.opts.Now(), msg
			s.sortJobsLocked()
			if state == JobFailed {
				s.noticeLocked(Fail, "The take “"+j.title()+"” failed: "+msg, "")
			}
		})
	}
	if j.gen == nil {
		fail(JobFailed, "no model is loaded")
		return
	}
	if msg := inputsChanged(j.draft); msg != "" {
		fail(JobFailed, msg)
		return
	}
	lib := s.library()
	stage, err := lib.stage()
	if err != nil {
		fail(JobFailed, saveMessage(err))
		return
	}
	var video media.Sink
	if s.opts.VideoSink != nil {
		video, err = s.opts.VideoSink(stage + string(os.PathSeparator) + VideoFile)
		switch {
		case errors.Is(err, media.ErrNoPlatform):
			// No MP4 writer on this machine (Linux without ffmpeg): the take
			// is saved without video.mp4, everything else as usual.
			video = nil
			s.Notify(Warn, "This machine has no MP4 writer, so the take is saved without video.mp4 (its frames play in the viewer and export as PNG).")
		case err != nil:
			os.RemoveAll(stage)
			fail(JobFailed, "the MP4 writer could not start: "+err.Error())
			return
		}
	}
	sink := newTakeSink(stage, video)
	res, genErr := j.gen.Generate(ctx, j.req, sink, func(ev engine.Event) { s.onEvent(j, ev) })
	fileErr := sink.finish(genErr)
	switch {
	case genErr != nil && (ctx.Err() != nil || errors.Is(genErr, context.Canceled)):
		os.RemoveAll(stage)
		fail(JobCancelled, "Cancelled; nothing was saved.")
		return
	case genErr != nil && (errors.Is(genErr, ErrDiskFull) || errors.Is(fileErr, ErrDiskFull)):
		// The engine stopped because the take's files could not be written.
		os.RemoveAll(stage)
		fail(JobFailed, saveMessage(ErrDiskFull))
		return
	case genErr != nil:
		os.RemoveAll(stage)
		fail(JobFailed, genErr.Error())
		return
	case fileErr != nil:
		os.RemoveAll(stage)
		fail(JobFailed, saveMessage(fileErr))
		return
	}
	s.onEvent(j, engine.Event{Phase: engine.PhaseExport, Done: 0, Total: 1, Message: "Saving the take"})
	meta := s.takeMeta(j, res, sink, video != nil)
	take, err := lib.commit(stage, meta)
	if err != nil {
		fail(JobFailed, saveMessage(err))
		return
	}
	clip := sink.clip()
	s.update(func() {
		j.state, j.finished, j.cur, j.take = JobDone, s.opts.Now(), engine.PhaseDone, take.ID
		if res.PeakBytes > 0 {
			j.peak = res.PeakBytes
		}
		j.message = fmt.Sprintf("Saved as %s", take.ID)
		s.sortJobsLocked()
		s.takes = append([]Take{take}, s.takes...)
		if s.viewer.Follow || (j.sample && s.viewer.Sample) {
			s.viewerSeq++
			s.viewer = Viewer{TakeID: take.ID, Title: take.Meta.Title, Clip: clip}
		}
	})
}

// saveMessage turns a library write error into the user's words.
func saveMessage(err error) string {
	if errors.Is(err, ErrDiskFull) {
		return "The disk is full, so the take could not be saved. Nothing in the library was changed; free some space and generate again."
	}
	return "The take could not be saved: " + err.Error() + ". Nothing in the library was changed."
}

// inputsChanged checks that a job's input files still exist (they are read
// by the engine when the job starts).
func inputsChanged(d Draft) string {
	check := func(m Media) string {
		if m.Empty() {
			return ""
		}
		if _, err := os.Stat(m.Path); err != nil {
			return m.Name() + " was moved or deleted before the take started"
		}
		return ""
	}
	for _, m := range []Media{d.First, d.Last} {
		if msg := check(m); msg != "" {
			return msg
		}
	}
	for _, r := range d.References {
		if msg := check(r.Media); msg != "" {
			return msg
		}
		if msg := check(r.Sound); msg != "" {
			return msg
		}
	}
	return ""
}

// onEvent records an engine event (called on the engine's goroutine; it
// only takes the lock briefly and copies what it keeps).
func (s *Studio) onEvent(j *job, ev engine.Event) {
	now := s.opts.Now()
	var preview *image.RGBA
	if ev.Preview != nil {
		s.mu.Lock()
		due := now.Sub(j.previewAt) >= 80*time.Millisecond || ev.Phase == engine.PhaseDenoise
		s.mu.Unlock()
		if due {
			preview = Scale(ev.Preview, ViewerEdge, ViewerEdge)
			if preview == ev.Preview {
				preview = cloneRGBA(ev.Preview)
			}
		}
	}
	s.update(func() {
		if idx := phaseIndex(ev.Phase); idx >= 0 {
			for _, p := range PhaseOrder[:idx] {
				if pp := j.phases[p]; pp != nil && pp.end.IsZero() {
					pp.end = now
				}
			}
			pp := j.phases[ev.Phase]
			if pp == nil {
				pp = &phaseProgress{start: now}
				j.phases[ev.Phase] = pp
			}
			pp.done, pp.total = ev.Done, ev.Total
			if ev.Total > 0 && ev.Done >= ev.Total {
				pp.end = now
			}
			if phaseIndex(j.cur) < idx {
				j.cur = ev.Phase
			}
		}
		if ev.ETA > 0 {
			j.eta, j.etaAt = ev.ETA, now
		}
		if ev.Message != "" {
			j.message = ev.Message
		}
		if preview != nil {
			j.preview, j.previewAt = preview, now
		}
	})
}

func cloneRGBA(src *image.RGBA) *image.RGBA {
	dst := image.NewRGBA(image.Rect(0, 0, src.Rect.Dx(), src.Rect.Dy()))
	for y := 0; y < src.Rect.Dy(); y++ {
		copy(dst.Pix[y*dst.Stride:y*dst.Stride+4*src.Rect.Dx()], src.Pix[(y)*src.Stride:])
	}
	return dst
}
