package computetest

import (
	"testing"

	"h3studio/engine/compute/cpu"
)

// TestCPU runs the suite on the CPU backend with several threads against the
// single-threaded reference: the reference must agree with itself bit for bit
// whatever the thread count, and the suite's checks must hold for it.
func TestCPU(t *testing.T) {
	RunAll(t, cpu.New(cpu.Options{Threads: 3}), Options{})
}
