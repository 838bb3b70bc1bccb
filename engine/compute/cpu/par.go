package cpu

import (
	"runtime/debug"
	"sync"
)

// parallel runs fn over [0, n) split into contiguous chunks of at least grain
// items on up to b.threads goroutines. Each index is handled exactly once;
// callers make each output element depend on one index only, which keeps
// results independent of the thread count. While a context is watched
// (WatchContext), each chunk runs in pieces of grain items with a check for
// a cancel before each.
func (b *Backend) parallel(n, grain int, fn func(lo, hi int)) {
	if n <= 0 {
		return
	}
	if grain < 1 {
		grain = 1
	}
	fn = b.watched(grain, fn)
	workers := b.threads
	if max := (n + grain - 1) / grain; workers > max {
		workers = max
	}
	if workers <= 1 {
		fn(0, n)
		return
	}
	chunk := (n + workers - 1) / workers
	// Weights may be views of a mapped file: a worker inherits the
	// caller's debug.SetPanicOnFault, and a panic in a worker (a fault on
	// a weight file that changed under the run, or any other) is raised
	// again on the caller, where the engine's entry point recovers it,
	// instead of ending the process from an unrecovered goroutine.
	onFault := debug.SetPanicOnFault(false)
	debug.SetPanicOnFault(onFault)
	var (
		mu       sync.Mutex
		panicked any
	)
	var wg sync.WaitGroup
	for lo := 0; lo < n; lo += chunk {
		hi := lo + chunk
		if hi > n {
			hi = n
		}
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			defer func() {
				if r := recover(); r != nil {
					mu.Lock()
					if panicked == nil {
						panicked = r
					}
					mu.Unlock()
				}
			}()
			if onFault {
				debug.SetPanicOnFault(true)
			}
			fn(lo, hi)
		}(lo, hi)
	}
	wg.Wait()
	if panicked != nil {
		panic(panicked)
	}
}
