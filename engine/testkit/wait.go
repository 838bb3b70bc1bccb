package testkit

import (
	"testing"
	"time"
)

// Bounded waits, instead of sleeping polls: a test subscribes a Wake to
// what notifies changes (the studio's Subscribe, a server's events) and
// waits with Until, Holds or Wait, which look again on every signal and,
// for what changes without notifying (a file, another process), every
// few milliseconds, up to a deadline.

// Wake is a change signal: a subscriber calls Signal on every change, and
// Until waits on it. A signal sent while nobody waits is kept (one).
type Wake chan struct{}

// NewWake returns a Wake that keeps one pending signal.
func NewWake() Wake { return make(Wake, 1) }

// Signal notes a change without blocking.
func (w Wake) Signal() {
	select {
	case w <- struct{}{}:
	default:
	}
}

// Timeout bounds every wait: generous, so that a loaded machine does not
// fail a test, while a hang still ends.
const Timeout = 30 * time.Second

// recheck is how often a wait looks again when no signal comes: for what
// changes without notifying (work queued on a Queue, a file, a clock).
const recheck = 10 * time.Millisecond

// Until reports whether cond holds within Timeout. It checks at once,
// again on each signal on wake (nil: there is none) and every recheck.
func Until(wake Wake, cond func() bool) bool { return Within(Timeout, wake, cond) }

// Holds reports whether cond holds throughout d, checking as Until does:
// for what must not happen meanwhile.
func Holds(d time.Duration, wake Wake, cond func() bool) bool {
	return !Within(d, wake, func() bool { return !cond() })
}

// Wait fails t unless cond holds within Timeout (see Until), naming what
// never happened.
func Wait(t testing.TB, what string, wake Wake, cond func() bool) {
	t.Helper()
	if !Until(wake, cond) {
		t.Fatalf("timed out after %v waiting for %s", Timeout, what)
	}
}

// Within reports whether cond holds within timeout, checking as Until
// does: for a wait that needs a bound other than Timeout.
func Within(timeout time.Duration, wake Wake, cond func() bool) bool {
	deadline := time.After(timeout)
	tick := time.NewTicker(recheck)
	defer tick.Stop()
	for !cond() {
		select {
		case <-wake:
		case <-tick.C:
		case <-deadline:
			return cond()
		}
	}
	return true
}
