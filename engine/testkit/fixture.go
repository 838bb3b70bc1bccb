package testkit

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"

	"h3studio/engine/compute"
	"h3studio/engine/safetensors"
)

// Open opens the safetensors file path (a fixture or a written test
// model) for the test, which closes it when it ends; a missing or
// unreadable file fails the test.
func Open(t testing.TB, path string) *safetensors.File {
	t.Helper()
	f, err := safetensors.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

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

// Entries reads every tensor of the safetensors file path as an entry
// holding a copy of its data, in the file's order, with the file's
// metadata: what a test edits and writes back with safetensors.Write.
func Entries(t testing.TB, path string) ([]safetensors.Entry, map[string]string) {
	t.Helper()
	f, err := safetensors.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var entries []safetensors.Entry
	for _, n := range f.Names() {
		info, _ := f.Info(n)
		data, err := f.Data(n)
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, safetensors.Entry{Name: n, DType: info.DType, Shape: info.Shape, Data: bytes.Clone(data)})
	}
	return entries, f.Header.Metadata
}

// PoisonTensor rewrites the safetensors file path with every value of the
// F32 tensor name set to NaN: a corrupt weight behind a valid header.
func PoisonTensor(t testing.TB, path, name string) {
	t.Helper()
	entries, meta := Entries(t, path)
	for _, e := range entries {
		if e.Name == name {
			for i := 0; i+4 <= len(e.Data); i += 4 {
				binary.LittleEndian.PutUint32(e.Data[i:], math.Float32bits(float32(math.NaN())))
			}
		}
	}
	if err := safetensors.Write(path, entries, meta); err != nil {
		t.Fatal(err)
	}
}
