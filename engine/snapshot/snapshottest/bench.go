package snapshottest

import (
	"testing"
	"time"
)

// Bench runs op for every b.Loop iteration, timing op but not the cleanup
// it returns (which may be nil), and reports the CPU time per operation
// (all threads) and the fastest single operation: on a loaded shared
// machine the mean wall time says little, while these two are stable.
func Bench(b *testing.B, op func() (cleanup func())) {
	b.ResetTimer()
	start, fastest := CPUTime(), time.Duration(1<<62)
	for b.Loop() {
		t0 := time.Now()
		cleanup := op()
		fastest = min(fastest, time.Since(t0))
		if cleanup != nil {
			cleanup()
		}
	}
	if start >= 0 && b.N > 0 {
		b.ReportMetric(float64(CPUTime()-start)/float64(b.N)/1e6, "cpu-ms/op")
	}
	b.ReportMetric(float64(fastest)/1e6, "fastest-ms")
}
