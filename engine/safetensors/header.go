// Package safetensors reads and writes checkpoint files in the safetensors
// format (https://github.com/huggingface/safetensors, format section): an
// 8-byte little-endian header length N, N bytes of JSON mapping tensor names
// to {dtype, shape, data_offsets} plus an optional "__metadata__" string map,
// then the raw little-endian tensor data. Offsets are relative to the end of
// the header.
//
// Files are memory-mapped and tensors are handed out as zero-copy views.
// Headers are validated strictly before any tensor is used: the header must be
// a JSON object within the file, every dtype known, every shape × dtype size
// equal to its byte span, every span inside the file and no two spans
// overlapping. Sharded checkpoints are read through their
// *.safetensors.index.json; a Binder hands tensors to one model component and
// accounts for every name (missing, unexpected and mis-shaped tensors are
// reported by name).
package safetensors

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"sort"

	"h3studio/engine/compute"
)

// MaxHeaderBytes bounds the JSON header (the reference implementation uses
// 100 MB as well).
const MaxHeaderBytes = 100 << 20

// FormatError reports a malformed file: which file and which rule.
type FormatError struct {
	Path string // file path ("" when parsing bytes)
	Rule string // the rule broken, e.g. "header length past end of file"
	Err  error  // detail, may be nil
}

func (e *FormatError) Error() string {
	p := e.Path
	if p == "" {
		p = "<bytes>"
	}
	if e.Err != nil {
		return fmt.Sprintf("safetensors: %s: %s: %v", p, e.Rule, e.Err)
	}
	return fmt.Sprintf("safetensors: %s: %s", p, e.Rule)
}

func (e *FormatError) Unwrap() error { return e.Err }

// TensorInfo describes one tensor of a file.
type TensorInfo struct {
	Name  string
	DType compute.DType
	Shape compute.Shape
	// Begin and End are absolute byte offsets in the file.
	Begin, End int64
}

// Bytes is the size of the tensor's data.
func (t TensorInfo) Bytes() int64 { return t.End - t.Begin }

// Header is a parsed and validated header.
type Header struct {
	Tensors  []TensorInfo // sorted by Begin
	Metadata map[string]string
	// DataStart is the absolute offset of the data section (8 + N).
	DataStart int64
}

type rawEntry struct {
	DType       string          `json:"dtype"`
	Shape       []int64         `json:"shape"`
	DataOffsets json.RawMessage `json:"data_offsets"`
}

// ParseHeader validates the header of a safetensors file given its first
// bytes (at least 8 + N of them) and the total file size.
func ParseHeader(prefix []byte, fileSize int64) (*Header, error) {
	fail := func(rule string, err error) (*Header, error) {
		return nil, &FormatError{Rule: rule, Err: err}
	}
	if fileSize < 8 || len(prefix) < 8 {
		return fail("file shorter than the 8-byte header length", nil)
	}
	n := binary.LittleEndian.Uint64(prefix[:8])
	if n > MaxHeaderBytes {
		return fail("header length past end of file", fmt.Errorf("%d bytes exceeds the %d-byte header limit", n, MaxHeaderBytes))
	}
	if int64(n) > fileSize-8 {
		return fail("header length past end of file", fmt.Errorf("header of %d bytes in a %d-byte file", n, fileSize))
	}
	if n < 2 {
		return fail("header is not a JSON object", fmt.Errorf("header of %d bytes", n))
	}
	if int64(len(prefix)) < 8+int64(n) {
		return fail("header truncated", nil)
	}
	js := prefix[8 : 8+n]
	// Trailing spaces are allowed padding.
	js = bytes.TrimRight(js, " ")
	if len(js) == 0 || js[0] != '{' {
		return fail("header is not a JSON object", nil)
	}
	var raw map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		return fail("header is not valid JSON", err)
	}
	if dec.More() {
		return fail("header has trailing data after the JSON object", nil)
	}
	h := &Header{DataStart: 8 + int64(n)}
	dataLen := fileSize - h.DataStart
	for name, msg := range raw {
		if name == "__metadata__" {
			if err := json.Unmarshal(msg, &h.Metadata); err != nil {
				return fail("__metadata__ is not a map of strings", err)
			}
			continue
		}
		var e rawEntry
		d := json.NewDecoder(bytes.NewReader(msg))
		d.DisallowUnknownFields()
		if err := d.Decode(&e); err != nil {
			return fail(fmt.Sprintf("tensor %q: entry is not {dtype, shape, data_offsets}", name), err)
		}
		dt, err := compute.ParseDType(e.DType)
		if err != nil || dt.Size() == 0 {
			return fail(fmt.Sprintf("tensor %q: unsupported dtype %q", name, e.DType), nil)
		}
		if e.Shape == nil {
			return fail(fmt.Sprintf("tensor %q: missing shape", name), nil)
		}
		var offs []int64
		if err := json.Unmarshal(e.DataOffsets, &offs); err != nil || len(offs) != 2 {
			return fail(fmt.Sprintf("tensor %q: data_offsets must be two integers", name), err)
		}
		shape := make(compute.Shape, len(e.Shape))
		count := int64(1)
		for i, s := range e.Shape {
			if s < 0 || s > 1<<40 {
				return fail(fmt.Sprintf("tensor %q: invalid dimension %d", name, s), nil)
			}
			shape[i] = int(s)
			if count != 0 && s != 0 && count > (1<<62)/s {
				return fail(fmt.Sprintf("tensor %q: shape %v overflows", name, e.Shape), nil)
			}
			count *= s
		}
		if offs[0] < 0 || offs[1] < offs[0] {
			return fail(fmt.Sprintf("tensor %q: data_offsets [%d, %d] are not ordered", name, offs[0], offs[1]), nil)
		}
		if offs[1] > dataLen {
			return fail(fmt.Sprintf("tensor %q: data_offsets [%d, %d] beyond the %d data bytes of the file (file truncated?)", name, offs[0], offs[1], dataLen), nil)
		}
		if want := count * int64(dt.Size()); offs[1]-offs[0] != want {
			return fail(fmt.Sprintf("tensor %q: dtype/shape mismatch: %s%v needs %d bytes, data_offsets span %d", name, dt, shape, want, offs[1]-offs[0]), nil)
		}
		h.Tensors = append(h.Tensors, TensorInfo{Name: name, DType: dt, Shape: shape, Begin: h.DataStart + offs[0], End: h.DataStart + offs[1]})
	}
	sort.Slice(h.Tensors, func(i, j int) bool {
		a, b := h.Tensors[i], h.Tensors[j]
		if a.Begin != b.Begin {
			return a.Begin < b.Begin
		}
		return a.Name < b.Name
	})
	for i := 1; i < len(h.Tensors); i++ {
		a, b := h.Tensors[i-1], h.Tensors[i]
		if b.Begin < a.End {
			return fail(fmt.Sprintf("tensors %q and %q overlap", a.Name, b.Name), nil)
		}
	}
	return h, nil
}
