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
	"io"
	"sort"
	"unicode/utf8"

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

// maxElements bounds a tensor's element count (and hence its byte size)
// so that size arithmetic cannot overflow.
const maxElements = 1 << 58

// ParseHeader validates the header of a safetensors file given its first
// bytes (at least 8 + N of them) and the total file size. The rules are those
// of the reference implementation (safetensors' Metadata::validate), checked
// in this order, the first broken one reported:
//
//   - the 8-byte length N is present, at most MaxHeaderBytes, and the N
//     header bytes lie inside the file;
//   - the header is one JSON object (space padding allowed after it) with no
//     duplicate names, "__metadata__" (optional) maps strings to strings,
//     and every other entry is exactly {dtype, shape, data_offsets};
//   - every dtype is supported (BF16, F16, F32, F64, I64, I32, U8; I8 and
//     BOOL too), every dimension is a non-negative integer, data_offsets are
//     two ordered non-negative integers inside the file, and the span equals
//     the element count times the dtype size;
//   - sorted by offset, the spans tile the data section exactly: the first
//     starts at 0, each starts where the previous ended (no overlap, no gap),
//     and the last ends at the end of the file (no trailing bytes).
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
	if int64(len(prefix)) < 8+int64(n) {
		return fail("header truncated", nil)
	}
	js := bytes.TrimRight(prefix[8:8+n], " ")
	if len(js) == 0 || js[0] != '{' {
		return fail("header is not a JSON object", nil)
	}
	if !utf8.Valid(js) {
		return fail("header is not valid UTF-8", nil)
	}
	names, raws, err := splitObject(js)
	if err != nil {
		return fail("header is not valid JSON", err)
	}
	h := &Header{DataStart: 8 + int64(n)}
	dataLen := fileSize - h.DataStart
	seen := make(map[string]bool, len(names))
	for i, name := range names {
		msg := raws[i]
		if seen[name] {
			return fail(fmt.Sprintf("duplicate name %q", name), nil)
		}
		seen[name] = true
		if name == "__metadata__" {
			if err := json.Unmarshal(msg, &h.Metadata); err != nil || bytes.Equal(bytes.TrimSpace(msg), []byte("null")) {
				return fail("__metadata__ is not a map of strings", err)
			}
			continue
		}
		var e rawEntry
		d := json.NewDecoder(bytes.NewReader(msg))
		d.DisallowUnknownFields()
		if err := d.Decode(&e); err != nil || msg[0] != '{' {
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
			if s < 0 {
				return fail(fmt.Sprintf("tensor %q: negative dimension %d in shape %v", name, s, e.Shape), nil)
			}
			if s != 0 && count > maxElements/s {
				return fail(fmt.Sprintf("tensor %q: shape %v is too large", name, e.Shape), nil)
			}
			count *= s
			shape[i] = int(s)
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
		if a.End != b.End {
			return a.End < b.End
		}
		return a.Name < b.Name
	})
	cursor := h.DataStart
	for i, t := range h.Tensors {
		switch {
		case t.Begin < cursor:
			return fail(fmt.Sprintf("tensors %q and %q overlap", h.Tensors[i-1].Name, t.Name), nil)
		case t.Begin > cursor:
			return fail(fmt.Sprintf("gap of %d bytes before tensor %q (data must be contiguous)", t.Begin-cursor, t.Name), nil)
		}
		cursor = t.End
	}
	if cursor != fileSize {
		return fail(fmt.Sprintf("%d bytes after the last tensor (data must end with the last tensor)", fileSize-cursor), nil)
	}
	return h, nil
}

// splitObject returns the member names and raw values of a JSON object, in
// document order, rejecting anything after the object.
func splitObject(js []byte) ([]string, []json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil {
		return nil, nil, err
	} else if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, nil, fmt.Errorf("not an object")
	}
	var names []string
	var raws []json.RawMessage
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		name, ok := tok.(string)
		if !ok {
			return nil, nil, fmt.Errorf("object key is not a string")
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, nil, err
		}
		names = append(names, name)
		raws = append(raws, raw)
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, nil, fmt.Errorf("trailing data after the JSON object")
	}
	return names, raws, nil
}
