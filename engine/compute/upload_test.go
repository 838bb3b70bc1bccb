package compute_test

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"h3studio/engine/compute"
	"h3studio/engine/compute/cpu"
)

// TestUploadConverted: the stored bytes are ConvertFloat's for every float
// pair and for sizes around the chunk, and a large tensor is converted and
// uploaded 16 MiB at a time, never as a converted copy of the whole tensor.
func TestUploadConverted(t *testing.T) {
	b := cpu.New(cpu.Options{})
	r := rand.New(rand.NewPCG(1, 2))
	floats := []compute.DType{compute.F32, compute.BF16, compute.F16}
	for _, n := range []int{0, 1, 1000, 1<<22 - 1, 1<<22 + 3} {
		vals := make([]float32, n)
		for i := range vals {
			vals[i] = float32(r.NormFloat64())
		}
		for _, from := range floats {
			src := compute.EncodeFloat32(from, vals)
			for _, to := range floats {
				dst := compute.MustAlloc(b, to, n)
				if err := compute.UploadConverted(b, dst, from, src); err != nil {
					t.Fatal(err)
				}
				got := make([]byte, dst.Bytes())
				if err := b.Download(got, dst); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, compute.ConvertFloat(to, from, src)) {
					t.Errorf("%d values %v -> %v: stored bytes differ from ConvertFloat's", n, from, to)
				}
				b.Free(dst)
			}
		}
	}
	if err := compute.UploadConverted(b, compute.MustAlloc(b, compute.F32, 4), compute.BF16, make([]byte, 6)); err == nil {
		t.Error("6 bytes of BF16 for 4 values accepted")
	}

	// A 64 MiB float32 tensor arrives in uploads of at most 16 MiB.
	rec := &uploadRecorder{Backend: b}
	dst := compute.MustAlloc(rec, compute.F32, 4, 1<<22)
	defer b.Free(dst)
	if err := compute.UploadConverted(rec, dst, compute.BF16, make([]byte, dst.NumElements()*2)); err != nil {
		t.Fatal(err)
	}
	if rec.calls != 4 || rec.largest > 16<<20 {
		t.Errorf("a %d MiB tensor was converted in %d uploads, the largest %d MiB", dst.Bytes()>>20, rec.calls, rec.largest>>20)
	}
}

// uploadRecorder notes the uploads a backend is asked for.
type uploadRecorder struct {
	*cpu.Backend
	calls, largest int
}

func (u *uploadRecorder) Upload(dst *compute.Tensor, src []byte) error {
	u.calls++
	u.largest = max(u.largest, len(src))
	return u.Backend.Upload(dst, src)
}
