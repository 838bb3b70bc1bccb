package testkit

import (
	"sync/atomic"
	"testing"
	"time"
)

// TestUntilAndHolds: Until sees a change signalled on its wake at once and
// one made silently on a recheck, a wait gives up after its timeout, and
// Holds fails when its condition breaks meanwhile.
func TestUntilAndHolds(t *testing.T) {
	wake := NewWake()
	var v atomic.Int32
	go func() { v.Store(1); wake.Signal() }()
	if !Until(wake, func() bool { return v.Load() == 1 }) {
		t.Fatal("a signalled change was not seen")
	}
	go func() { time.Sleep(5 * time.Millisecond); v.Store(2) }() // no signal
	if !Until(nil, func() bool { return v.Load() == 2 }) {
		t.Fatal("a silent change was not seen on a recheck")
	}
	start := time.Now()
	if Within(30*time.Millisecond, wake, func() bool { return false }) {
		t.Fatal("Within held for a condition that never holds")
	}
	if d := time.Since(start); d < 30*time.Millisecond {
		t.Fatalf("Within gave up after %v, before its timeout", d)
	}
	if !Holds(20*time.Millisecond, wake, func() bool { return v.Load() == 2 }) {
		t.Fatal("Holds failed for a condition that held")
	}
	go func() { v.Store(3); wake.Signal() }()
	if Holds(Timeout, wake, func() bool { return v.Load() == 2 }) {
		t.Fatal("Holds missed the condition breaking")
	}
}
