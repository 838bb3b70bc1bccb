package denoise

import (
	"errors"
	"strings"
	"testing"

	"h3studio/engine/dit"
)

func TestValidateNamesTheRule(t *testing.T) {
	cases := []struct {
		c    Controls
		rule string
	}{
		{Controls{Steps: 1}, "steps must be in [2, 1000]"},
		{Controls{Steps: 1001}, "steps must be in [2, 1000]"},
		{Controls{Reuse: 4}, "reuse must be in [1, 3]"},
		{Controls{Layers: 34}, "layers must be in [35, 50]"},
		{Controls{Layers: 51}, "layers must be in [35, 50]"},
		{Controls{CoreReuse: 7}, "core-reuse must be in [1, 6]"},
		{Controls{Reuse: 2, CoreReuse: 4}, "reuse and core-reuse cannot be combined"},
	}
	for _, c := range cases {
		err := c.c.Normalize().Validate()
		var re *RuleError
		if !errors.As(err, &re) || re.Rule != c.rule {
			t.Errorf("%+v: err %v, want rule %q", c.c, err, c.rule)
		}
	}
	for _, ok := range []Controls{{}, {Steps: 2}, {Steps: 1000, Reuse: 3, Layers: 35}, {CoreReuse: 6, TokenReduction: true, Layers: 40}} {
		if err := ok.Normalize().Validate(); err != nil {
			t.Errorf("%+v rejected: %v", ok, err)
		}
	}
}

func TestPlanStepsForwards(t *testing.T) {
	cases := []struct {
		c        Controls
		forwards int
	}{
		{Controls{Steps: 20}, 20},
		{Controls{Steps: 20, Reuse: 2}, 11}, // {0,2,…,18,19}
		{Controls{Steps: 20, Reuse: 3}, 8},  // {0,3,…,18,19}
		{Controls{Steps: 50, Reuse: 3}, 18},
		{Controls{Steps: 2, Reuse: 3}, 2},
	}
	for _, c := range cases {
		p := PlanSteps(c.c.Normalize(), 50)
		if got := Forwards(p); got != c.forwards {
			t.Errorf("%+v: %d forwards, want %d", c.c, got, c.forwards)
		}
		if !p[0].Evaluate || !p[len(p)-1].Evaluate {
			t.Errorf("%+v: the first and last steps must evaluate", c.c)
		}
	}
}

func TestPlanStepsCoreReuse(t *testing.T) {
	p := PlanSteps(Controls{Steps: 10, CoreReuse: 4}.Normalize(), 50)
	var got []string
	for _, s := range p {
		got = append(got, map[dit.CoreMode]string{dit.CoreRun: "run", dit.CoreCache: "cache", dit.CoreReuse: "reuse"}[s.Core])
	}
	// Forward 0 caches, every 4th forward and the last step refresh.
	want := "cache reuse reuse reuse cache reuse reuse reuse cache cache"
	if strings.Join(got, " ") != want {
		t.Errorf("core modes %v, want %s", got, want)
	}
}

func TestSpansAndTokenReduction(t *testing.T) {
	early, late := Spans(50)
	if early != (dit.TokenSpan{Begin: 4, End: 40}) || late != (dit.TokenSpan{Begin: 4, End: 30}) {
		t.Errorf("released spans %v %v, want [4,40) and [4,30)", early, late)
	}
	early, late = Spans(3)
	if early != (dit.TokenSpan{Begin: 1, End: 2}) || late != (dit.TokenSpan{Begin: 1, End: 2}) {
		t.Errorf("3-block spans %v %v, want [1,2)", early, late)
	}
	p := PlanSteps(Controls{Steps: 12, TokenReduction: true, CoreReuse: 3}.Normalize(), 50)
	for i, s := range p {
		switch {
		case s.Core == dit.CoreReuse && s.Reduce != nil:
			t.Errorf("step %d reduces tokens without running the blocks", i)
		case s.Core != dit.CoreReuse && s.Reduce == nil:
			t.Errorf("step %d runs the blocks without token reduction", i)
		case s.Reduce != nil && i < 10 && s.Reduce.End != 40, s.Reduce != nil && i >= 10 && s.Reduce.End != 30:
			t.Errorf("step %d span %v", i, *s.Reduce)
		}
	}
}
