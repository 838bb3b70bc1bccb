package safetensors

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"unsafe"

	"h3studio/engine/compute"
	"h3studio/engine/compute/cpu"
)

// TestReadAhead: a binder's ReadAhead advises exactly the pages of the
// tensors under its prefix (in a mapped multi-page shard), page-aligned
// and inside the mapping, and the advice itself succeeds on this platform.
func TestReadAhead(t *testing.T) {
	dir := t.TempDir()
	big := make([]float32, 5000) // 20,000 bytes: several pages
	mustWrite(t, filepath.Join(dir, "m.safetensors"),
		F32("blocks.0.w", compute.F32, compute.Shape{5000}, big),
		F32("blocks.0.b", compute.F32, compute.Shape{3}, []float32{1, 2, 3}),
		F32("blocks.1.w", compute.F32, compute.Shape{5000}, big),
		F32("final.w", compute.F32, compute.Shape{7}, make([]float32, 7)))
	ck, err := OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ck.Close()
	b := NewBinder("dit", ck, cpu.New(cpu.Options{}))

	want := int64(20012) // the real advice, which Linux and macOS accept
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		want = 0
	}
	if n := b.Sub("blocks.0.").ReadAhead(); n != want {
		t.Errorf("advised %d bytes for blocks.0, want %d", n, want)
	}

	var got [][]byte
	real := adviseWillNeed
	adviseWillNeed = func(p []byte) bool { got = append(got, p); return true }
	defer func() { adviseWillNeed = real }()
	if n := b.Sub("blocks.1.").ReadAhead(); n != 20000 {
		t.Errorf("advised %d bytes for blocks.1, want 20000", n)
	}
	m := ck.MappingOf("blocks.1.w")
	data := mustData(t, ck, "blocks.1.w")
	ps := uintptr(os.Getpagesize())
	base, end := uintptr(unsafe.Pointer(&m[0])), uintptr(unsafe.Pointer(&m[0]))+uintptr(len(m))
	if len(got) != 1 {
		t.Fatalf("%d ranges advised for one tensor", len(got))
	}
	start := uintptr(unsafe.Pointer(&got[0][0]))
	stop := start + uintptr(len(got[0]))
	d0 := uintptr(unsafe.Pointer(&data[0]))
	if start%ps != 0 || start < base || stop > end || start > d0 || stop != d0+uintptr(len(data)) || d0-start >= ps {
		t.Errorf("advised [%#x, %#x) for tensor bytes [%#x, %#x) in mapping [%#x, %#x)", start, stop, d0, d0+uintptr(len(data)), base, end)
	}
	got = nil
	if n := b.Sub("blocks.0.").ReadAhead("w"); n != 12 || len(got) != 1 {
		t.Errorf("skipping w: advised %d bytes in %d ranges, want 12 in 1", n, len(got))
	}
	if n := b.Sub("nothing.").ReadAhead(); n != 0 {
		t.Errorf("advised %d bytes for no tensors", n)
	}
}

func mustData(t *testing.T, ck *Checkpoint, name string) []byte {
	t.Helper()
	d, err := ck.Data(name)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestRelease: a binder's Release drops exactly the whole pages inside the
// named tensors' bytes (never a page a neighbour shares), the data reads
// back unchanged afterwards, and nothing is released for missing names or
// on a backend whose device buffers view the mapping.
func TestRelease(t *testing.T) {
	dir := t.TempDir()
	big := make([]float32, 5000) // 20,000 bytes: several pages
	for i := range big {
		big[i] = float32(i)
	}
	mustWrite(t, filepath.Join(dir, "m.safetensors"),
		F32("blocks.0.w", compute.F32, compute.Shape{5000}, big),
		F32("blocks.0.b", compute.F32, compute.Shape{3}, []float32{1, 2, 3}),
		F32("blocks.1.w", compute.F32, compute.Shape{5000}, big))
	ck, err := OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ck.Close()
	b := NewBinder("dit", ck, cpu.New(cpu.Options{}))
	ps := os.Getpagesize()

	var got [][]byte
	real := adviseDontNeed
	adviseDontNeed = func(p []byte) bool { got = append(got, p); return true }
	data := mustData(t, ck, "blocks.1.w")
	d0 := uintptr(unsafe.Pointer(&data[0]))
	n := b.Sub("blocks.1.").Release("w", "missing")
	adviseDontNeed = real
	if len(got) != 1 {
		t.Fatalf("%d ranges released for one tensor", len(got))
	}
	start := uintptr(unsafe.Pointer(&got[0][0]))
	stop := start + uintptr(len(got[0]))
	if start%uintptr(ps) != 0 || stop%uintptr(ps) != 0 || start < d0 || stop > d0+uintptr(len(data)) ||
		start-d0 >= uintptr(ps) || d0+uintptr(len(data))-stop >= uintptr(ps) || n != int64(len(got[0])) {
		t.Errorf("released [%#x, %#x) (%d bytes reported) for tensor bytes [%#x, %#x)", start, stop, n, d0, d0+uintptr(len(data)))
	}
	got = nil
	adviseDontNeed = func(p []byte) bool { got = append(got, p); return true }
	if n := b.Release("blocks.0.b"); n != 0 || len(got) != 0 {
		t.Errorf("a 12-byte tensor (no whole page) released %d bytes in %d ranges", n, len(got))
	}
	adviseDontNeed = real

	// The real advice: accepted on Linux and macOS, and the pages come back
	// from the file on the next read.
	n = b.Release("blocks.0.w", "blocks.1.w")
	if (runtime.GOOS == "linux" || runtime.GOOS == "darwin") && n < int64(2*(20000-2*ps)) {
		t.Errorf("released %d bytes of two 20,000-byte tensors", n)
	}
	for _, name := range []string{"blocks.0.w", "blocks.1.w"} {
		if v := compute.DecodeFloat32(compute.F32, mustData(t, ck, name)); v[0] != 0 || v[4999] != 4999 || v[2500] != 2500 {
			t.Errorf("%s after its release reads %v … %v", name, v[0], v[4999])
		}
	}

	dev := NewBinder("dit", ck, hostMapped{cpu.New(cpu.Options{})})
	if n := dev.Release("blocks.0.w"); n != 0 {
		t.Errorf("released %d bytes under a backend that views the mapping from a device", n)
	}
}

// hostMapped is a CPU backend that claims to view mappings from a device.
type hostMapped struct{ *cpu.Backend }

func (hostMapped) MapHost([]byte) error { return nil }
func (hostMapped) UnmapHost([]byte)     {}

// TestCheckpointRelease: a checkpoint's own Release drops the whole pages of
// the named tensors, as the binder's does, and keeps every page of a file
// that a device registered (its no-copy view covers the file whole).
func TestCheckpointRelease(t *testing.T) {
	dir := t.TempDir()
	big := make([]float32, 5000)
	mustWrite(t, filepath.Join(dir, "m.safetensors"),
		F32("a", compute.F32, compute.Shape{5000}, big),
		F32("b", compute.F32, compute.Shape{5000}, big))
	ck, err := OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ck.Close()
	var got int
	real := adviseDontNeed
	defer func() { adviseDontNeed = real }()
	adviseDontNeed = func(p []byte) bool { got += len(p); return true }
	if n := ck.Release("a", "missing"); n == 0 || int(n) != got || n > 20000 {
		t.Errorf("released %d bytes (advised %d) of a 20,000-byte tensor", n, got)
	}
	// A device views the file: nothing is released.
	NewBinder("dit", ck, hostMapped{cpu.New(cpu.Options{})}).Tensor("b", 5000)
	got = 0
	if n := ck.Release("a", "b"); n != 0 || got != 0 {
		t.Errorf("released %d bytes of a file a device views", n)
	}
}

// TestBinderFree: Free releases a bound weight's storage (a mapped view
// here) and the whole pages of its bytes, under a prefixed binder too, and
// skips nil entries.
func TestBinderFree(t *testing.T) {
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "m.safetensors"),
		F32("blocks.0.w", compute.F32, compute.Shape{5000}, make([]float32, 5000)))
	ck, err := OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ck.Close()
	b := cpu.New(cpu.Options{})
	w := NewBinder("dit", ck, b).Sub("blocks.0.")
	tw := w.Tensor("w", 5000)
	if err := w.Err(); err != nil {
		t.Fatal(err)
	}
	if b.Stats().MappedBytes == 0 {
		t.Fatal("the weight is not a mapped view")
	}
	var advised int
	real := adviseDontNeed
	defer func() { adviseDontNeed = real }()
	adviseDontNeed = func(p []byte) bool { advised += len(p); return true }
	if n := w.Free(tw, nil); n == 0 || int(n) != advised {
		t.Errorf("Free released %d bytes of pages (advised %d)", n, advised)
	}
	if st := b.Stats(); st.MappedBytes != 0 || st.LiveBytes != 0 {
		t.Errorf("after Free the backend holds %d mapped, %d allocated bytes", st.MappedBytes, st.LiveBytes)
	}
}
