package denoise

import (
	"fmt"
	"math"
)

// TEMPORARY: the subset of engine/sampler (branch foundation, not yet on
// main) the loop needs, with the same names and semantics (H3-DIT §11.2–11.3
// with ERRATA F4). Delete this file and import engine/sampler once it lands.

const (
	videoShift         = 12.0
	audioShift         = 3.0
	keyframeNoiseLevel = float32(0.999)
)

type schedule struct {
	Shift     float32
	Sigmas    []float32
	Timesteps []float32
}

func (s *schedule) Steps() int { return len(s.Timesteps) }

// linspace is torch.linspace(1, 0, n, dtype=float32): step = f32(−1/(n−1));
// the first half fma(step, i, 1), the second 0 − step·(n−1−i).
func linspace(n int) []float32 {
	out := make([]float32, n)
	if n == 1 {
		out[0] = 1
		return out
	}
	step := float32(-1.0 / float64(n-1))
	half := n / 2
	for i := range out {
		if i < half {
			out[i] = float32(math.FMA(float64(step), float64(i), 1))
		} else {
			out[i] = 0 - float32(step*float32(n-1-i))
		}
	}
	return out
}

func shiftSigma(sigma, shift float32) float32 {
	num := float32(shift * sigma)
	den := 1 + float32((shift-1)*sigma)
	return num / den
}

func forSteps(steps int, shift float64) (*schedule, error) {
	if steps < 1 {
		return nil, fmt.Errorf("denoise: %d steps", steps)
	}
	s := &schedule{Shift: float32(shift)}
	for _, b := range linspace(steps + 1) {
		v := shiftSigma(b, s.Shift)
		if n := len(s.Sigmas); n > 0 && s.Sigmas[n-1] == v {
			continue
		}
		s.Sigmas = append(s.Sigmas, v)
	}
	s.Timesteps = make([]float32, len(s.Sigmas)-1)
	for i := range s.Timesteps {
		s.Timesteps[i] = 1 - s.Sigmas[i]
	}
	return s, nil
}

type schedulePair struct{ Video, Audio *schedule }

func newPair(steps int) (*schedulePair, error) {
	v, err := forSteps(steps, videoShift)
	if err != nil {
		return nil, err
	}
	a, err := forSteps(steps, audioShift)
	if err != nil {
		return nil, err
	}
	if v.Steps() != a.Steps() {
		return nil, fmt.Errorf("denoise: %d steps give %d video but %d audio evaluations", steps, v.Steps(), a.Steps())
	}
	return &schedulePair{Video: v, Audio: a}, nil
}

// step is MiniMaxH3Scheduler.step: x0 = x + (1−t)·v; r = σ'/σ;
// x' = r·x + (1−r)·x0, float32 with the reference's operation order.
func (s *schedule) step(i int, dst, x, v []float32) {
	t, sigma, next := s.Timesteps[i], s.Sigmas[i], s.Sigmas[i+1]
	sigmaT := 1 - t
	r := next / sigma
	omr := 1 - r
	for j, xi := range x {
		x0 := xi + float32(sigmaT*v[j])
		dst[j] = float32(r*xi) + float32(omr*x0)
	}
}

// scaleNoise is t·x + (1 − t)·noise in float32.
func scaleNoise(dst, x, noise []float32, t float32) {
	omt := 1 - t
	for i, xi := range x {
		dst[i] = float32(t*xi) + float32(omt*noise[i])
	}
}

// extrapolationRatio is h3.c's clamp((σ_s − σ_L)/(σ_L − σ_P), −2, 2).
func extrapolationRatio(sigmaS, sigmaL, sigmaP float32) float32 {
	den := sigmaL - sigmaP
	if den == 0 {
		return 0
	}
	return min(max((sigmaS-sigmaL)/den, -2), 2)
}

// extrapolate writes dst = last + ρ·(last − prev).
func extrapolate(dst, last, prev []float32, rho float32) {
	for i, l := range last {
		dst[i] = l + float32(rho*(l-prev[i]))
	}
}
