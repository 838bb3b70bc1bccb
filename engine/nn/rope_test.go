package nn

import (
	"slices"
	"testing"
)

func TestDuplicateHalves(t *testing.T) {
	got := DuplicateHalves([]float32{1, 2, 3, 4, 5, 6}, 3)
	if want := []float32{1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6}; !slices.Equal(got, want) {
		t.Errorf("DuplicateHalves = %v, want %v", got, want)
	}
}
