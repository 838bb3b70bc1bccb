package testkit

import (
	"testing"

	"h3studio/engine/compute"
	"h3studio/engine/safetensors"
)

// Float32s reads the fixture tensor name of f as float32 values (decoded
// from its stored dtype) with its shape; a missing or unreadable tensor
// fails the test, naming it.
func Float32s(t testing.TB, f *safetensors.File, name string) ([]float32, compute.Shape) {
	t.Helper()
	info, data := tensor(t, f, name)
	return compute.DecodeFloat32(info.DType, data), info.Shape
}

// Int64s reads the fixture tensor name of f as int64 values with its
// shape, as Float32s does.
func Int64s(t testing.TB, f *safetensors.File, name string) ([]int64, compute.Shape) {
	t.Helper()
	info, data := tensor(t, f, name)
	return compute.DecodeInt64(info.DType, data), info.Shape
}

func tensor(t testing.TB, f *safetensors.File, name string) (safetensors.TensorInfo, []byte) {
	t.Helper()
	info, ok := f.Info(name)
	if !ok {
		t.Fatalf("fixture has no %s", name)
	}
	data, err := f.Data(name)
	if err != nil {
		t.Fatalf("fixture %s: %v", name, err)
	}
	return info, data
}
