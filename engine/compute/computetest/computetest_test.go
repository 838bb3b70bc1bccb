package computetest

import (
	"testing"

	"h3studio/engine/compute"
	"h3studio/engine/compute/cpu"
)

// TestCPU runs the suite on the CPU backend with several threads against the
// single-threaded reference: the reference must agree with itself bit for bit
// whatever the thread count, and the suite's checks must hold for it.
func TestCPU(t *testing.T) {
	RunAll(t, cpu.New(cpu.Options{Threads: 3}), Options{})
}

// TestQuantStepCPUOracles runs QuantStepCheck (the quantized product
// within the quantization's error of the product by the unquantized
// weight) on the CPU's blocked GEMM, which dequantizes panels as it packs
// them, and on its dot-product oracle, which dequantizes whole rows; RunAll
// runs it on every backend.
func TestQuantStepCPUOracles(t *testing.T) {
	for _, f := range []compute.QuantFormat{compute.Int8, compute.Int4} {
		for _, o := range []compute.Oracles{0, compute.Oracles(0).With(cpu.OracleDotMatMul)} {
			if err := QuantStepCheck(cpu.New(cpu.Options{Threads: 2, Oracles: o}), f, 19, 40, 320, 9); err != nil {
				t.Errorf("oracles %v: %v", o, err)
			}
		}
	}
}
