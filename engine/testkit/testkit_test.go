package testkit

import (
	"math"
	"testing"
)

func TestRelL2AndMaxAbs(t *testing.T) {
	want := []float32{3, 4}
	got := []float32{3, 4.5}
	if r := RelL2(got, want); math.Abs(r-0.1) > 1e-12 {
		t.Errorf("RelL2 = %v, want 0.1", r)
	}
	if r := RelL2([]float32{3, 4}, []float32{0, 0}); r != 5 {
		t.Errorf("RelL2 against zeros = %v, want the absolute 5", r)
	}
	if m := MaxAbs(got, want); m != 0.5 {
		t.Errorf("MaxAbs = %v, want 0.5", m)
	}
}
