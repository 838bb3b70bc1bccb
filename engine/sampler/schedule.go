package sampler

import (
	"fmt"
	"math"
)

// Released shifts (model_index.json _minimax_h3.sigma_shift_scales).
const (
	VideoShift = 12.0
	AudioShift = 3.0
)

// KeyframeNoiseLevel is the timestep condition rows are noised to and held at
// (keyframe_noise_aug): float32(0.999) = 0.999000012874603.
const KeyframeNoiseLevel float32 = 0.999

// MaxPoints bounds a grid's length (a guard against absurd requests, far
// above any useful step count).
const MaxPoints = 1 << 20

// Linspace is torch.linspace(1, 0, n, dtype=float32) on the CPU, exactly:
// step = float32(−1/(n−1)); the first half (i < n/2) is fma(step, i, 1), the
// second half 0 − step·(n−1−i), each rounded once to float32.
func Linspace(n int) []float32 {
	if n < 1 {
		return nil
	}
	out := make([]float32, n)
	if n == 1 {
		out[0] = 1
		return out
	}
	step := float32(-1) / float32(n-1)
	half := n / 2
	for i := range out {
		if i < half {
			out[i] = fma32(step, float32(i), 1)
		} else {
			out[i] = 0 - float32(step*float32(n-1-i))
		}
	}
	return out
}

// fma32 is a float32 fused multiply-add with one rounding. The float64 FMA is
// exact here (a·b has at most 48 significant bits and the sum stays within 53
// for every grid length up to MaxPoints), so the float32 conversion is the
// only rounding.
func fma32(a, b, c float32) float32 {
	return float32(math.FMA(float64(a), float64(b), float64(c)))
}

// ShiftSigma applies the exponential shift σ' = s·σ / (1 + (s−1)·σ) with the
// reference's float32 operations: num = s·σ, den = 1 + (s−1)·σ, σ' = num/den.
func ShiftSigma(sigma, shift float32) float32 {
	num := float32(shift * sigma)
	den := 1 + float32((shift-1)*sigma)
	return num / den
}

// Schedule is one modality's grid.
type Schedule struct {
	Shift float32
	// Sigmas holds the grid points, the terminal 0 included, consecutive
	// duplicates collapsed.
	Sigmas []float32
	// Timesteps holds t_i = 1 − σ_i for every point but the last: one model
	// evaluation each.
	Timesteps []float32
}

// Steps is the number of model evaluations.
func (s *Schedule) Steps() int { return len(s.Timesteps) }

// Build is MiniMaxH3Scheduler.set_timesteps(points): the base grid
// Linspace(points) pushed through the shift, duplicates collapsed
// (torch.unique_consecutive), timesteps = 1 − σ. points counts grid points
// including the terminal 0, so the schedule has points−1 evaluations.
func Build(points int, shift float64) (*Schedule, error) {
	if points < 2 || points > MaxPoints {
		return nil, fmt.Errorf("sampler: a grid needs 2 … %d points, got %d", MaxPoints, points)
	}
	return shifted(Linspace(points), shift)
}

// ForSteps builds the grid of `steps` model evaluations (h3.c's --steps; the
// reference's num_inference_steps = steps+1).
func ForSteps(steps int, shift float64) (*Schedule, error) {
	if steps < 1 {
		return nil, fmt.Errorf("sampler: at least one denoising step is needed, got %d", steps)
	}
	return Build(steps+1, shift)
}

// FromBase shifts an explicit base schedule (a distilled checkpoint's
// _minimax_h3.base_schedule: values in [0, 1] starting at 1, strictly
// decreasing, ending at 0).
func FromBase(base []float64, shift float64) (*Schedule, error) {
	if len(base) < 2 || len(base) > MaxPoints {
		return nil, fmt.Errorf("sampler: a base schedule needs 2 … %d points, got %d", MaxPoints, len(base))
	}
	b := make([]float32, len(base))
	for i, v := range base {
		if math.IsNaN(v) || v < 0 || v > 1 {
			return nil, fmt.Errorf("sampler: base schedule value %d is %v, outside [0, 1]", i, v)
		}
		b[i] = float32(v)
		if i > 0 && !(b[i] < b[i-1]) {
			return nil, fmt.Errorf("sampler: base schedule is not strictly decreasing at index %d (%v after %v)", i, v, base[i-1])
		}
	}
	if b[0] != 1 || b[len(b)-1] != 0 {
		return nil, fmt.Errorf("sampler: a base schedule must start at 1 and end at 0, got %v … %v", base[0], base[len(base)-1])
	}
	return shifted(b, shift)
}

func shifted(base []float32, shift float64) (*Schedule, error) {
	if !(shift > 0) || math.IsInf(shift, 0) {
		return nil, fmt.Errorf("sampler: shift must be positive, got %v", shift)
	}
	s := &Schedule{Shift: float32(shift)}
	for _, b := range base {
		v := ShiftSigma(b, s.Shift)
		if n := len(s.Sigmas); n > 0 && s.Sigmas[n-1] == v {
			continue
		}
		s.Sigmas = append(s.Sigmas, v)
	}
	if len(s.Sigmas) < 2 {
		return nil, fmt.Errorf("sampler: the shifted grid collapsed to %d point(s)", len(s.Sigmas))
	}
	s.Timesteps = make([]float32, len(s.Sigmas)-1)
	for i := range s.Timesteps {
		s.Timesteps[i] = 1 - s.Sigmas[i]
	}
	return s, nil
}

// Pair is the video and audio schedules of one request, stepped in lockstep.
type Pair struct{ Video, Audio *Schedule }

// NewPair builds both schedules for `steps` evaluations with the given shifts
// (VideoShift and AudioShift for the released model). It fails if
// deduplication left the two with different lengths (never the case for the
// released shifts below 20 000 steps; ERRATA F12).
func NewPair(steps int, videoShift, audioShift float64) (*Pair, error) {
	v, err := ForSteps(steps, videoShift)
	if err != nil {
		return nil, err
	}
	a, err := ForSteps(steps, audioShift)
	if err != nil {
		return nil, err
	}
	if v.Steps() != a.Steps() {
		return nil, fmt.Errorf("sampler: %d steps give %d video but %d audio evaluations after deduplication", steps, v.Steps(), a.Steps())
	}
	return &Pair{Video: v, Audio: a}, nil
}

// Steps is the number of model evaluations.
func (p *Pair) Steps() int { return p.Video.Steps() }
