package compute

import "context"

// Interruptible is a backend whose kernels can stop part-way through when a
// watched context is done. The CPU backend is one: a single convolution of a
// reference video's tile runs for seconds there, longer than a cancel may
// wait. Metal is not: a committed command buffer runs to completion, its
// kernels are bounded by DispatchBudget and the engine checks its context
// between them.
type Interruptible interface {
	// WatchContext makes kernels that run until stop is called check ctx
	// between chunks of their work. Once ctx is done, a kernel abandons its
	// output (left undefined) and panics with Try's failure wrapping
	// ctx.Err(), which Recover returns; kernels already finished are
	// unaffected. A backend serves one model at a time, so a watch covers
	// every kernel dispatched while it lasts.
	WatchContext(ctx context.Context) (stop func())
}

// WatchContext watches ctx on b when b is Interruptible and ctx can be
// cancelled; otherwise it does nothing. Use as
// `defer compute.WatchContext(b, ctx)()` around a run.
func WatchContext(b Backend, ctx context.Context) (stop func()) {
	if ib, ok := b.(Interruptible); ok && ctx != nil && ctx.Done() != nil {
		return ib.WatchContext(ctx)
	}
	return func() {}
}
