package safetensors

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"h3studio/engine/compute"
)

func streamed(t *testing.T, s Spec, seed uint64, workers int) []byte {
	t.Helper()
	e, err := s.StreamEntry(seed, workers)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := e.Stream(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// The streamed bytes depend on the seed, never on the number of workers,
// and every chunk (also the short last one) is filled.
func TestStreamEntryDeterministic(t *testing.T) {
	s := Spec{Name: "blocks.0.w", DType: compute.BF16, Shape: compute.Shape{3*StreamChunk/64 + 5, 64}}
	one, four := streamed(t, s, 7, 1), streamed(t, s, 7, 4)
	if !bytes.Equal(one, four) {
		t.Fatal("1 and 4 workers streamed different bytes")
	}
	if want := s.Shape.NumElements() * 2; len(one) != want {
		t.Fatalf("streamed %d bytes, want %d", len(one), want)
	}
	if bytes.Equal(one, streamed(t, s, 8, 2)) {
		t.Fatal("seeds 7 and 8 streamed the same bytes")
	}
	v := compute.DecodeFloat32(compute.BF16, one)
	var sum, sq float64
	for _, f := range v {
		sum += float64(f)
		sq += float64(f) * float64(f)
	}
	n := float64(len(v))
	if sd, want := sq/n-(sum/n)*(sum/n), 1.0/64; sd < 0.9*want || sd > 1.1*want {
		t.Fatalf("variance %g, want ≈ 1/fan-in = %g", sd, want)
	}
	// Chunks are independent streams: the last chunk is not a copy of the first.
	if bytes.Equal(one[:128], one[2*StreamChunk*2:2*StreamChunk*2+128]) {
		t.Fatal("chunk 2 repeats chunk 0")
	}
}

// InitValues tensors stream their exact values, chunk boundaries included.
func TestStreamEntryValues(t *testing.T) {
	vals := make([]float32, StreamChunk+3)
	for i := range vals {
		vals[i] = float32(i)
	}
	s := Spec{Name: "f", DType: compute.F32, Shape: compute.Shape{len(vals)}, Init: Init{Kind: InitValues, Values: vals}}
	got := compute.DecodeFloat32(compute.F32, streamed(t, s, 1, 3))
	for i := range vals {
		if got[i] != vals[i] {
			t.Fatalf("element %d = %g, want %g", i, got[i], vals[i])
		}
	}
}

// A streamed entry is written like a held one; a stream that writes the
// wrong number of bytes or fails leaves no file.
func TestWriteStreamed(t *testing.T) {
	dir := t.TempDir()
	s := Spec{Name: "w", DType: compute.BF16, Shape: compute.Shape{300, 7}}
	e, err := s.StreamEntry(3, 2)
	if err != nil {
		t.Fatal(err)
	}
	held := F32("w", compute.BF16, s.Shape, compute.DecodeFloat32(compute.BF16, streamed(t, s, 3, 1)))
	a, b := filepath.Join(dir, "a.safetensors"), filepath.Join(dir, "b.safetensors")
	if err := Write(a, []Entry{e}, nil); err != nil {
		t.Fatal(err)
	}
	if err := Write(b, []Entry{held}, nil); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(readFileT(t, a), readFileT(t, b)) {
		t.Fatal("a streamed entry wrote other bytes than the same tensor held in memory")
	}
	short := Entry{Name: "w", DType: compute.BF16, Shape: s.Shape, Stream: func(w io.Writer) error { _, err := w.Write(make([]byte, 10)); return err }}
	bad := filepath.Join(dir, "short.safetensors")
	if err := Write(bad, []Entry{short}, nil); err == nil {
		t.Fatal("a stream of 10 bytes for a 4200-byte tensor was accepted")
	}
	failing := Entry{Name: "w", DType: compute.BF16, Shape: s.Shape, Stream: func(io.Writer) error { return errors.New("boom") }}
	if err := Write(bad, []Entry{failing}, nil); err == nil {
		t.Fatal("a failing stream was accepted")
	}
	if _, err := os.Stat(bad); err == nil {
		t.Fatal("a failed streamed write left its file")
	}
}

func readFileT(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
