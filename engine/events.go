package engine

import (
	"image"
	"time"

	"h3studio/engine/compute"
	"h3studio/engine/plan"
)

// tracker turns phase progress into Events with elapsed time and an ETA,
// and records each phase's profile. It runs on Generate's goroutine.
type tracker struct {
	progress func(Event)
	b        compute.Backend
	start    time.Time
	now      func() time.Time

	phase      Phase
	unit       string
	phaseStart time.Time
	done       int
	total      int
	stats0     compute.Stats

	// est predicts the phases still to come (seconds); nil entries are
	// unknown. It is corrected by the measured rate of the running phase.
	est     *plan.Progress[Phase]
	profile []PhaseProfile
	peak    int64
}

func newTracker(b compute.Backend, progress func(Event), est *plan.Progress[Phase]) *tracker {
	if progress == nil {
		progress = func(Event) {}
	}
	t := &tracker{progress: progress, b: b, now: time.Now, est: est}
	t.start = t.now()
	b.ResetPeak()
	return t
}

// begin starts a phase of total units; a running phase ends first.
func (t *tracker) begin(ph Phase, total int, unit string) {
	t.end()
	t.phase, t.unit, t.total, t.done = ph, unit, total, 0
	t.phaseStart = t.now()
	t.stats0 = t.b.Stats()
	t.b.ResetPeak()
	t.emit(Event{Phase: ph, Done: 0, Total: total})
}

// step reports done units of the running phase.
func (t *tracker) step(done int) {
	if done > t.total {
		done = t.total
	}
	if done == t.done {
		return
	}
	t.done = done
	t.emit(Event{Phase: t.phase, Done: done, Total: t.total})
}

// preview reports a frame (a denoising preview or a final frame).
func (t *tracker) preview(img *image.RGBA, frame int, msg string) {
	t.emit(Event{Phase: t.phase, Done: t.done, Total: t.total, Preview: img, Frame: frame, Message: msg})
}

// message reports what the running phase is doing, its progress unchanged.
func (t *tracker) message(msg string) {
	t.emit(Event{Phase: t.phase, Done: t.done, Total: t.total, Message: msg})
}

// end closes the running phase and records its profile.
func (t *tracker) end() {
	if t.phase == "" {
		return
	}
	st := t.b.Stats()
	wall := t.now().Sub(t.phaseStart)
	t.profile = append(t.profile, PhaseProfile{Phase: t.phase, Wall: wall, Units: t.total, Unit: t.unit,
		Dispatches: st.Dispatches - t.stats0.Dispatches, FLOPs: st.FLOPs - t.stats0.FLOPs, PeakBytes: st.FootprintPeak()})
	t.peak = max(t.peak, st.FootprintPeak())
	if t.est != nil {
		t.est.Observe(t.phase, wall, st.FLOPs-t.stats0.FLOPs)
	}
	t.phase = ""
}

// finish ends the last phase and emits PhaseDone.
func (t *tracker) finish() {
	t.end()
	t.emit(Event{Phase: PhaseDone, Done: 1, Total: 1})
}

func (t *tracker) emit(e Event) {
	now := t.now()
	e.Elapsed = now.Sub(t.start)
	if t.est != nil && e.Phase != PhaseDone {
		e.ETA = t.est.Remaining(t.phase, now.Sub(t.phaseStart), t.done, t.total)
	}
	t.progress(e)
}

// timings returns the wall time per phase.
func (t *tracker) timings() map[Phase]time.Duration {
	m := map[Phase]time.Duration{}
	for _, p := range t.profile {
		m[p.Phase] += p.Wall
	}
	return m
}
