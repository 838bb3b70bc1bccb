package engine_test

import "testing"

// TestEstimateCountsPreviews: the estimate of a take with per-step
// previews includes their decodes (it was the same as without them).
func TestEstimateCountsPreviews(t *testing.T) {
	s := openSession(t)
	r := base("a lamp", 1)
	generate(t, s, r) // the session measures its rates
	r.Steps = 8
	without, err := s.Plan(r)
	if err != nil {
		t.Fatal(err)
	}
	r.Preview = true
	with, err := s.Plan(r)
	if err != nil {
		t.Fatal(err)
	}
	if without.Estimate <= 0 || with.Estimate <= without.Estimate {
		t.Errorf("estimate without previews %v, with %v: the previews are not counted", without.Estimate, with.Estimate)
	}
}
