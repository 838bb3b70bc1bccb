package media

import (
	"slices"
	"testing"
)

// TestFancyRow checks the horizontal fancy upsampling against libjpeg's
// h2v1 and h2v2 formulas worked by hand (jdsample.c: edges replicate the
// outer sample; h2v2 rounds ×4 vertical sums with biases 8 and 7).
func TestFancyRow(t *testing.T) {
	for _, c := range []struct {
		name             string
		s                []int32
		even, odd, shift int
		want             []uint8
	}{
		{"h2v1", []int32{10, 20, 30}, 1, 2, 2, []uint8{10, 13, 17, 23, 27, 30}},
		{"h2v1 one column", []int32{7}, 1, 2, 2, []uint8{7, 7}},
		{"h2v2", []int32{40, 80}, 8, 7, 4, []uint8{10, 12, 18, 20}},
		{"h2v2 one column", []int32{46}, 8, 7, 4, []uint8{12, 11}},
	} {
		line := make([]uint8, 2*len(c.s))
		fancyRow(line, c.s, int32(c.even), int32(c.odd), uint(c.shift))
		if !slices.Equal(line, c.want) {
			t.Errorf("%s: %v, want %v", c.name, line, c.want)
		}
	}
}
