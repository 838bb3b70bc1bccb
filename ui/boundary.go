package ui

import (
	"sync"
	"time"
)

// boundary is the one place where work from the studio's goroutines crosses
// into Fyne's: the studio says "something changed" from any goroutine, and
// the boundary runs apply on the UI goroutine through a single do (fyne.Do),
// at most once per interval. Bursts of changes (progress events, previews,
// file probes) coalesce into one apply that reads the latest snapshot.
type boundary struct {
	do       func(func())
	apply    func()
	interval time.Duration

	mu      sync.Mutex
	pending bool
	stopped bool
	last    time.Time
	timer   *time.Timer
}

func newBoundary(do func(func()), apply func(), interval time.Duration) *boundary {
	return &boundary{do: do, apply: apply, interval: interval}
}

// poke schedules an apply (called from any goroutine, never blocks).
func (b *boundary) poke() {
	b.mu.Lock()
	if b.pending || b.stopped {
		b.mu.Unlock()
		return
	}
	b.pending = true
	if wait := b.interval - time.Since(b.last); wait > 0 {
		b.timer = time.AfterFunc(wait, func() { b.do(b.run) })
		b.mu.Unlock()
		return
	}
	b.mu.Unlock()
	b.do(b.run)
}

func (b *boundary) run() {
	b.mu.Lock()
	if b.stopped {
		b.mu.Unlock()
		return
	}
	b.pending = false
	b.last = time.Now()
	b.mu.Unlock()
	b.apply()
}

func (b *boundary) stop() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.stopped = true
	if b.timer != nil {
		b.timer.Stop()
	}
}
