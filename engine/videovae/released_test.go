package videovae

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
	if c.SpatialRatio() != 16 || c.TemporalRatio() != 4 || c.Dim() != 2048 || c.DecoderFFNHidden != 8192 {
		t.Errorf("geometry %d×/%d×, width %d, MLP %d", c.SpatialRatio(), c.TemporalRatio(), c.Dim(), c.DecoderFFNHidden)
	}
	want := map[string][]int{}
	for _, x := range snapshottest.VideoVAEInventory() {
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
