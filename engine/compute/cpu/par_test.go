package cpu

import (
	"strings"
	"testing"
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
