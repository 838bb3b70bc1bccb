package denoise

import (
	"fmt"
	"math"

	"h3studio/engine/dit"
	"h3studio/engine/sampler"
)

// Controls are h3.c's speed controls (H3-DIT §13). The zero value of each
// field means its exact-path default; Normalize fills them in.
type Controls struct {
	// Steps is the number of denoising passes (model evaluations without
	// reuse), 2…1000; the sigma grid has Steps+1 points. Default 20.
	Steps int
	// Reuse evaluates the model only at step 0, the last step and every
	// step divisible by Reuse (1…3); skipped steps extrapolate the velocity.
	Reuse int
	// Layers is the number of active blocks of the released 50-block stack
	// (35…50), chosen by gate rank (dit.SelectBlocks; scaled for other
	// stack depths).
	Layers int
	// CoreReuse runs the block stack only on every CoreReuse-th forward
	// (1…6) and reuses its cached residual in between.
	CoreReuse int
	// TokenReduction pools horizontally adjacent target-video tokens inside
	// the middle blocks (see Spans).
	TokenReduction bool
	// VideoShift and AudioShift are the sigma shifts; 0 is the released
	// sampler.VideoShift / sampler.AudioShift (12, 3). The Turbo LoRAs
	// use 12 / 3 at 544p and 6 / 3 at 768p.
	VideoShift, AudioShift float64
}

// shifts returns the controls' shifts with the released defaults filled in.
func (c Controls) shifts() (video, audio float64) {
	video, audio = c.VideoShift, c.AudioShift
	if video == 0 {
		video = sampler.VideoShift
	}
	if audio == 0 {
		audio = sampler.AudioShift
	}
	return video, audio
}

// Limits of the controls (h3.c h3_validate_params).
const (
	MinSteps, MaxSteps        = 2, 1000
	DefaultSteps              = 20
	MaxReuse                  = 3
	MinLayers, MaxLayers      = 35, 50
	MaxCoreReuse              = 6
	tokenReductionEarlySteps  = 10
	releasedBlocks            = 50
	releasedReductionBegin    = 4
	releasedReductionEnd      = 30
	releasedReductionEarlyEnd = 40
)

// Normalize fills defaults: 20 steps, reuse 1, 50 layers, core reuse 1.
func (c Controls) Normalize() Controls {
	if c.Steps == 0 {
		c.Steps = DefaultSteps
	}
	if c.Reuse == 0 {
		c.Reuse = 1
	}
	if c.Layers == 0 {
		c.Layers = MaxLayers
	}
	if c.CoreReuse == 0 {
		c.CoreReuse = 1
	}
	return c
}

// RuleError names the rule a request broke.
type RuleError struct {
	Rule string // e.g. "steps must be in [2, 1000]"
	Have string // what the request had
}

func (e *RuleError) Error() string { return "denoise: " + e.Rule + " (have " + e.Have + ")" }

// Validate checks each control's range and their combinations (after
// Normalize).
func (c Controls) Validate() error {
	switch {
	case c.Steps < MinSteps || c.Steps > MaxSteps:
		return &RuleError{"steps must be in [2, 1000]", fmt.Sprint(c.Steps)}
	case c.Reuse < 1 || c.Reuse > MaxReuse:
		return &RuleError{"reuse must be in [1, 3]", fmt.Sprint(c.Reuse)}
	case c.Layers < MinLayers || c.Layers > MaxLayers:
		return &RuleError{"layers must be in [35, 50]", fmt.Sprint(c.Layers)}
	case c.CoreReuse < 1 || c.CoreReuse > MaxCoreReuse:
		return &RuleError{"core-reuse must be in [1, 6]", fmt.Sprint(c.CoreReuse)}
	case c.Reuse > 1 && c.CoreReuse > 1:
		return &RuleError{"reuse and core-reuse cannot be combined", fmt.Sprintf("reuse %d, core-reuse %d", c.Reuse, c.CoreReuse)}
	}
	return nil
}

// Spans returns the token-reduction block spans of a stack of n blocks:
// h3.c reduces blocks [4, 30) of 50, and [4, 40) during the first ten steps.
// For n ≠ 50 the block numbers scale with n (rounded), keeping at least one
// full-resolution block before the span and a non-empty span.
func Spans(n int) (early, late dit.TokenSpan) {
	scale := func(b int) int { return int(math.Round(float64(b) * float64(n) / releasedBlocks)) }
	begin := min(max(1, scale(releasedReductionBegin)), n-1)
	end := min(max(begin+1, scale(releasedReductionEnd)), n)
	earlyEnd := min(max(end, scale(releasedReductionEarlyEnd)), n)
	return dit.TokenSpan{Begin: begin, End: earlyEnd}, dit.TokenSpan{Begin: begin, End: end}
}

// StepPlan is what one denoising step does.
type StepPlan struct {
	// Evaluate is false for a step whose velocity is extrapolated (reuse).
	Evaluate bool
	// Core is the block-stack mode of the forward (core reuse).
	Core dit.CoreMode
	// Reduce is the token-reduction span of the forward, or nil.
	Reduce *dit.TokenSpan
}

// PlanSteps lays out the steps of a request with controls c (normalized and
// valid) on a stack of n blocks, as h3.c schedules them:
//
//   - reuse N evaluates step 0, the last step and every step divisible by N
//     (sampler.EvaluatedSteps);
//   - core reuse N runs the block stack on the first forward, every N-th
//     forward and the last step (caching its residual), and reuses the
//     residual otherwise;
//   - token reduction applies to every forward that runs the block stack,
//     with the early span during the first ten steps.
func PlanSteps(c Controls, n int) []StepPlan {
	plan := make([]StepPlan, c.Steps)
	early, late := Spans(n)
	forwards := 0
	evaluate, err := sampler.EvaluatedSteps(c.Steps, c.Reuse)
	if err != nil {
		panic(err) // c was validated
	}
	for s := range plan {
		p := &plan[s]
		p.Evaluate = evaluate[s]
		if !p.Evaluate {
			continue
		}
		if c.CoreReuse > 1 {
			if forwards == 0 || forwards%c.CoreReuse == 0 || s == c.Steps-1 {
				p.Core = dit.CoreCache
			} else {
				p.Core = dit.CoreReuse
			}
		}
		if c.TokenReduction && p.Core != dit.CoreReuse {
			span := late
			if s < tokenReductionEarlySteps {
				span = early
			}
			p.Reduce = &span
		}
		forwards++
	}
	return plan
}

// Forwards counts the evaluated steps of a plan.
func Forwards(plan []StepPlan) int {
	n := 0
	for _, p := range plan {
		if p.Evaluate {
			n++
		}
	}
	return n
}
