//go:build darwin

package objcpool

import "github.com/progrium/darwinkit/objc"

// With runs f inside an autorelease pool. A panic in f is recovered inside
// the pool and raised again after the pool has been popped.
func With(f func()) {
	var caught any
	panicked := true
	objc.WithAutoreleasePool(func() {
		defer func() {
			if panicked {
				caught = recover()
			}
		}()
		f()
		panicked = false
	})
	if panicked {
		panic(caught)
	}
}
