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
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
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
	if !json.Valid(js) {
		var v any
		return fail("header is not valid JSON", json.Unmarshal(js, &v))
	}
	names, raws, err := members(js)
	if err != nil {
		return fail("header is not valid JSON", err)
	}
	h := &Header{DataStart: 8 + int64(n), Tensors: make([]TensorInfo, 0, len(names))}
	dataLen := fileSize - h.DataStart
	seen := make(map[string]bool, len(names))
	for i, name := range names {
		msg := raws[i]
		if seen[name] {
			return fail(fmt.Sprintf("duplicate name %q", name), nil)
		}
		seen[name] = true
		if name == "__metadata__" {
			if err := json.Unmarshal(msg, &h.Metadata); err != nil || bytes.Equal(msg, []byte("null")) {
				return fail("__metadata__ is not a map of strings", err)
			}
			continue
		}
		e, err := parseEntry(msg)
		if err != nil {
			return fail(fmt.Sprintf("tensor %q: entry is not {dtype, shape, data_offsets}", name), err)
		}
		dt, err := compute.ParseDType(e.DType)
		if err != nil || dt.Size() == 0 {
			return fail(fmt.Sprintf("tensor %q: unsupported dtype %q", name, e.DType), nil)
		}
		if e.Shape == nil {
			return fail(fmt.Sprintf("tensor %q: missing shape", name), nil)
		}
		offs := e.DataOffsets
		if e.offsetsErr != nil || len(offs) != 2 {
			return fail(fmt.Sprintf("tensor %q: data_offsets must be two integers", name), e.offsetsErr)
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

// members returns the member names and values of a JSON object that is
// known to be valid, in document order. Values are sub-slices of js.
func members(js []byte) ([]string, [][]byte, error) {
	var names []string
	var values [][]byte
	err := eachMember(js, func(key, value []byte) error {
		name, err := jsonString(key)
		if err != nil {
			return err
		}
		names = append(names, name)
		values = append(values, value)
		return nil
	})
	return names, values, err
}

// eachMember calls fn with the raw key (quoted) and raw value of every
// member of the JSON object in js, which must be valid JSON.
func eachMember(js []byte, fn func(key, value []byte) error) error {
	i := skipSpace(js, 0)
	if i >= len(js) || js[i] != '{' {
		return errors.New("not an object")
	}
	i = skipSpace(js, i+1)
	if i < len(js) && js[i] == '}' {
		return nil
	}
	for i < len(js) {
		ks := i
		i = skipString(js, i)
		key := js[ks:i]
		i = skipSpace(js, i)
		if i >= len(js) || js[i] != ':' {
			return errors.New("malformed object")
		}
		i = skipSpace(js, i+1)
		vs := i
		i = skipValue(js, i)
		if err := fn(key, js[vs:i]); err != nil {
			return err
		}
		i = skipSpace(js, i)
		if i < len(js) && js[i] == ',' {
			i = skipSpace(js, i+1)
			continue
		}
		if i < len(js) && js[i] == '}' {
			return nil
		}
		return errors.New("malformed object")
	}
	return errors.New("unterminated object")
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] == '"'.
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return i
}

// skipValue returns the index after the (valid) value starting at b[i].
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				i = skipString(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return i
	}
	for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' && b[i] != ' ' && b[i] != '\t' && b[i] != '\n' && b[i] != '\r' {
		i++
	}
	return i
}

// jsonString decodes a quoted JSON string, fast when it has no escapes.
func jsonString(raw []byte) (string, error) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", fmt.Errorf("expected a string, got %.20s", raw)
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1]), nil
	}
	var s string
	err := json.Unmarshal(raw, &s)
	return s, err
}

// entry is a parsed tensor entry.
type entry struct {
	DType       string
	Shape       []int64
	DataOffsets []int64
	offsetsErr  error
}

// entryFields are a tensor entry's members, in the order of parseEntry's
// have flags.
var entryFields = [...]string{"dtype", "shape", "data_offsets"}

// parseEntry parses {"dtype": string, "shape": [int…], "data_offsets":
// [int…]} (valid JSON), rejecting other or repeated members and non-integer
// numbers.
func parseEntry(raw []byte) (entry, error) {
	var e entry
	if len(raw) == 0 || raw[0] != '{' {
		return e, fmt.Errorf("not an object")
	}
	var have [len(entryFields)]bool
	err := eachMember(raw, func(key, value []byte) error {
		k, err := jsonString(key)
		if err != nil {
			return err
		}
		i := slices.Index(entryFields[:], k)
		if i < 0 {
			return fmt.Errorf("unknown field %q", k)
		}
		if have[i] {
			return fmt.Errorf("repeated %q", k)
		}
		have[i] = true
		switch k {
		case "dtype":
			if e.DType, err = jsonString(value); err != nil {
				return fmt.Errorf("dtype: %w", err)
			}
		case "shape":
			if e.Shape, err = intArray(value); err != nil {
				return fmt.Errorf("shape: %w", err)
			}
		case "data_offsets":
			e.DataOffsets, e.offsetsErr = intArray(value)
		}
		return nil
	})
	if err == nil && !have[2] {
		e.offsetsErr = errors.New("missing")
	}
	return e, err
}

// intArray parses a JSON array of integers (valid JSON); null is nil.
func intArray(raw []byte) ([]int64, error) {
	if bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	if len(raw) < 2 || raw[0] != '[' {
		return nil, fmt.Errorf("expected an array of integers, got %.20s", raw)
	}
	out := []int64{}
	i := skipSpace(raw, 1)
	if raw[i] == ']' {
		return out, nil
	}
	for i < len(raw) {
		j := skipValue(raw, i)
		v, err := strconv.ParseInt(string(raw[i:j]), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not an integer", raw[i:j])
		}
		out = append(out, v)
		i = skipSpace(raw, j)
		if raw[i] == ']' {
			return out, nil
		}
		i = skipSpace(raw, i+1) // the comma
	}
	return nil, errors.New("unterminated array")
}
