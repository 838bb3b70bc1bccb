package cpu

import (
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"

	"h3studio/engine/compute"
)

// load returns t's elements as float32. For an aligned F32 tensor the slice
// shares storage; otherwise it is a converted copy.
func load(t *compute.Tensor) []float32 {
	if v, ok := f32View(t); ok {
		return v
	}
	return loadCopy(t)
}

// f32View is the storage of an F32 tensor aligned to 4 bytes as float32s;
// ok is false for other tensors.
func f32View(t *compute.Tensor) (v []float32, ok bool) {
	if t.DType() != compute.F32 {
		return nil, false
	}
	if b := bytesOf(t); len(b) > 0 && uintptr(unsafe.Pointer(&b[0]))%4 != 0 {
		return nil, false
	}
	return view[float32](t, "f32View", true), true
}

// loadOpt is load of an optional operand: nil for a nil tensor.
func loadOpt(t *compute.Tensor) []float32 {
	if t == nil {
		return nil
	}
	return load(t)
}

// loadCopy returns a fresh float32 copy of t's elements.
func loadCopy(t *compute.Tensor) []float32 {
	b := bytesOf(t)
	out := make([]float32, t.NumElements())
	switch t.DType() {
	case compute.F32:
		for i := range out {
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		}
	case compute.BF16:
		for i := range out {
			out[i] = compute.BF16ToF32(binary.LittleEndian.Uint16(b[2*i:]))
		}
	case compute.F16:
		for i := range out {
			out[i] = compute.F16ToF32(binary.LittleEndian.Uint16(b[2*i:]))
		}
	default:
		copy(out, compute.DecodeFloat32(t.DType(), b))
	}
	return out
}

// store writes v into t, rounding to t's dtype. v may share storage with t
// (the aligned F32 case of load), in which case nothing is copied.
func store(t *compute.Tensor, v []float32) {
	b := bytesOf(t)
	if len(v) != t.NumElements() {
		panic(fmt.Sprintf("cpu: store %d values into %v", len(v), t))
	}
	switch t.DType() {
	case compute.F32:
		if len(b) > 0 && len(v) > 0 && unsafe.Pointer(&b[0]) == unsafe.Pointer(&v[0]) {
			return
		}
		for i, f := range v {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
		}
	case compute.BF16:
		for i, f := range v {
			binary.LittleEndian.PutUint16(b[2*i:], compute.BF16FromF32(f))
		}
	case compute.F16:
		for i, f := range v {
			binary.LittleEndian.PutUint16(b[2*i:], compute.F16FromF32(f))
		}
	default:
		copy(b, compute.EncodeFloat32(t.DType(), v))
	}
}

// output returns a float32 slice to compute dst into: dst's own storage when
// it is aligned F32 (store is then a no-op), else scratch.
func output(dst *compute.Tensor) []float32 {
	if v, ok := f32View(dst); ok {
		return v
	}
	return make([]float32, dst.NumElements())
}

// indices reads an integer index tensor.
func indices(t *compute.Tensor) []int64 {
	if !t.DType().IsInt() {
		panic(fmt.Sprintf("cpu: index tensor %v is not integer", t))
	}
	return compute.DecodeInt64(t.DType(), bytesOf(t))
}

// rounder returns the rounding function of dt.
func rounder(dt compute.DType) func(float32) float32 {
	switch dt {
	case compute.BF16:
		return compute.RoundBF16
	case compute.F16:
		return compute.RoundF16
	}
	return func(f float32) float32 { return f }
}

func lowPrecision(dt compute.DType) bool { return dt == compute.BF16 || dt == compute.F16 }
