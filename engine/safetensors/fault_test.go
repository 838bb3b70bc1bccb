//go:build unix

package safetensors

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"h3studio/engine/compute"
)

var sink atomic.Int64

// readAll sums every byte of b, so every page is touched.
func readAll(b []byte) {
	s := 0
	for _, v := range b {
		s += int(v)
	}
	sink.Add(int64(s))
}

// faultyFile writes a 1 MiB tensor file, opens (maps) it and truncates it
// under the mapping.
func faultyFile(t *testing.T) (*File, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "model-00001-of-00002.safetensors")
	if err := Write(path, []Entry{{Name: "w", DType: compute.F32, Shape: compute.Shape{256, 1024}, Data: make([]byte, 1<<20)}}, nil); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if err := os.Truncate(path, 4096); err != nil {
		t.Fatal(err)
	}
	return f, path
}

// TestFaultOnTruncatedMappingIsAnError: reading a mapped weight file that
// was truncated under the reader is an error naming the file, on the entry
// goroutine and from worker goroutines alike; the process survives.
func TestFaultOnTruncatedMappingIsAnError(t *testing.T) {
	f, path := faultyFile(t)
	data, err := f.Data("w")
	if err != nil {
		t.Fatal(err)
	}
	direct := func() (err error) {
		defer CatchFaults()(&err)
		readAll(data)
		return nil
	}
	workers := func() (err error) {
		defer CatchFaults()(&err)
		Parallel(4, func(i int) { readAll(data[i*len(data)/4 : (i+1)*len(data)/4]) })
		return nil
	}
	for name, run := range map[string]func() error{"entry goroutine": direct, "workers": workers} {
		err := run()
		var fe *FaultError
		if !errors.As(err, &fe) {
			t.Fatalf("%s: got %v, want a *FaultError", name, err)
		}
		if fe.Path != path || !strings.Contains(err.Error(), filepath.Base(path)) {
			t.Errorf("%s: error %q does not name %s", name, err, path)
		}
	}
}

// TestOtherPanicsPassThrough: CatchFaults converts only faults inside a
// mapped weight file; any other panic continues.
func TestOtherPanicsPassThrough(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(error).Error(), "index out of range") {
			t.Fatalf("recovered %v, want the index panic", r)
		}
	}()
	func() (err error) {
		defer CatchFaults()(&err)
		var b []byte
		i := 3
		_ = b[i]
		return nil
	}()
	t.Fatal("the panic was swallowed")
}

func TestMappedFileAt(t *testing.T) {
	f, path := faultyFile(t)
	m := f.Mapping()
	base := baseOf(m)
	if p, ok := MappedFileAt(base + uintptr(len(m)) - 1); !ok || p != path {
		t.Errorf("last byte: %q %v", p, ok)
	}
	if _, ok := MappedFileAt(base + uintptr(len(m))); ok {
		t.Error("one past the end resolved to a file")
	}
	f.Close()
	if _, ok := MappedFileAt(base); ok {
		t.Error("a closed file's mapping is still registered")
	}
}
