package sampler

import "fmt"

// Velocity reuse (h3.c --reuse N, spec H3-DIT.md §13.1): only some steps run
// the model; the others extrapolate the velocity linearly in σ from the last
// two evaluated steps and then take the normal Euler step.

// MaxReuse is the largest reuse interval (h3.c accepts 1 … 3).
const MaxReuse = 3

// ReuseStep says how one step gets its velocity.
type ReuseStep struct {
	// Evaluate is true when the step runs the model.
	Evaluate bool
	// Last and Previous are the evaluated steps a skipped step extrapolates
	// from (the most recent and the one before it); Previous is −1 when there
	// is only one, and the velocity of Last is reused unchanged.
	Last, Previous int
	// VideoRatio and AudioRatio are ρ = clamp((σ_s − σ_L)/(σ_L − σ_P), −2, 2)
	// on each modality's grid (0 when Evaluate or Previous < 0, or when
	// σ_L = σ_P): v_s = v_L + ρ·(v_L − v_P).
	VideoRatio, AudioRatio float32
}

// EvaluatedSteps lists which of `steps` steps run the model for reuse
// interval n (1 … MaxReuse): step 0, the last step, and every multiple of n.
// For 20 steps n = 2 gives 11 forwards and n = 3 gives 8.
func EvaluatedSteps(steps, n int) ([]bool, error) {
	if n < 1 || n > MaxReuse {
		return nil, fmt.Errorf("sampler: reuse interval %d: must be 1 … %d", n, MaxReuse)
	}
	if steps < 1 {
		return nil, fmt.Errorf("sampler: %d steps", steps)
	}
	ev := make([]bool, steps)
	for s := range ev {
		ev[s] = n == 1 || s == 0 || s == steps-1 || s%n == 0
	}
	return ev, nil
}

// PlanReuse plans reuse interval n over a request's schedules: a pure
// function of the σ grids.
func PlanReuse(p *Pair, n int) ([]ReuseStep, error) {
	ev, err := EvaluatedSteps(p.Steps(), n)
	if err != nil {
		return nil, err
	}
	plan := make([]ReuseStep, len(ev))
	last, prev := -1, -1
	for s, e := range ev {
		if e {
			plan[s] = ReuseStep{Evaluate: true, Last: -1, Previous: -1}
			last, prev = s, last
			continue
		}
		st := ReuseStep{Last: last, Previous: prev}
		if prev >= 0 {
			v, a := p.Video.Sigmas, p.Audio.Sigmas
			st.VideoRatio = ExtrapolationRatio(v[s], v[last], v[prev])
			st.AudioRatio = ExtrapolationRatio(a[s], a[last], a[prev])
		}
		plan[s] = st
	}
	return plan, nil
}

// ExtrapolationRatio is h3.c's extrapolation_ratio in float32:
// (σ_s − σ_L)/(σ_L − σ_P), 0 when the denominator is 0, clamped to [−2, 2].
func ExtrapolationRatio(sigmaS, sigmaL, sigmaP float32) float32 {
	den := sigmaL - sigmaP
	if den == 0 {
		return 0
	}
	r := (sigmaS - sigmaL) / den
	return min(max(r, -2), 2)
}

// Extrapolate writes dst = last + ρ·(last − prev) in float32 (the product
// rounded before the addition). dst may alias last or prev.
func Extrapolate(dst, last, prev []float32, rho float32) {
	if len(dst) != len(last) || len(prev) != len(last) {
		panic(fmt.Sprintf("sampler: Extrapolate lengths dst %d, last %d, prev %d", len(dst), len(last), len(prev)))
	}
	for i, l := range last {
		dst[i] = l + float32(rho*(l-prev[i]))
	}
}
