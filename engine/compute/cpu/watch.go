package cpu

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"h3studio/engine/compute"
)

// watches holds the contexts a backend's kernels check between pieces of
// their work (compute.Interruptible): an immutable list, replaced whole by
// WatchContext and its stop, so kernels read it without a lock.
type watches struct {
	mu   sync.Mutex // serialises replacements
	list atomic.Pointer[[]context.Context]
}

// WatchContext makes kernels check ctx between grain-sized pieces of their
// work until stop is called (compute.Interruptible).
func (b *Backend) WatchContext(ctx context.Context) (stop func()) {
	w := &b.watch
	w.replace(func(l []context.Context) []context.Context { return append(l, ctx) })
	var once sync.Once
	return func() {
		once.Do(func() {
			w.replace(func(l []context.Context) []context.Context {
				if i := slices.Index(l, ctx); i >= 0 {
					l = slices.Delete(l, i, i+1)
				}
				return l
			})
		})
	}
}

// replace sets the list to edit(a copy of the list).
func (w *watches) replace(edit func([]context.Context) []context.Context) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var l []context.Context
	if p := w.list.Load(); p != nil {
		l = slices.Clone(*p)
	}
	if l = edit(l); len(l) == 0 {
		w.list.Store(nil)
	} else {
		w.list.Store(&l)
	}
}

// watched wraps fn, a kernel's body over [lo, hi), to run in pieces of grain
// items with a check before each while any context is watched; it returns fn
// itself otherwise. Every output element depends on one index only (see
// parallel), so the pieces compute exactly what one call would.
func (b *Backend) watched(grain int, fn func(lo, hi int)) func(lo, hi int) {
	l := b.watch.list.Load()
	if l == nil {
		return fn
	}
	return func(lo, hi int) {
		for p := lo; p < hi; p += grain {
			checkDone(*l)
			fn(p, min(p+grain, hi))
		}
	}
}

// checkDone abandons the running kernel, by Try's panic (the caller's
// compute.Recover returns it), once one of the contexts is done.
func checkDone(l []context.Context) {
	for _, ctx := range l {
		select {
		case <-ctx.Done():
			compute.Try(fmt.Errorf("cpu: kernel stopped: %w", ctx.Err()))
		default:
		}
	}
}
