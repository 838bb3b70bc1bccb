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
