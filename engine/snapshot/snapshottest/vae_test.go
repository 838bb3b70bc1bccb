package snapshottest_test

import (
	"slices"
	"testing"

	"h3studio/engine/audiovae"
	"h3studio/engine/snapshot/snapshottest"
	"h3studio/engine/videovae"
)

// TestVAEReleasedConfigs: the VAE packages' ReleasedConfig (what `h3studio
// plan` estimates with) is valid and names exactly the released tensors
// with their shapes (these inventories reproduce the released byte totals,
// TestInventories).
func TestVAEReleasedConfigs(t *testing.T) {
	v := videovae.ReleasedConfig()
	a := audiovae.ReleasedConfig()
	for _, c := range []struct {
		name  string
		valid error
		got   map[string][]int
		want  []snapshottest.Tensor
	}{
		{"video VAE", v.Validate(), videovae.TensorShapes(v), snapshottest.VideoVAEInventory()},
		{"audio VAE", a.Validate(), audiovae.TensorShapes(a), snapshottest.AudioVAEInventory()},
	} {
		if c.valid != nil {
			t.Errorf("%s: %v", c.name, c.valid)
		}
		if len(c.got) != len(c.want) {
			t.Errorf("%s: %d tensors, the release has %d", c.name, len(c.got), len(c.want))
		}
		for _, x := range c.want {
			if !slices.Equal(c.got[x.Name], x.Shape) {
				t.Errorf("%s %s: %v, the release has %v", c.name, x.Name, c.got[x.Name], x.Shape)
			}
		}
	}
	if v.SpatialRatio() != 16 || v.TemporalRatio() != 4 || v.DecoderFFNHidden != 8192 || a.Hop() != 800 ||
		!slices.Equal(a.DecoderKernels, []int{9, 9, 4, 4, 4, 4, 4}) {
		t.Errorf("geometry: video %d×/%d×, MLP %d; audio hop %d, kernels %v", v.SpatialRatio(), v.TemporalRatio(), v.DecoderFFNHidden, a.Hop(), a.DecoderKernels)
	}
}
