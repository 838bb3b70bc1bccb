package plan

import (
	"sync"
	"time"
)

// Time predictions. A request's work is predicted per phase from shapes
// alone (FLOPs for the model phases, unit counts for the others); durations
// come from a session's own measurements: the seconds per unit of work each
// phase took on this device in earlier generations (and, for a FLOP phase
// never run yet, the FLOP rate of the phases that did run). Until anything
// is measured the time estimate is unknown (zero), never invented. During a
// generation Progress uses the running phase's measured rate.

// Phases are a pipeline's phase names: the order they run in and the ones
// whose work is counted in FLOPs.
type Phases[P ~string] struct {
	Order []P
	FLOPs map[P]bool
}

// Work is the predicted work of a request's phases: FLOPs for the FLOP
// phases, units otherwise.
type Work[P ~string] map[P]float64

// Rates are a session's measured throughputs. Safe for concurrent use.
type Rates[P ~string] struct {
	phases   Phases[P]
	mu       sync.Mutex
	perPhase map[P]float64 // seconds per work unit
	// flopWall and flopWork are the seconds and FLOPs of the FLOP phases
	// measured, each halved at every new measurement (recent phases count
	// more): their ratio, weighted by work, is the seconds per FLOP used
	// for a FLOP phase never run yet.
	flopWall, flopWork float64
}

// NewRates starts with nothing measured.
func NewRates[P ~string](ph Phases[P]) *Rates[P] {
	return &Rates[P]{phases: ph, perPhase: map[P]float64{}}
}

// minMeasuredFraction: a FLOP rate measured over less than this fraction
// of the work it is to predict is not an estimate. Extrapolating a 5-ms
// text phase (small matrices, dominated by overheads) to the denoising
// loop and the decoders predicted the demo generation 10× too long; the
// first denoising step grounds the estimate.
const minMeasuredFraction = 0.01

// own predicts a phase's duration from its own measured rate.
func (r *Rates[P]) own(ph P, work float64) (float64, bool) {
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
func (r *Rates[P]) extrapolate(work, liveWall, liveWork float64) (float64, bool) {
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

// Observe records that a phase did work units in wall.
func (r *Rates[P]) Observe(ph P, wall time.Duration, work float64) {
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
	if r.phases.FLOPs[ph] {
		r.flopWall = r.flopWall/2 + wall.Seconds()
		r.flopWork = r.flopWork/2 + work
	}
}

// Total predicts the whole of w (zero: unknown).
func (r *Rates[P]) Total(w Work[P]) time.Duration {
	var sec, unmeasured float64
	for ph, work := range w {
		s, ok := r.own(ph, work)
		switch {
		case ok:
			sec += s
		case r.phases.FLOPs[ph]:
			unmeasured += work
		}
	}
	s, ok := r.extrapolate(unmeasured, 0, 0)
	if !ok {
		return 0
	}
	return time.Duration((sec + s) * float64(time.Second))
}

// Progress predicts the rest of a running generation.
type Progress[P ~string] struct {
	r *Rates[P]
	w Work[P]
}

// NewProgress starts the prediction of a generation of work w.
func NewProgress[P ~string](r *Rates[P], w Work[P]) *Progress[P] {
	return &Progress[P]{r: r, w: w}
}

// Observe records a finished phase: its measured FLOPs when the backend
// counts them, else its predicted work.
func (e *Progress[P]) Observe(ph P, wall time.Duration, flops float64) {
	work := e.w[ph]
	if e.r.phases.FLOPs[ph] && flops > 0 {
		work = flops
	}
	e.r.Observe(ph, wall, work)
}

// Remaining predicts the time left: the running phase from its own
// measured rate (or its prediction before its first unit), then every
// later phase from the session's rates; FLOP phases never measured from
// the FLOP rate measured so far, the running phase's included. Zero means
// unknown.
func (e *Progress[P]) Remaining(cur P, elapsed time.Duration, done, total int) time.Duration {
	flop := e.r.phases.FLOPs
	var left, unmeasured, liveWall, liveWork float64
	switch {
	case done > 0 && total > 0:
		left = elapsed.Seconds() * float64(total-done) / float64(done)
		if flop[cur] {
			liveWall, liveWork = elapsed.Seconds(), e.w[cur]*float64(done)/float64(total)
		}
	default:
		sec, ok := e.r.own(cur, e.w[cur])
		switch {
		case ok:
			left = max(0, sec-elapsed.Seconds())
		case flop[cur]:
			unmeasured += e.w[cur]
		default:
			return 0
		}
	}
	after := false
	for _, ph := range e.r.phases.Order {
		if ph == cur {
			after = true
			continue
		}
		if !after {
			continue
		}
		w, planned := e.w[ph]
		if !planned {
			continue
		}
		sec, ok := e.r.own(ph, w)
		switch {
		case ok:
			left += sec
		case flop[ph]:
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

// Cache keeps predictions by a comparable key: the GUI plans the same draft
// again and again while the user edits. It holds at most cacheSize entries
// (then starts over). Safe for concurrent use.
type Cache[K comparable, V any] struct {
	mu sync.Mutex
	m  map[K]V
}

const cacheSize = 64

// Get returns the value kept for k.
func (c *Cache[K, V]) Get(k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[k]
	return v, ok
}

// Put keeps v for k.
func (c *Cache[K, V]) Put(k K, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= cacheSize {
		c.m = map[K]V{}
	}
	c.m[k] = v
}
