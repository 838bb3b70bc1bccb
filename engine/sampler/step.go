package sampler

import "fmt"

// EulerStep is MiniMaxH3Scheduler.step for one modality, in float32 with the
// reference's operation order:
//
//	σ_t  = 1 − t                (σ recovered from the conditioning timestep)
//	x0   = x + σ_t·v            (data-ward velocity: note the plus)
//	r    = σ_next / σ           (σ, σ_next from the grid)
//	x'   = r·x + (1 − r)·x0
//
// At the last step σ_next = 0, so x' = x0. dst may alias x. Only generated
// rows go through it; condition rows stay pinned.
func EulerStep(dst, x, v []float32, t, sigma, sigmaNext float32) {
	if len(dst) != len(x) || len(v) != len(x) {
		panic(fmt.Sprintf("sampler: EulerStep lengths dst %d, x %d, v %d", len(dst), len(x), len(v)))
	}
	sigmaT := 1 - t
	r := sigmaNext / sigma
	omr := 1 - r
	for i, xi := range x {
		x0 := xi + float32(sigmaT*v[i])
		dst[i] = float32(r*xi) + float32(omr*x0)
	}
}

// Step applies evaluation i of the schedule to x with velocity v.
func (s *Schedule) Step(i int, dst, x, v []float32) {
	if i < 0 || i >= s.Steps() {
		panic(fmt.Sprintf("sampler: step %d of a %d-step schedule", i, s.Steps()))
	}
	EulerStep(dst, x, v, s.Timesteps[i], s.Sigmas[i], s.Sigmas[i+1])
}

// ScaleNoise is MiniMaxH3Scheduler.scale_noise, x_t = t·x + (1 − t)·noise in
// float32 (t held as float32 and 1 − t computed in float32, ERRATA F4).
// Keyframes and reference images are noised with t = KeyframeNoiseLevel.
// dst may alias x or noise.
func ScaleNoise(dst, x, noise []float32, t float32) {
	if len(dst) != len(x) || len(noise) != len(x) {
		panic(fmt.Sprintf("sampler: ScaleNoise lengths dst %d, x %d, noise %d", len(dst), len(x), len(noise)))
	}
	omt := 1 - t
	for i, xi := range x {
		dst[i] = float32(t*xi) + float32(omt*noise[i])
	}
}
