package safetensors

import (
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"h3studio/engine/compute"
	"h3studio/engine/compute/cpu"
)

func TestBinderAccounting(t *testing.T) {
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "m.safetensors"),
		F32("blocks.0.w", compute.F32, compute.Shape{2, 3}, []float32{1, 2, 3, 4, 5, 6}),
		F32("blocks.0.b", compute.BF16, compute.Shape{3}, []float32{0.5, 1, 2}),
		F32("blocks.1.w", compute.F32, compute.Shape{2, 3}, make([]float32, 6)),
		F32("rope.inv_freq", compute.F32, compute.Shape{2}, []float32{1, 0.1}),
		F32("extra.x", compute.F32, compute.Shape{1}, []float32{7}),
		F32("ignored.y", compute.F32, compute.Shape{1}, []float32{8}))
	ck, err := OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ck.Close()
	b := NewBinder("dit", ck, cpu.New(cpu.Options{}))
	blk := b.Sub("blocks.0.")
	w := blk.Tensor("w", 2, 3)
	if w == nil || !w.Shape().Equal(compute.Shape{2, 3}) {
		t.Fatalf("w = %v", w)
	}
	if got, _ := compute.ToFloat32(w); !slices.Equal(got, []float32{1, 2, 3, 4, 5, 6}) {
		t.Errorf("w values %v", got)
	}
	bias := blk.TensorAs("b", compute.F32, 3) // BF16 on disk, converted
	if got, _ := compute.ToFloat32(bias); !slices.Equal(got, []float32{0.5, 1, 2}) || b.ConvertedBytes() != 12 {
		t.Errorf("b values %v, converted %d bytes", got, b.ConvertedBytes())
	}
	if v := b.Float32s("rope.inv_freq", 2); !slices.Equal(v, []float32{1, 0.1}) {
		t.Errorf("inv_freq %v", v)
	}
	if b.Err() != nil {
		t.Fatalf("no error expected yet: %v", b.Err())
	}
	if b.Sub("blocks.1.").Tensor("w", 3, 2) != nil { // mis-shaped
		t.Error("mis-shaped tensor bound")
	}
	if b.Tensor("blocks.2.w") != nil { // missing
		t.Error("missing tensor bound")
	}
	err = b.Finish("ignored.")
	msg := err.Error()
	for _, want := range []string{
		"dit: blocks.1.w: want shape [3 2], have F32[2 3]",
		"dit: missing tensor blocks.2.w",
		"dit: unexpected tensor extra.x",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "ignored.y") || strings.Contains(msg, "blocks.0") || strings.Contains(msg, "rope") {
		t.Errorf("error reports bound or ignored tensors:\n%s", msg)
	}

	// Skip marks deliberate leftovers as accounted for.
	b2 := NewBinder("dit", ck, cpu.New(cpu.Options{}))
	b2.Skip("blocks.0.w", "blocks.0.b", "blocks.1.w", "rope.inv_freq", "extra.x", "ignored.y", "not.there")
	if err := b2.Finish(); err != nil {
		t.Errorf("all skipped: %v", err)
	}
}

// TestBinderRefusesIntegerWeights: a weight stored as I32 (same byte size
// as F32, so the header is consistent) is refused by name, not converted by
// value or bound as integers; an integer tensor asked for as an integer
// dtype still binds.
func TestBinderRefusesIntegerWeights(t *testing.T) {
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "m.safetensors"),
		Entry{Name: "w", DType: compute.I32, Shape: compute.Shape{2}, Data: []byte{1, 0, 0, 0, 2, 0, 0, 0}},
		Entry{Name: "ids", DType: compute.I64, Shape: compute.Shape{1}, Data: []byte{7, 0, 0, 0, 0, 0, 0, 0}})
	ck, err := OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ck.Close()
	for name, bind := range map[string]func(b *Binder) bool{
		"Tensor":     func(b *Binder) bool { return b.Tensor("w", 2) != nil },
		"TensorAs":   func(b *Binder) bool { return b.TensorAs("w", compute.F32, 2) != nil },
		"Float32s":   func(b *Binder) bool { return b.Float32s("w", 2) != nil },
		"TensorBF16": func(b *Binder) bool { return b.TensorAs("w", compute.BF16) != nil },
	} {
		b := NewBinder("vae", ck, cpu.New(cpu.Options{}))
		if bind(b) {
			t.Errorf("%s bound an I32 weight", name)
		}
		if err := b.Err(); err == nil || !strings.Contains(err.Error(), "vae: w: stored as I32, not a floating-point dtype") {
			t.Errorf("%s: error %v", name, err)
		}
	}
	b := NewBinder("vae", ck, cpu.New(cpu.Options{}))
	if b.TensorAs("ids", compute.I64, 1) == nil || b.Err() != nil {
		t.Errorf("an I64 tensor bound as I64: %v", b.Err())
	}
}

// TestBinderKeepsFewErrors: a component asking for a million missing
// tensors (a corrupt config's depth) keeps the first errors and counts the
// rest, so its memory stays bounded and the message short.
func TestBinderKeepsFewErrors(t *testing.T) {
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "m.safetensors"), F32("w", compute.F32, compute.Shape{1}, []float32{1}))
	ck, err := OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ck.Close()
	b := NewBinder("vae", ck, cpu.New(cpu.Options{}))
	const n = 1_000_000
	for i := range n {
		b.Sub(strconv.Itoa(i) + ".").Tensor("w")
	}
	err = b.Finish()
	if err == nil || len(b.st.errs) != maxErrors || !strings.Contains(err.Error(), "vae: missing tensor 0.w") ||
		!strings.HasSuffix(err.Error(), "… and "+strconv.Itoa(n-maxErrors+1)+" more") {
		t.Errorf("kept %d errors; error %.300q…", len(b.st.errs), err)
	}
}
