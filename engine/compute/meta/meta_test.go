package meta

import (
	"testing"

	"h3studio/engine/compute"
)

func TestStorageAccounting(t *testing.T) {
	b := New()
	w, _ := b.Weights().Alloc(compute.BF16, 10, 20) // 400 bytes of weights
	x, _ := b.Alloc(compute.F32, 3, 20)             // 240 bytes
	y, _ := b.Alloc(compute.F32, 3, 10)             // 120 bytes
	u := b.Usage()
	if u.LiveWeights != 400 || u.LiveActivations != 360 || u.PeakTotal != 760 || u.WeightsAtPeak != 400 {
		t.Fatalf("usage %+v", u)
	}
	b.MatMul(y, x, w, nil)
	u = b.Usage()
	if u.FLOPs != 2*3*10*20 || u.WeightBytesRead != 400 || u.BytesRead != 640 || u.BytesWritten != 120 || u.Dispatches != 1 {
		t.Errorf("matmul accounting %+v", u)
	}
	b.Free(x, x, y) // double free is harmless
	if u := b.Usage(); u.LiveActivations != 0 || u.PeakActivations != 360 || u.LiveWeights != 400 {
		t.Errorf("after free %+v", u)
	}
	b.ResetPeak()
	if u := b.Usage(); u.PeakTotal != 400 {
		t.Errorf("peak after reset %+v", u)
	}
	raw := []byte{1, 2, 3, 4}
	z, _ := b.Alloc(compute.F32, 1)
	if err := b.Download(raw, z); err != nil || raw[0] != 0 || raw[3] != 0 {
		t.Errorf("download: %v %v", err, raw)
	}
	if err := b.Upload(z, make([]byte, 3)); err == nil {
		t.Error("upload of the wrong size accepted")
	}
}

func TestShapeChecks(t *testing.T) {
	b := New()
	w, _ := b.Weights().Alloc(compute.BF16, 10, 20)
	x, _ := b.Alloc(compute.F32, 3, 21)
	y, _ := b.Alloc(compute.F32, 3, 10)
	defer func() {
		if recover() == nil {
			t.Error("mismatched matmul did not panic")
		}
	}()
	b.MatMul(y, x, w, nil)
}

func TestForeignTensorRejected(t *testing.T) {
	a, b := New(), New()
	x, _ := a.Alloc(compute.F32, 4)
	y, _ := b.Alloc(compute.F32, 4)
	defer func() {
		if recover() == nil {
			t.Error("a tensor of another backend was accepted")
		}
	}()
	b.Copy(y, x)
}
