//go:build darwin

package metal_test

import (
	"errors"
	"testing"

	"h3studio/darwin/mtl"
	"h3studio/engine/compute"
	"h3studio/engine/compute/computetest"
	"h3studio/engine/compute/metal"
	"h3studio/engine/safetensors"
)

func openGPU(t *testing.T, o metal.Options) *metal.Backend {
	t.Helper()
	b, err := metal.Open(metal.OpenOptions{Options: o})
	if errors.Is(err, mtl.ErrNoDevice) {
		t.Skip("metal: no Metal device on this Mac")
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// TestConformanceMetal runs the conformance suite on the GPU (`make parity`):
// the hand kernels, with large shapes that take the MPSGraph path.
func TestConformanceMetal(t *testing.T) {
	b := openGPU(t, metal.Options{})
	t.Logf("device %+v", b.Device())
	computetest.RunAll(t, b, computetest.Options{Large: true})
	st := b.Stats()
	t.Logf("%d dispatches, %d command buffers, %d CPU fallbacks, GPU time %v", st.Dispatches, st.Submissions, st.CPUFallbacks, b.GPUTime())
}

// TestConformanceMetalMPSGraph sends every eligible MatMul to MPSGraph.
func TestConformanceMetalMPSGraph(t *testing.T) {
	b := openGPU(t, metal.Options{GEMMMinFLOPs: 1})
	computetest.RunAll(t, b, computetest.Options{Filter: "^MatMul/", Large: true})
}

// TestZeroCopyMetal binds a mapped checkpoint through the Binder: no copy.
func TestZeroCopyMetal(t *testing.T) {
	b := openGPU(t, metal.Options{})
	n := 1 << 16
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(i % 251)
	}
	f, bind := metal.WriteCheckpoint(t, b, safetensors.F32("w", compute.BF16, compute.Shape{n}, v))
	defer f.Close()
	w := bind.Tensor("w", n)
	if err := bind.Err(); err != nil {
		t.Fatal(err)
	}
	if st := b.Stats(); st.MappedBytes != int64(2*n) || st.LiveBytes != 0 {
		t.Fatalf("stats %+v: want the weight viewed in place", st)
	}
	out := compute.MustAlloc(b, compute.F32, n)
	b.Copy(out, w)
	got, err := compute.ToFloat32(out)
	if err != nil {
		t.Fatal(err)
	}
	for i := range v {
		if got[i] != v[i] {
			t.Fatalf("w[%d] = %g, want %g", i, got[i], v[i])
		}
	}
}
