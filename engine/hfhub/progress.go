package hfhub

import (
	"sort"
	"sync"
	"time"
)

// Progress follows a download; it is safe for concurrent use. Snapshot
// gives the totals, each active file and a rate-based ETA.
type Progress struct {
	mu          sync.Mutex
	total, done int64
	held        int64
	files       map[string]*FileProgress
	started     time.Time
	// rate estimation: an exponentially weighted average of bytes/second
	lastT    time.Time
	lastDone int64
	rate     float64
	finished int
}

// FileProgress is one file in flight.
type FileProgress struct {
	Path string `json:"path"`
	Done int64  `json:"done"`
	Size int64  `json:"size"`
}

// ProgressSnapshot is the state of a download at one moment.
type ProgressSnapshot struct {
	Total    int64          `json:"total"` // bytes of all distinct contents
	Done     int64          `json:"done"`  // bytes on disk (held, resumed or received)
	Held     int64          `json:"held"`  // bytes that were already on disk at the start
	Rate     float64        `json:"rate"`  // bytes per second, smoothed
	ETA      time.Duration  `json:"eta"`   // at Rate; 0 when unknown
	Finished int            `json:"finished"`
	Active   []FileProgress `json:"active"`
	Elapsed  time.Duration  `json:"elapsed"`
}

func (p *Progress) start(total, held int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.total, p.held, p.done = total, held, held
	p.files = map[string]*FileProgress{}
	p.started = time.Now()
	p.lastT, p.lastDone, p.rate = p.started, held, 0
}

func (p *Progress) fileStart(path string, size, have int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.files == nil {
		p.files = map[string]*FileProgress{}
	}
	p.files[path] = &FileProgress{Path: path, Size: size, Done: have}
	p.done += have
	p.lastDone += have // resumed bytes are not part of the rate
}

func (p *Progress) add(path string, n int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if f := p.files[path]; f != nil {
		f.Done += n
	}
	p.done += n
	if n < 0 {
		p.lastDone += n
	}
}

func (p *Progress) fileDone(path string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.files, path)
	p.finished++
}

// Snapshot returns the current state; it also updates the rate estimate.
func (p *Progress) Snapshot() ProgressSnapshot {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if dt := now.Sub(p.lastT).Seconds(); dt >= 0.5 {
		inst := float64(p.done-p.lastDone) / dt
		if p.rate == 0 {
			p.rate = inst
		} else {
			p.rate = 0.7*p.rate + 0.3*inst
		}
		if p.rate < 0 {
			p.rate = 0
		}
		p.lastT, p.lastDone = now, p.done
	}
	s := ProgressSnapshot{Total: p.total, Done: p.done, Held: p.held, Rate: p.rate, Finished: p.finished}
	if !p.started.IsZero() {
		s.Elapsed = now.Sub(p.started)
	}
	if p.rate > 0 && p.total > p.done {
		s.ETA = time.Duration(float64(p.total-p.done) / p.rate * float64(time.Second))
	}
	for _, f := range p.files {
		s.Active = append(s.Active, *f)
	}
	sort.Slice(s.Active, func(i, j int) bool { return s.Active[i].Path < s.Active[j].Path })
	return s
}
