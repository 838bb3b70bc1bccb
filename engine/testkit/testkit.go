// Package testkit holds what the component tests share: the relative L2
// error and the largest absolute difference of two vectors (the measures
// the parity tolerances are stated in), readers of fixtures and test files,
// small test inputs (a size-only PNG), the locators of the test peers and
// tools installed outside the module (the Python virtualenv, the npm Qwen3
// vocabulary, ffmpeg, node) and the runner of a test's child process.
package testkit

import "math"

// Float is the element type of the vectors RelL2 and MaxAbs compare.
type Float interface{ ~float32 | ~float64 }

// RelL2 is ‖got − want‖₂ / ‖want‖₂ (the absolute ‖got − want‖₂ when want is
// all zeros), summed in float64. got must be at least as long as want.
func RelL2[G, W Float](got []G, want []W) float64 {
	var num, den float64
	for i := range want {
		d := float64(got[i]) - float64(want[i])
		num += d * d
		den += float64(want[i]) * float64(want[i])
	}
	if den == 0 {
		return math.Sqrt(num)
	}
	return math.Sqrt(num / den)
}

// MaxAbs is the largest |got[i] − want[i]|.
func MaxAbs[G, W Float](got []G, want []W) float64 {
	var m float64
	for i := range want {
		m = max(m, math.Abs(float64(got[i])-float64(want[i])))
	}
	return m
}
