package cpu

import (
	"runtime/debug"
	"strings"
	"testing"
	"unsafe"

	"h3studio/engine/compute"
)

// TestStorageMappedAndGoHeap checks where Alloc's storage comes from (a
// mapping from 1 MiB, the Go heap below it and under OracleGoAlloc), that
// it is zeroed and aligned either way, and that the ledger balances after
// Free.
func TestStorageMappedAndGoHeap(t *testing.T) {
	for _, c := range []struct {
		name    string
		o       compute.Oracles
		shape   []int
		mapped  bool
		aligned uintptr
	}{
		{"small", 0, []int{1000, 3}, false, 8},
		{"just below", 0, []int{mapThreshold/4 - 1}, false, 8},
		{"threshold", 0, []int{mapThreshold / 4}, true, 4096},
		{"large odd", 0, []int{1031, 777}, true, 4096},
		{"oracle", compute.Oracles(0).With(OracleGoAlloc), []int{1031, 777}, false, 8},
	} {
		b := New(Options{Oracles: c.o})
		x := compute.MustAlloc(b, compute.F32, c.shape...)
		buf, _ := x.Buffer()
		u := buf.(*buffer)
		if u.mapped != c.mapped {
			t.Errorf("%s: %d bytes mapped=%v, want %v", c.name, x.Bytes(), u.mapped, c.mapped)
		}
		v := Float32s(x)
		if p := uintptr(unsafe.Pointer(&v[0])); p%c.aligned != 0 {
			t.Errorf("%s: storage at %#x is not %d-byte aligned", c.name, p, c.aligned)
		}
		for i, f := range v {
			if f != 0 {
				t.Fatalf("%s: element %d of fresh storage is %v", c.name, i, f)
			}
			v[i] = float32(i) // every page writable
		}
		if got := b.Stats().LiveBytes; got != x.Bytes() {
			t.Errorf("%s: live %d B, want %d", c.name, got, x.Bytes())
		}
		b.Free(x)
		b.Free(x) // a second Free is a no-op
		if st := b.Stats(); st.LiveBytes != 0 || st.PeakBytes != x.Bytes() {
			t.Errorf("%s: after Free live %d B, peak %d B", c.name, st.LiveBytes, st.PeakBytes)
		}
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestUseAfterFree checks both ways freed storage can be reached: through
// the tensor (its kernels and Bytes panic, naming the misuse) and through a
// slice taken before Free (a mapping is poisoned: the access faults instead
// of reading memory the OS has since given to another allocation).
func TestUseAfterFree(t *testing.T) {
	b := New(Options{})
	defer b.Close()
	x := compute.MustAlloc(b, compute.F32, 512, 1024)
	y := compute.MustAlloc(b, compute.F32, 512, 1024)
	raw := Float32s(x)
	b.Free(x)
	func() {
		defer func() {
			if r := recover(); r == nil || !strings.Contains(r.(string), "used after Free") {
				t.Errorf("Bytes of a freed tensor: recovered %v", r)
			}
		}()
		Bytes(x)
	}()
	func() {
		defer func() {
			if r := recover(); r == nil || !strings.Contains(r.(string), "used after Free") {
				t.Errorf("a kernel on a freed tensor: recovered %v", r)
			}
		}()
		b.Add(y, x, y)
	}()
	if !mappingsAvailable() {
		t.Skip("no anonymous mappings on this platform")
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	func() {
		defer func() {
			if _, ok := recover().(interface{ Addr() uintptr }); !ok {
				t.Errorf("reading a slice of freed storage did not fault")
			}
		}()
		sink = raw[len(raw)/2]
	}()
	b.Free(y)
}

// sink keeps the read of freed storage from being optimised away.
var sink float32

// mappingsAvailable reports whether Alloc maps large storage here.
func mappingsAvailable() bool {
	r, ok := mapRegion(mapThreshold)
	if ok {
		unmapRegion(r)
	}
	return ok
}

// TestQuarantineBounded checks that freed mappings are unmapped once more
// than quarantineLen are held, and all of them at Close.
func TestQuarantineBounded(t *testing.T) {
	b := New(Options{})
	for range quarantineLen + 10 {
		b.Free(compute.MustAlloc(b, compute.U8, mapThreshold))
	}
	if mappingsAvailable() {
		if n := len(b.maps.quarantine); n != quarantineLen {
			t.Errorf("%d regions in quarantine, want %d", n, quarantineLen)
		}
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if n := len(b.maps.quarantine); n != 0 {
		t.Errorf("%d regions in quarantine after Close", n)
	}
}
