package cpu

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"h3studio/engine/compute"
)

// TestParallelForwardsWorkerPanics: a panic in a worker is raised on the
// caller, where an entry point can recover it, instead of ending the
// process from an unrecovered goroutine.
func TestParallelForwardsWorkerPanics(t *testing.T) {
	b := New(Options{Threads: 4})
	defer func() {
		r := recover()
		if r == nil || !strings.Contains(r.(error).Error(), "index out of range") {
			t.Fatalf("recovered %v, want the worker's index panic", r)
		}
	}()
	var empty []int
	b.parallel(8, 1, func(lo, hi int) {
		if lo >= 4 {
			_ = empty[lo]
		}
	})
	t.Fatal("the worker's panic was lost")
}

// TestParallelStopsWhenAWatchedContextIsDone: while a context is watched, a
// kernel's chunks run in grain-sized pieces with a check before each, so a
// cancel stops the kernel after at most the pieces already running (one per
// worker), and Recover returns context.Canceled; the pieces cover every
// index exactly once while nothing is cancelled, and stop unwatches.
func TestParallelStopsWhenAWatchedContextIsDone(t *testing.T) {
	const workers, n, grain = 4, 4096, 8
	b := New(Options{Threads: workers})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop := compute.WatchContext(b, ctx)

	seen := make([]atomic.Int32, n)
	var pieces atomic.Int64
	b.parallel(n, grain, func(lo, hi int) {
		pieces.Add(1)
		if hi-lo > grain {
			t.Errorf("piece [%d,%d) is larger than the grain %d", lo, hi, grain)
		}
		for i := lo; i < hi; i++ {
			seen[i].Add(1)
		}
	})
	for i := range seen {
		if c := seen[i].Load(); c != 1 {
			t.Fatalf("index %d handled %d times", i, c)
		}
	}
	if p := pieces.Load(); p != n/grain {
		t.Errorf("%d pieces, want %d", p, n/grain)
	}

	pieces.Store(0)
	err := func() (err error) {
		defer compute.Recover(&err)
		b.parallel(n, grain, func(lo, hi int) {
			if pieces.Add(1) == 1 {
				cancel()
			}
		})
		return nil
	}()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("a kernel cancelled in its first piece: %v, want context.Canceled", err)
	}
	if p := pieces.Load(); p > workers {
		t.Errorf("%d pieces ran after a cancel in the first, want at most %d (one per worker)", p, workers)
	}

	stop()
	pieces.Store(0)
	b.parallel(n, grain, func(lo, hi int) { pieces.Add(1) })
	if p := pieces.Load(); p != workers {
		t.Errorf("unwatched: %d calls, want one per worker (%d)", p, workers)
	}
}
