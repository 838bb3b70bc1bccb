//go:build linux

package metal_test

import (
	"os"
	"testing"

	"h3studio/engine/compute"
	"h3studio/engine/compute/metal"
	"h3studio/engine/compute/metal/mslcpu"
	"h3studio/engine/safetensors"
)

// TestZeroCopyCheckpoint binds checkpoint tensors through the Binder: the
// shard is registered once with the backend (compute.HostMapper) and every
// tensor is a view of it, never a copy — here with windows of 2 pages, so a
// shard spans several device buffers — and kernels read the views.
func TestZeroCopyCheckpoint(t *testing.T) {
	page := os.Getpagesize()
	_, b := emulated(t, mslcpu.DeviceOptions{MaxBuffer: int64(2 * page)}, metal.Options{})
	var _ compute.HostMapper = b

	n := page / 4 // a page of float32s per tensor
	var entries []safetensors.Entry
	vals := map[string][]float32{}
	for _, name := range []string{"a", "b", "c", "d", "e"} {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(i%97) * float32(len(name)+int(name[0]))
		}
		vals[name] = v
		entries = append(entries, safetensors.F32(name, compute.F32, compute.Shape{n}, v))
	}
	f, bind := metal.WriteCheckpoint(t, b, entries...)
	defer f.Close()
	for _, name := range []string{"a", "b", "c", "d", "e"} {
		w := bind.Tensor(name, n)
		if err := bind.Err(); err != nil {
			t.Fatal(err)
		}
		out := compute.MustAlloc(b, compute.F32, n)
		b.Scale(out, w, 2, 0)
		got, err := compute.ToFloat32(out)
		if err != nil {
			t.Fatal(err)
		}
		for i, x := range vals[name] {
			if got[i] != 2*x {
				t.Fatalf("%s[%d]: %g, want %g", name, i, got[i], 2*x)
			}
		}
		b.Free(out)
	}
	st := b.Stats()
	if st.MappedBytes != int64(5*n*4) {
		t.Errorf("MappedBytes %d, want %d (every tensor a view of the shard)", st.MappedBytes, 5*n*4)
	}
	if st.PeakBytes > int64(n*4) {
		t.Errorf("peak storage %d bytes: weights were copied", st.PeakBytes)
	}
}

func TestPlanWindows(t *testing.T) {
	const page = 16384
	for _, c := range []struct {
		n, max int64
		want   []metal.Window
	}{
		{100, 1 << 30, []metal.Window{{0, page}}},
		{3 * page, 3 * page, []metal.Window{{0, 3 * page}}},
		{5*page + 1, 4 * page, []metal.Window{{0, 4 * page}, {2 * page, 6 * page}}},
		{10 * page, 4 * page, []metal.Window{{0, 4 * page}, {2 * page, 6 * page}, {4 * page, 8 * page}, {6 * page, 10 * page}}},
	} {
		got := metal.PlanWindows(c.n, page, c.max)
		if len(got) != len(c.want) {
			t.Errorf("PlanWindows(%d, %d) = %v, want %v", c.n, c.max, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("PlanWindows(%d, %d) = %v, want %v", c.n, c.max, got, c.want)
				break
			}
		}
		// Every range no longer than the overlap lies in one window.
		ov := min(c.max/2, 1<<30) / page * page
		for s := int64(0); s+ov <= c.n && len(got) > 1; s += page / 2 {
			in := false
			for _, w := range got {
				in = in || (s >= w.Start && s+ov <= w.End)
			}
			if !in {
				t.Fatalf("PlanWindows(%d, %d): [%d, %d) lies in no window %v", c.n, c.max, s, s+ov, got)
			}
		}
	}
}
