package safetensors

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"

	"h3studio/engine/compute"
)

// file builds safetensors bytes from a header and a data length (zeros).
func file(header string, data int) []byte {
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(header)))
	b = append(b, header...)
	return append(b, make([]byte, data)...)
}

// rawFile builds bytes with an explicit header length field.
func rawFile(n uint64, rest string) []byte {
	return append(binary.LittleEndian.AppendUint64(nil, n), rest...)
}

func TestParseHeaderValid(t *testing.T) {
	hdr := `{"__metadata__":{"format":"pt","x":"y"},` +
		`"b":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]},` +
		`"a":{"dtype":"BF16","shape":[],"data_offsets":[24,26]},` +
		`"empty":{"dtype":"F64","shape":[0,5],"data_offsets":[26,26]},` +
		`"c":{"dtype":"I64","shape":[1],"data_offsets":[26,34]},` +
		`"d":{"dtype":"U8","shape":[3],"data_offsets":[34,37]},` +
		`"e":{"dtype":"I32","shape":[1],"data_offsets":[37,41]},` +
		`"f":{"dtype":"F16","shape":[1,1],"data_offsets":[41,43]}}    `
	b := file(hdr, 43)
	h, err := ParseHeader(b, int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Tensors) != 7 || h.Metadata["format"] != "pt" || h.DataStart != int64(8+len(hdr)) {
		t.Fatalf("parsed %+v", h)
	}
	want := map[string]struct {
		dt    compute.DType
		shape string
		bytes int64
	}{
		"b": {compute.F32, "[2 3]", 24}, "a": {compute.BF16, "[]", 2}, "empty": {compute.F64, "[0 5]", 0},
		"c": {compute.I64, "[1]", 8}, "d": {compute.U8, "[3]", 3}, "e": {compute.I32, "[1]", 4}, "f": {compute.F16, "[1 1]", 2},
	}
	for _, ti := range h.Tensors {
		w := want[ti.Name]
		if ti.DType != w.dt || fmt.Sprint([]int(ti.Shape)) != w.shape || ti.Bytes() != w.bytes {
			t.Errorf("%s: %v %v %d bytes, want %v %s %d", ti.Name, ti.DType, ti.Shape, ti.Bytes(), w.dt, w.shape, w.bytes)
		}
	}
	for i := 1; i < len(h.Tensors); i++ {
		if h.Tensors[i].Begin < h.Tensors[i-1].End {
			t.Fatal("tensors not sorted by offset")
		}
	}
	// An empty header object is a valid empty file.
	if _, err := ParseHeader(file(`{}`, 0), 10); err != nil {
		t.Errorf("empty file: %v", err)
	}
}

// Every malformed-input rule, with the rule text the error must name.
func TestParseHeaderRules(t *testing.T) {
	x := func(entry string) string { return `{"x":` + entry + `}` }
	ok := `{"dtype":"F32","shape":[4],"data_offsets":[0,16]}`
	cases := []struct {
		name string
		b    []byte
		size int64 // 0: len(b)
		rule string
	}{
		{"empty file", nil, 0, "shorter than the 8-byte header length"},
		{"7 bytes", []byte{1, 2, 3, 4, 5, 6, 7}, 0, "shorter than the 8-byte header length"},
		{"length beyond file", rawFile(100, "{}"), 0, "header length past end of file"},
		{"length beyond limit", rawFile(MaxHeaderBytes+1, "{}"), 0, "header length past end of file"},
		{"length all ones", rawFile(1<<64-1, "{}"), 0, "header length past end of file"},
		{"prefix shorter than header", rawFile(10, "{}"), 100, "header truncated"},
		{"not an object", file(`[1,2]`, 0), 0, "not a JSON object"},
		{"only spaces", file(`        `, 0), 0, "not a JSON object"},
		{"zero length", rawFile(0, ""), 0, "not a JSON object"},
		{"invalid json", file(`{ not json`, 0), 0, "not valid JSON"},
		{"truncated json", file(`{"x":{"dtype":"F32"`, 0), 0, "not valid JSON"},
		{"trailing data", file(`{}{}`, 0), 0, "not valid JSON"},
		{"invalid utf-8", file("{\"\xff\":1}", 0), 0, "not valid UTF-8"},
		{"duplicate name", file(`{"x":`+ok+`,"x":`+ok+`}`, 16), 0, `duplicate name "x"`},
		{"metadata not strings", file(`{"__metadata__":{"a":1}}`, 0), 0, "__metadata__ is not a map of strings"},
		{"metadata null", file(`{"__metadata__":null}`, 0), 0, "__metadata__ is not a map of strings"},
		{"entry not object", file(x(`5`), 0), 0, "entry is not {dtype, shape, data_offsets}"},
		{"entry null", file(x(`null`), 0), 0, "entry is not {dtype, shape, data_offsets}"},
		{"repeated field", file(x(`{"dtype":"F32","dtype":"F32","shape":[4],"data_offsets":[0,16]}`), 16), 0, `repeated "dtype"`},
		{"repeated offsets", file(x(`{"dtype":"F32","shape":[4],"data_offsets":[0,16],"data_offsets":[0,16]}`), 16), 0, `repeated "data_offsets"`},
		{"unknown field", file(x(`{"dtype":"F32","shape":[4],"data_offsets":[0,16],"extra":1}`), 16), 0, "entry is not {dtype, shape, data_offsets}"},
		{"unsupported dtype", file(x(`{"dtype":"F8_E4M3","shape":[4],"data_offsets":[0,4]}`), 4), 0, `unsupported dtype "F8_E4M3"`},
		{"missing dtype", file(x(`{"shape":[4],"data_offsets":[0,16]}`), 16), 0, `unsupported dtype ""`},
		{"lowercase dtype", file(x(`{"dtype":"f32","shape":[4],"data_offsets":[0,16]}`), 16), 0, `unsupported dtype "f32"`},
		{"missing shape", file(x(`{"dtype":"F32","data_offsets":[0,16]}`), 16), 0, "missing shape"},
		{"negative dim", file(x(`{"dtype":"F32","shape":[-4],"data_offsets":[0,16]}`), 16), 0, "negative dimension"},
		{"fractional dim", file(x(`{"dtype":"F32","shape":[1.5],"data_offsets":[0,16]}`), 16), 0, "entry is not"},
		{"huge shape", file(x(`{"dtype":"F32","shape":[4294967296,4294967296,16],"data_offsets":[0,16]}`), 16), 0, "too large"},
		{"missing offsets", file(x(`{"dtype":"F32","shape":[4]}`), 16), 0, "data_offsets must be two integers"},
		{"three offsets", file(x(`{"dtype":"F32","shape":[4],"data_offsets":[0,8,16]}`), 16), 0, "data_offsets must be two integers"},
		{"float offsets", file(x(`{"dtype":"F32","shape":[4],"data_offsets":[0,16.5]}`), 16), 0, "data_offsets must be two integers"},
		{"string offsets", file(x(`{"dtype":"F32","shape":[4],"data_offsets":"0,16"}`), 16), 0, "data_offsets must be two integers"},
		{"offsets reversed", file(x(`{"dtype":"F32","shape":[4],"data_offsets":[16,0]}`), 16), 0, "are not ordered"},
		{"negative offset", file(x(`{"dtype":"F32","shape":[0],"data_offsets":[-4,-4]}`), 16), 0, "are not ordered"},
		{"offsets beyond file", file(x(`{"dtype":"F32","shape":[4],"data_offsets":[0,99]}`), 16), 0, "beyond the 16 data bytes of the file"},
		{"truncated data", file(x(ok), 10), 0, "beyond the 10 data bytes"},
		{"dtype/shape mismatch", file(x(`{"dtype":"F32","shape":[3],"data_offsets":[0,16]}`), 16), 0, "dtype/shape mismatch: F32[3] needs 12 bytes, data_offsets span 16"},
		{"bf16 mismatch", file(x(`{"dtype":"BF16","shape":[4],"data_offsets":[0,16]}`), 16), 0, "dtype/shape mismatch"},
		{"overlap", file(`{"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},"b":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}}`, 16), 0, `tensors "a" and "b" overlap`},
		{"same span twice", file(`{"a":`+ok+`,"b":`+ok+`}`, 16), 0, "overlap"},
		{"gap", file(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[12,16]}}`, 16), 0, `gap of 4 bytes before tensor "b"`},
		{"leading gap", file(x(`{"dtype":"F32","shape":[1],"data_offsets":[4,8]}`), 8), 0, "gap of 4 bytes before tensor"},
		{"trailing bytes", file(x(ok), 20), 0, "4 bytes after the last tensor"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			size := c.size
			if size == 0 {
				size = int64(len(c.b))
			}
			h, err := ParseHeader(c.b, size)
			var fe *FormatError
			if err == nil || !errors.As(err, &fe) {
				t.Fatalf("accepted (%+v), want a FormatError about %q", h, c.rule)
			}
			if !strings.Contains(err.Error(), c.rule) {
				t.Fatalf("error %q does not name the rule %q", err, c.rule)
			}
		})
	}
}

func TestFormatErrorNamesFile(t *testing.T) {
	e := &FormatError{Path: "dir/model.safetensors", Rule: "header is not valid JSON", Err: errors.New("bad")}
	if got := e.Error(); got != "safetensors: dir/model.safetensors: header is not valid JSON: bad" {
		t.Errorf("Error() = %q", got)
	}
	if (&FormatError{Rule: "r"}).Error() != "safetensors: <bytes>: r" {
		t.Error("path-less error")
	}
}

// FuzzParseHeader: arbitrary bytes never panic, and an accepted header
// always describes tensors that tile the data section exactly.
func FuzzParseHeader(f *testing.F) {
	f.Add(file(`{"x":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}}`, 16))
	f.Add(file(`{"__metadata__":{"a":"b"},"y":{"dtype":"BF16","shape":[2,1],"data_offsets":[0,4]},"x":{"dtype":"U8","shape":[],"data_offsets":[4,5]}}  `, 5))
	f.Add(file(`{"x":{"dtype":"F32","shape":[4],"data_offsets":[0,99]}}`, 16))
	f.Add(rawFile(1<<40, "{}"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := ParseHeader(b, int64(len(b)))
		if err != nil {
			var fe *FormatError
			if !errors.As(err, &fe) || fe.Rule == "" {
				t.Fatalf("error %v is not a FormatError with a rule", err)
			}
			return
		}
		cur := h.DataStart
		for _, ti := range h.Tensors {
			if ti.Begin != cur || ti.End < ti.Begin || ti.End > int64(len(b)) {
				t.Fatalf("accepted tensor %s [%d,%d) at cursor %d in %d bytes", ti.Name, ti.Begin, ti.End, cur, len(b))
			}
			if int64(ti.Shape.NumElements())*int64(ti.DType.Size()) != ti.Bytes() {
				t.Fatalf("accepted tensor %s: %v %v in %d bytes", ti.Name, ti.DType, ti.Shape, ti.Bytes())
			}
			cur = ti.End
		}
		if cur != int64(len(b)) {
			t.Fatalf("accepted header leaves %d trailing bytes", int64(len(b))-cur)
		}
	})
}
