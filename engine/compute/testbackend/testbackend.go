// Package testbackend picks the compute backend of engine tests: the CPU
// reference by default, or the Metal backend with H3_TEST_BACKEND=metal —
// the GPU on macOS (`make parity`), and on Linux the same Metal op layer with
// its kernels executed on the CPU by the MSL-on-CPU harness (slow; for
// checking model-level parity of the Metal kernels). Parity tests write
// testbackend.New(t) where they would write cpu.New(cpu.Options{}).
package testbackend

import (
	"os"
	"testing"

	"h3studio/engine/compute"
	"h3studio/engine/compute/cpu"
)

// New returns the backend selected by H3_TEST_BACKEND ("" or "cpu", or
// "metal"); without a Metal device the test is skipped, loudly.
func New(t testing.TB) compute.Backend {
	t.Helper()
	return newBackend(t, 0)
}

// Threads returns the backends of a parity test that also checks that the
// CPU reference does not depend on its thread count: one CPU backend per
// count given, or the selected Metal backend once.
func Threads(t testing.TB, counts ...int) []compute.Backend {
	t.Helper()
	if Metal() {
		return []compute.Backend{newBackend(t, 0)}
	}
	var bs []compute.Backend
	for _, n := range counts {
		bs = append(bs, newBackend(t, n))
	}
	return bs
}

// Metal reports whether H3_TEST_BACKEND selects the Metal backend.
func Metal() bool { return os.Getenv("H3_TEST_BACKEND") == "metal" }

func newBackend(t testing.TB, threads int) compute.Backend {
	t.Helper()
	switch v := os.Getenv("H3_TEST_BACKEND"); v {
	case "", "cpu":
		return cpu.New(cpu.Options{Threads: threads})
	case "metal":
		b := openMetal(t)
		t.Cleanup(func() {
			if err := b.Close(); err != nil {
				t.Errorf("closing the Metal backend: %v", err)
			}
		})
		return b
	default:
		t.Fatalf("H3_TEST_BACKEND=%q: want cpu or metal", v)
		return nil
	}
}
