package metal

import (
	"context"
	"errors"
	"strings"
	"testing"

	"h3studio/engine/compute"
)

// failingDevice is a counting device whose dispatches fail.
type failingDevice struct{ countingDevice }

func (d *failingDevice) Encode(p *Dispatch) error { return errors.New("pipeline refused") }

func TestErrorsSurfaceAtSync(t *testing.T) {
	b := New(&failingDevice{countingDevice{kernels: map[string]int{}}}, Options{})
	x := compute.MustAlloc(b, compute.F32, 4, 8)
	b.Scale(x, x, 2, 0)
	b.Add(x, x, x) // a second failure: only the first is reported
	err := b.Sync(context.Background())
	if err == nil || !strings.Contains(err.Error(), "kernel_scale_f32_f32: pipeline refused") {
		t.Fatalf("Sync: %v; want the first kernel's error", err)
	}
	if err := b.Sync(context.Background()); err != nil {
		t.Fatalf("second Sync: %v; the error was reported already", err)
	}
}

func TestMemoryLimitAndFree(t *testing.T) {
	b := New(&countingDevice{kernels: map[string]int{}}, Options{MemoryLimit: 1000})
	x, err := b.Alloc(compute.F32, 200) // 800 bytes
	if err != nil {
		t.Fatal(err)
	}
	var ae *compute.AllocError
	if _, err := b.Alloc(compute.F32, 100); !errors.As(err, &ae) || ae.Backend != "metal" {
		t.Fatalf("Alloc past the limit: %v; want *compute.AllocError", err)
	}
	if st := b.Stats(); st.LiveBytes != 800 || st.PeakBytes != 800 {
		t.Fatalf("stats %+v", st)
	}
	b.Free(x.Rows(0, 10)) // a view frees its parent's storage
	if st := b.Stats(); st.LiveBytes != 0 {
		t.Fatalf("after Free: %+v", st)
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "used after Free") {
			t.Fatalf("use after Free: %v", r)
		}
	}()
	b.Fill(x, 1)
}

// mappingDevice views every host slice without copying, like a registered
// checkpoint shard.
type mappingDevice struct{ countingDevice }

func (d *mappingDevice) WrapHost(h []byte) (Buffer, int64, bool) {
	return &nullBuffer{int64(len(h))}, 0, true
}

// TestMemoryLimitCountsBoundWeights: weights bound without copying occupy
// the GPU's working set too, so they count against the memory limit.
func TestMemoryLimitCountsBoundWeights(t *testing.T) {
	b := New(&mappingDevice{countingDevice{kernels: map[string]int{}}}, Options{MemoryLimit: 1000})
	w, err := b.Wrap(compute.F32, compute.Shape{150}, make([]byte, 600))
	if err != nil {
		t.Fatal(err)
	}
	if st := b.Stats(); st.MappedBytes != 600 || st.LiveBytes != 0 {
		t.Fatalf("a zero-copy weight: %+v", st)
	}
	var ae *compute.AllocError
	if _, err := b.Alloc(compute.F32, 125); !errors.As(err, &ae) || !strings.Contains(err.Error(), "600 bytes of bound weights") {
		t.Fatalf("500 bytes with 600 bound under a 1000-byte limit: %v", err)
	}
	if _, err := b.Alloc(compute.F32, 100); err != nil {
		t.Fatalf("400 bytes with 600 bound: %v", err)
	}
	b.Free(w)
	if _, err := b.Alloc(compute.F32, 150); err != nil {
		t.Fatalf("after freeing the weight: %v", err)
	}
}

func TestForeignTensorPanics(t *testing.T) {
	b1 := New(&countingDevice{kernels: map[string]int{}}, Options{})
	b2 := New(&countingDevice{kernels: map[string]int{}}, Options{})
	x := compute.MustAlloc(b1, compute.F32, 3)
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "does not belong") {
			t.Fatalf("foreign tensor: %v", r)
		}
	}()
	b2.Fill(x, 0)
}
