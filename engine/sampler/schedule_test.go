package sampler

import (
	"fmt"
	"math"
	"slices"
	"testing"
)

// Spec H3-DIT.md §11.2: the E = 20 table (N = 21 points), printed to 9 digits.
func TestGridE20(t *testing.T) {
	video := []float64{1, 0.995633185, 0.990825653, 0.985507309, 0.979591846, 0.972972989, 0.965517223, 0.957055211,
		0.947368383, 0.936170220, 0.923076928, 0.907562971, 0.888888896, 0.865979373, 0.837209284, 0.800000012,
		0.750000000, 0.679245293, 0.571428597, 0.387096792, 0}
	audio := []float64{1, 0.982758582, 0.964285672, 0.944444478, 0.923076987, 0.899999976, 0.874999940, 0.847826064,
		0.818181813, 0.785714388, 0.750000000, 0.710526288, 0.666666687, 0.617646992, 0.562500000, 0.500000000,
		0.428571463, 0.346153885, 0.250000000, 0.136363640, 0}
	p, err := NewPair(20, VideoShift, AudioShift)
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		s    *Schedule
		want []float64
	}{"video": {p.Video, video}, "audio": {p.Audio, audio}} {
		if len(c.s.Sigmas) != 21 || c.s.Steps() != 20 {
			t.Fatalf("%s: %d sigmas, %d steps", name, len(c.s.Sigmas), c.s.Steps())
		}
		for i, w := range c.want {
			if math.Abs(float64(c.s.Sigmas[i])-w) > 5e-10 {
				t.Errorf("%s σ_%d = %.9f, want %.9f", name, i, c.s.Sigmas[i], w)
			}
			if i < 20 && c.s.Timesteps[i] != 1-c.s.Sigmas[i] {
				t.Errorf("%s t_%d = %v", name, i, c.s.Timesteps[i])
			}
		}
	}
	// E = 4: video 1, 36/37, 12/13, 4/5, 0; audio 1, 9/10, 3/4, 1/2, 0.
	p4, _ := NewPair(4, VideoShift, AudioShift)
	want := fmt.Sprint([]float32{1, 36.0 / 37, 12.0 / 13, 0.8, 0}, []float32{1, 0.9, 0.75, 0.5, 0})
	if got := fmt.Sprint(p4.Video.Sigmas, p4.Audio.Sigmas); got != want {
		t.Errorf("E=4 grids %s, want %s", got, want)
	}
}

func TestLinspace(t *testing.T) {
	for _, n := range []int{2, 3, 5, 8, 21, 100, 1001, 4097} {
		b := Linspace(n)
		if b[0] != 1 || b[n-1] != 0 {
			t.Fatalf("Linspace(%d) ends %v … %v", n, b[0], b[n-1])
		}
		for i := 1; i < n; i++ {
			if !(b[i] < b[i-1]) {
				t.Fatalf("Linspace(%d) not decreasing at %d", n, i)
			}
			if math.Abs(float64(b[i])-(1-float64(i)/float64(n-1))) > 1e-6 {
				t.Fatalf("Linspace(%d)[%d] = %v", n, i, b[i])
			}
		}
	}
	if Linspace(0) != nil || !slices.Equal(Linspace(1), []float32{1}) {
		t.Error("degenerate linspace")
	}
}

func TestBuildNoDuplicates(t *testing.T) {
	// ERRATA F12: neither shift produces a duplicate for N ≤ 20 000 (checked to 2 000 here).
	for n := 2; n <= 2000; n++ {
		for _, sh := range []float64{VideoShift, AudioShift} {
			s, err := Build(n, sh)
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Sigmas) != n {
				t.Fatalf("Build(%d, %v) has %d sigmas", n, sh, len(s.Sigmas))
			}
		}
	}
	// A huge shift collapses points near σ = 1, and the duplicates are removed.
	s, err := Build(50, 1e9)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(s.Sigmas); i++ {
		if !(s.Sigmas[i] < s.Sigmas[i-1]) {
			t.Fatalf("duplicate left at %d: %v", i, s.Sigmas)
		}
	}
	if len(s.Sigmas) >= 50 {
		t.Errorf("shift 1e9 kept all %d points", len(s.Sigmas))
	}
}

func TestBuildRejects(t *testing.T) {
	for _, c := range []struct {
		points int
		shift  float64
	}{{1, 12}, {0, 12}, {-4, 3}, {MaxPoints + 1, 3}, {10, 0}, {10, -1}, {10, math.NaN()}, {10, math.Inf(1)}} {
		if _, err := Build(c.points, c.shift); err == nil {
			t.Errorf("Build(%d, %v) accepted", c.points, c.shift)
		}
	}
	if _, err := ForSteps(0, 12); err == nil {
		t.Error("ForSteps(0) accepted")
	}
	for _, base := range [][]float64{{1}, {0.9, 0}, {1, 0.5}, {1, 0.5, 0.5, 0}, {1, 1.5, 0}, {1, math.NaN(), 0}} {
		if _, err := FromBase(base, 12); err == nil {
			t.Errorf("FromBase(%v) accepted", base)
		}
	}
	s, err := FromBase([]float64{1, 0.75, 0.5, 0.25, 0}, 3)
	if err != nil || fmt.Sprint(s.Sigmas) != fmt.Sprint([]float32{1, 0.9, 0.75, 0.5, 0}) {
		t.Errorf("FromBase = %v, %v", s, err)
	}
}

func TestEulerStep(t *testing.T) {
	// Last step (σ_next = 0) lands on x0 = x + σ_t·v.
	x := []float32{1, -2, 0.5}
	v := []float32{0.25, 1, -4}
	out := make([]float32, 3)
	EulerStep(out, x, v, 0.75, 0.25, 0)
	for i := range x {
		if want := x[i] + 0.25*v[i]; out[i] != want {
			t.Errorf("x0[%d] = %v, want %v", i, out[i], want)
		}
	}
	// In place, and equal to the velocity form x + (σ − σ_next)·v up to rounding.
	s, _ := ForSteps(20, VideoShift)
	y := slices.Clone(x)
	s.Step(3, y, y, v)
	for i := range x {
		want := float64(x[i]) + float64(s.Sigmas[3]-s.Sigmas[4])*float64(v[i])
		if math.Abs(float64(y[i])-want) > 1e-6 {
			t.Errorf("step 3 [%d] = %v, want ≈ %v", i, y[i], want)
		}
	}
	// ScaleNoise at t = 1 returns the sample; at 0.999 it is nearly so.
	ScaleNoise(out, x, v, 1)
	if !slices.Equal(out, x) {
		t.Errorf("ScaleNoise(t=1) = %v", out)
	}
	ScaleNoise(out, x, v, KeyframeNoiseLevel)
	// ERRATA F4: t = float32(0.999), 1 − t computed in float32.
	tt := KeyframeNoiseLevel
	omt := 1 - tt
	for i := range x {
		if want := float32(tt*x[i]) + float32(omt*v[i]); out[i] != want {
			t.Errorf("ScaleNoise[%d] = %v, want %v", i, out[i], want)
		}
	}
	if float64(omt) != 0.000999987125396728515625 {
		t.Errorf("1 − f32(0.999) = %.20g", omt)
	}
}

func TestReuse(t *testing.T) {
	// h3.c tests/test_h3.c test_dit_reuse_schedule.
	cases := []struct {
		steps, n, forwards int
		want               func(s int) bool
	}{
		{20, 3, 8, func(s int) bool { return slices.Contains([]int{0, 3, 6, 9, 12, 15, 18, 19}, s) }},
		{20, 2, 11, func(s int) bool { return s%2 == 0 || s == 19 }},
		{50, 3, 18, func(s int) bool { return s%3 == 0 || s == 49 }},
		{20, 1, 20, func(int) bool { return true }},
	}
	for _, c := range cases {
		ev, err := EvaluatedSteps(c.steps, c.n)
		if err != nil {
			t.Fatal(err)
		}
		count := 0
		for s, e := range ev {
			if e {
				count++
			}
			if e != c.want(s) {
				t.Errorf("steps %d reuse %d: step %d evaluate=%v", c.steps, c.n, s, e)
			}
		}
		if count != c.forwards {
			t.Errorf("steps %d reuse %d: %d forwards, want %d", c.steps, c.n, count, c.forwards)
		}
	}
	for _, n := range []int{0, 4, -1} {
		if _, err := EvaluatedSteps(20, n); err == nil {
			t.Errorf("reuse %d accepted", n)
		}
	}

	p, _ := NewPair(20, VideoShift, AudioShift)
	plan, err := PlanReuse(p, 3)
	if err != nil {
		t.Fatal(err)
	}
	// Step 1 and 2 follow step 0 only: reuse v_0 unchanged.
	if plan[1].Evaluate || plan[1].Last != 0 || plan[1].Previous != -1 || plan[1].VideoRatio != 0 {
		t.Errorf("step 1: %+v", plan[1])
	}
	// Step 4 extrapolates from 3 and 0.
	st := plan[4]
	v := p.Video.Sigmas
	want := (v[4] - v[3]) / (v[3] - v[0])
	if st.Last != 3 || st.Previous != 0 || st.VideoRatio != want {
		t.Errorf("step 4: %+v, want ratio %v", st, want)
	}
	if !plan[19].Evaluate || !plan[18].Evaluate {
		t.Error("last steps not evaluated")
	}
	if r := ExtrapolationRatio(0.5, 0.6, 0.6); r != 0 {
		t.Errorf("zero denominator gives %v", r)
	}
	if r := ExtrapolationRatio(0, 0.9, 0.95); r != 2 {
		t.Errorf("clamp gives %v", r)
	}
	dst := make([]float32, 2)
	Extrapolate(dst, []float32{1, 2}, []float32{0, 4}, 0.5)
	if !slices.Equal(dst, []float32{1.5, 1}) {
		t.Errorf("Extrapolate = %v", dst)
	}
}
