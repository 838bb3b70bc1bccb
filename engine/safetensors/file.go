package safetensors

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"sync"

	"h3studio/engine/compute"
)

// File is an open, validated safetensors file. Tensor data is a read-only
// memory mapping: views stay valid until Close. A File is safe for
// concurrent use.
type File struct {
	Path   string
	Header *Header
	byName map[string]int
	data   []byte // the whole file, mapped (nil when the file has no data)
	unmap  func() error
	// mappers registered data (compute.HostMapper); Close has them forget
	// it before unmapping, so no device view outlives the mapping.
	mu      sync.Mutex
	mappers []compute.HostMapper
}

// ReadHeader validates a file's header without mapping its data.
func ReadHeader(path string) (*Header, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("safetensors: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("safetensors: %w", err)
	}
	if st.IsDir() {
		return nil, &FormatError{Path: path, Rule: "is a directory, not a file"}
	}
	var lb [8]byte
	if _, err := io.ReadFull(f, lb[:]); err != nil {
		return nil, &FormatError{Path: path, Rule: "file shorter than the 8-byte header length"}
	}
	n := binary.LittleEndian.Uint64(lb[:])
	if n > MaxHeaderBytes || int64(n) > st.Size()-8 {
		_, err := ParseHeader(lb[:], st.Size())
		return nil, withPath(err, path)
	}
	buf := make([]byte, 8+n)
	copy(buf, lb[:])
	if _, err := io.ReadFull(f, buf[8:]); err != nil {
		return nil, &FormatError{Path: path, Rule: "header truncated", Err: err}
	}
	h, err := ParseHeader(buf, st.Size())
	return h, withPath(err, path)
}

func withPath(err error, path string) error {
	var fe *FormatError
	if errors.As(err, &fe) && fe.Path == "" {
		fe.Path = path
	}
	return err
}

// Open validates the header of the file at path and maps its data.
func Open(path string) (*File, error) {
	h, err := ReadHeader(path)
	if err != nil {
		return nil, err
	}
	f := &File{Path: path, Header: h, byName: make(map[string]int, len(h.Tensors))}
	for i, t := range h.Tensors {
		f.byName[t.Name] = i
	}
	data, unmap, err := mapFile(path)
	if err != nil {
		return nil, fmt.Errorf("safetensors: map %s: %w", path, err)
	}
	f.data, f.unmap = data, unmap
	registerMapping(path, data)
	// The file may have changed between the header read and the mapping.
	if len(h.Tensors) > 0 && int64(len(f.data)) < h.Tensors[len(h.Tensors)-1].End {
		f.Close()
		return nil, &FormatError{Path: path, Rule: "file truncated while opening"}
	}
	return f, nil
}

// Close unmaps the file, after every backend that registered the mapping
// has forgotten it (a backend waits for the work still reading it). Views
// handed out before become invalid.
func (f *File) Close() error {
	if f.unmap == nil {
		return nil
	}
	f.mu.Lock()
	hms := f.mappers
	f.mappers = nil
	f.mu.Unlock()
	for _, hm := range hms {
		hm.UnmapHost(f.data)
	}
	unregisterMapping(f.data)
	err := f.unmap()
	f.unmap, f.data = nil, nil
	return err
}

// Names lists the tensor names in name order.
func (f *File) Names() []string {
	n := make([]string, 0, len(f.Header.Tensors))
	for _, t := range f.Header.Tensors {
		n = append(n, t.Name)
	}
	sort.Strings(n)
	return n
}

// Info returns a tensor's description.
func (f *File) Info(name string) (TensorInfo, bool) {
	i, ok := f.byName[name]
	if !ok {
		return TensorInfo{}, false
	}
	return f.Header.Tensors[i], true
}

// Data returns the mapped bytes of a tensor (read-only; do not modify).
func (f *File) Data(name string) ([]byte, error) {
	t, ok := f.Info(name)
	if !ok {
		return nil, fmt.Errorf("safetensors: %s: no tensor %q", f.Path, name)
	}
	if f.data == nil && t.Bytes() > 0 {
		return nil, fmt.Errorf("safetensors: %s: file is closed", f.Path)
	}
	if t.Bytes() == 0 {
		return []byte{}, nil
	}
	return f.data[t.Begin:t.End:t.End], nil
}

// Entry returns a tensor as an Entry for Write, its Data the mapped bytes
// (valid while f is open).
func (f *File) Entry(name string) (Entry, error) {
	data, err := f.Data(name)
	if err != nil {
		return Entry{}, err
	}
	t, _ := f.Info(name)
	return Entry{Name: name, DType: t.DType, Shape: t.Shape, Data: data}, nil
}

// Mapping returns the whole mapped file (for backends that register the
// mapping with the device once and bind tensors by offset).
func (f *File) Mapping() []byte { return f.data }

// registered notes that hm registered the mapping holding name.
func (f *File) registered(name string, hm compute.HostMapper) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mappers = append(f.mappers, hm)
}

// deviceViewed reports whether a device registered the mapping.
func (f *File) deviceViewed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.mappers) > 0
}

// MappingOf returns the mapping holding tensor name (the whole file), or nil.
func (f *File) MappingOf(name string) []byte {
	if _, ok := f.byName[name]; !ok {
		return nil
	}
	return f.data
}
