package testkit

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"h3studio/engine/compute"
	"h3studio/engine/safetensors"
)

func TestRelL2AndMaxAbs(t *testing.T) {
	want := []float32{3, 4}
	got := []float32{3, 4.5}
	if r := RelL2(got, want); math.Abs(r-0.1) > 1e-12 {
		t.Errorf("RelL2 = %v, want 0.1", r)
	}
	if r := RelL2([]float32{3, 4}, []float32{0, 0}); r != 5 {
		t.Errorf("RelL2 against zeros = %v, want the absolute 5", r)
	}
	if m := MaxAbs(got, want); m != 0.5 {
		t.Errorf("MaxAbs = %v, want 0.5", m)
	}
}

// TestPoisonTensor: only the named tensor turns to NaN; the other tensors
// and the file's metadata are written back as they were.
func TestPoisonTensor(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.safetensors")
	entries := []safetensors.Entry{
		{Name: "a", DType: compute.F32, Shape: compute.Shape{2}, Data: compute.EncodeFloat32(compute.F32, []float32{1, 2})},
		{Name: "b", DType: compute.F32, Shape: compute.Shape{3}, Data: compute.EncodeFloat32(compute.F32, []float32{3, 4, 5})},
	}
	if err := safetensors.Write(path, entries, map[string]string{"format": "pt"}); err != nil {
		t.Fatal(err)
	}
	PoisonTensor(t, path, "b")
	f := Open(t, path)
	if a, _ := Float32s(t, f, "a"); a[0] != 1 || a[1] != 2 {
		t.Errorf("a = %v, want [1 2]", a)
	}
	b, shape := Float32s(t, f, "b")
	if len(shape) != 1 || shape[0] != 3 {
		t.Errorf("b's shape %v, want [3]", shape)
	}
	for i, v := range b {
		if !math.IsNaN(float64(v)) {
			t.Errorf("b[%d] = %v, want NaN", i, v)
		}
	}
	if _, meta := Entries(t, path); meta["format"] != "pt" {
		t.Errorf("metadata %v, want format pt", meta)
	}
}

func TestReadJSON(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.json")
	if err := os.WriteFile(path, []byte(`{"rate": 32000}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var m struct{ Rate int }
	ReadJSON(t, path, &m)
	if m.Rate != 32000 {
		t.Errorf("rate %d, want 32000", m.Rate)
	}
}

func TestNames(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"b", "a"} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got := Names(dir); len(got) != 2 || got[0] != "a" || got[1] != "b" {
		t.Errorf("Names = %v, want [a b]", got)
	}
	if got := Names(filepath.Join(dir, "missing")); len(got) != 0 {
		t.Errorf("Names of a missing folder = %v, want none", got)
	}
}
