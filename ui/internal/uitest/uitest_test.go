package uitest

import (
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// TestQueueRunsWhatItsWorkQueues: Drain runs queued functions in order,
// including those they queue, and counts them.
func TestQueueRunsWhatItsWorkQueues(t *testing.T) {
	var q Queue
	var got []int
	q.Go(func() { got = append(got, 1); q.Go(func() { got = append(got, 3) }) })
	q.Go(func() { got = append(got, 2) })
	if n := q.Drain(); n != 3 || len(got) != 3 || got[0] != 1 || got[1] != 2 || got[2] != 3 {
		t.Fatalf("Drain ran %d: %v", n, got)
	}
	if n := q.Drain(); n != 0 {
		t.Fatalf("an empty queue ran %d", n)
	}
}

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
	if within(30*time.Millisecond, wake, func() bool { return false }) {
		t.Fatal("within held for a condition that never holds")
	}
	if d := time.Since(start); d < 30*time.Millisecond {
		t.Fatalf("within gave up after %v, before its timeout", d)
	}
	if !Holds(20*time.Millisecond, wake, func() bool { return v.Load() == 2 }) {
		t.Fatal("Holds failed for a condition that held")
	}
	go func() { v.Store(3); wake.Signal() }()
	if Holds(Timeout, wake, func() bool { return v.Load() == 2 }) {
		t.Fatal("Holds missed the condition breaking")
	}
}

// TestFilesKeysBySlashPath: Files reads nested files under their
// slash-separated relative paths and lists no folders.
func TestFilesKeysBySlashPath(t *testing.T) {
	dir := t.TempDir()
	WriteFile(t, dir, "a.txt", []byte("a"))
	if err := os.MkdirAll(filepath.Join(dir, "sub", "deeper"), 0o755); err != nil {
		t.Fatal(err)
	}
	WriteFile(t, filepath.Join(dir, "sub", "deeper"), "b.bin", []byte{1, 2})
	got := Files(t, dir)
	if len(got) != 2 || string(got["a.txt"]) != "a" || len(got["sub/deeper/b.bin"]) != 2 {
		t.Fatalf("files %v", got)
	}
}
