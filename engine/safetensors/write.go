package safetensors

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"

	"h3studio/engine/atomicfile"
	"h3studio/engine/compute"
)

// Entry is one tensor to write: its raw little-endian bytes in DType, held
// in Data or, for tensors too large to hold, produced by Stream.
type Entry struct {
	Name  string
	DType compute.DType
	Shape compute.Shape
	Data  []byte
	// Stream, used when Data is nil, writes exactly the tensor's bytes to w.
	Stream func(w io.Writer) error
}

// size is the entry's byte length: len(Data), or what its shape and dtype
// take when it is streamed.
func (e Entry) size() int64 {
	if e.Data == nil && e.Stream != nil {
		return int64(e.Shape.NumElements()) * int64(e.DType.Size())
	}
	return int64(len(e.Data))
}

// F32 returns an F32 entry holding v (converted to dt when dt is not F32).
func F32(name string, dt compute.DType, shape compute.Shape, v []float32) Entry {
	return Entry{Name: name, DType: dt, Shape: shape.Clone(), Data: compute.EncodeFloat32(dt, v)}
}

// Write writes a safetensors file atomically: to a temporary file in the
// same directory, synced, then renamed over path. The layout is the reference
// library's: tensors ordered by dtype size (largest first) then name, their
// data contiguous with no gaps or trailing bytes, and the header padded with
// spaces to a multiple of 8 bytes, so every tensor is aligned to its element
// size.
func Write(path string, entries []Entry, metadata map[string]string) error {
	sorted := append([]Entry(nil), entries...)
	sort.SliceStable(sorted, func(i, j int) bool {
		a, b := sorted[i], sorted[j]
		if a.DType.Size() != b.DType.Size() {
			return a.DType.Size() > b.DType.Size()
		}
		return a.Name < b.Name
	})
	header := map[string]any{}
	if len(metadata) > 0 {
		header["__metadata__"] = metadata
	}
	var off int64
	for _, e := range sorted {
		if _, dup := header[e.Name]; dup || e.Name == "__metadata__" {
			return fmt.Errorf("safetensors: write %s: duplicate or reserved tensor name %q", path, e.Name)
		}
		if e.DType.Size() == 0 {
			return fmt.Errorf("safetensors: write %s: tensor %q: invalid dtype %v", path, e.Name, e.DType)
		}
		want := int64(e.Shape.NumElements()) * int64(e.DType.Size())
		if e.size() != want {
			return fmt.Errorf("safetensors: write %s: tensor %q: %d bytes for %s%v (want %d)", path, e.Name, e.size(), e.DType, e.Shape, want)
		}
		shape := e.Shape
		if shape == nil {
			shape = compute.Shape{}
		}
		header[e.Name] = map[string]any{"dtype": e.DType.String(), "shape": shape, "data_offsets": []int64{off, off + want}}
		off += want
	}
	js, err := json.Marshal(header)
	if err != nil {
		return fmt.Errorf("safetensors: write %s: %w", path, err)
	}
	for len(js)%8 != 0 {
		js = append(js, ' ')
	}
	tmp, err := atomicfile.CreateTemp(path, ".tmp-*")
	if err != nil {
		return fmt.Errorf("safetensors: write %s: %w", path, err)
	}
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	w := bufio.NewWriterSize(tmp, 1<<20)
	var lb [8]byte
	binary.LittleEndian.PutUint64(lb[:], uint64(len(js)))
	w.Write(lb[:])
	w.Write(js)
	for _, e := range sorted {
		if e.Data != nil || e.Stream == nil {
			w.Write(e.Data)
			continue
		}
		cw := &countingWriter{w: w}
		if err := e.Stream(cw); err != nil {
			return fmt.Errorf("safetensors: write %s: tensor %q: %w", path, e.Name, err)
		}
		if want := e.size(); cw.n != want {
			return fmt.Errorf("safetensors: write %s: tensor %q: streamed %d bytes, want %d", path, e.Name, cw.n, want)
		}
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("safetensors: write %s: %w", path, err)
	}
	ok = true // Commit removes the temporary file itself on failure
	if err := atomicfile.Commit(tmp, path); err != nil {
		return fmt.Errorf("safetensors: write %s: %w", path, err)
	}
	return nil
}

// countingWriter counts the bytes a streamed entry writes.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
