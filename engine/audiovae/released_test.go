package audiovae

import (
	"slices"
	"testing"

	"h3studio/engine/snapshot/snapshottest"
)

// TestReleasedConfig: ReleasedConfig is valid and its tensor list is the
// release's (names and shapes of the full-size inventory in snapshottest,
// which reproduces the released byte total).
func TestReleasedConfig(t *testing.T) {
	c := ReleasedConfig()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if c.Hop() != 800 || !slices.Equal(c.DecoderKernels, []int{9, 9, 4, 4, 4, 4, 4}) {
		t.Errorf("hop %d, kernels %v", c.Hop(), c.DecoderKernels)
	}
	want := map[string][]int{}
	for _, x := range snapshottest.AudioVAEInventory() {
		want[x.Name] = x.Shape
	}
	got := TensorShapes(c)
	if len(got) != len(want) {
		t.Errorf("%d tensors, the release has %d", len(got), len(want))
	}
	for name, shape := range want {
		if !slices.Equal(got[name], shape) {
			t.Errorf("%s: %v, the release has %v", name, got[name], shape)
		}
	}
}
