package compute

import (
	"encoding/binary"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
)

// EncodeFloat32 converts float32 values to little-endian bytes of dtype dt
// (rounding to nearest even for BF16/F16; truncating toward zero for integer
// types).
func EncodeFloat32(dt DType, v []float32) []byte {
	out := make([]byte, len(v)*dt.Size())
	for i, f := range v {
		switch dt {
		case F32:
			binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(f))
		case BF16:
			binary.LittleEndian.PutUint16(out[2*i:], BF16FromF32(f))
		case F16:
			binary.LittleEndian.PutUint16(out[2*i:], F16FromF32(f))
		case F64:
			binary.LittleEndian.PutUint64(out[8*i:], math.Float64bits(float64(f)))
		case I64:
			binary.LittleEndian.PutUint64(out[8*i:], uint64(int64(f)))
		case I32:
			binary.LittleEndian.PutUint32(out[4*i:], uint32(int32(f)))
		case U8, Bool:
			out[i] = uint8(f)
		case I8:
			out[i] = uint8(int8(f))
		default:
			panic(fmt.Sprintf("compute: EncodeFloat32 to %v", dt))
		}
	}
	return out
}

// DecodeFloat32 converts little-endian bytes of dtype dt to float32 values.
func DecodeFloat32(dt DType, b []byte) []float32 {
	n := len(b) / dt.Size()
	out := make([]float32, n)
	for i := range out {
		switch dt {
		case F32:
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		case BF16:
			out[i] = BF16ToF32(binary.LittleEndian.Uint16(b[2*i:]))
		case F16:
			out[i] = F16ToF32(binary.LittleEndian.Uint16(b[2*i:]))
		case F64:
			out[i] = float32(math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:])))
		case I64:
			out[i] = float32(int64(binary.LittleEndian.Uint64(b[8*i:])))
		case I32:
			out[i] = float32(int32(binary.LittleEndian.Uint32(b[4*i:])))
		case U32:
			out[i] = float32(binary.LittleEndian.Uint32(b[4*i:]))
		case U8, Bool:
			out[i] = float32(b[i])
		case I8:
			out[i] = float32(int8(b[i]))
		default:
			panic(fmt.Sprintf("compute: DecodeFloat32 from %v", dt))
		}
	}
	return out
}

// EncodeInt64 converts integers to little-endian bytes of an integer dtype.
func EncodeInt64(dt DType, v []int64) []byte {
	out := make([]byte, len(v)*dt.Size())
	for i, x := range v {
		switch dt {
		case I64:
			binary.LittleEndian.PutUint64(out[8*i:], uint64(x))
		case I32:
			binary.LittleEndian.PutUint32(out[4*i:], uint32(int32(x)))
		case U32:
			binary.LittleEndian.PutUint32(out[4*i:], uint32(x))
		case U8, Bool, I8:
			out[i] = uint8(x)
		case F64:
			binary.LittleEndian.PutUint64(out[8*i:], math.Float64bits(float64(x)))
		case F32:
			binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(float32(x)))
		default:
			panic(fmt.Sprintf("compute: EncodeInt64 to %v", dt))
		}
	}
	return out
}

// DecodeInt64 converts little-endian integer (or float, truncated) bytes to int64.
func DecodeInt64(dt DType, b []byte) []int64 {
	n := len(b) / dt.Size()
	out := make([]int64, n)
	for i := range out {
		switch dt {
		case I64:
			out[i] = int64(binary.LittleEndian.Uint64(b[8*i:]))
		case I32:
			out[i] = int64(int32(binary.LittleEndian.Uint32(b[4*i:])))
		case U32:
			out[i] = int64(binary.LittleEndian.Uint32(b[4*i:]))
		case U8, Bool:
			out[i] = int64(b[i])
		case I8:
			out[i] = int64(int8(b[i]))
		default:
			f := DecodeFloat32(dt, b[i*dt.Size():(i+1)*dt.Size()])
			out[i] = int64(f[0])
		}
	}
	return out
}

// EncodeFloat64 converts float64 values to little-endian F64 bytes.
func EncodeFloat64(v []float64) []byte {
	out := make([]byte, 8*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint64(out[8*i:], math.Float64bits(f))
	}
	return out
}

// FromFloat32 allocates a tensor of dtype dt on b and uploads v (rounded).
func FromFloat32(b Backend, dt DType, shape Shape, v []float32) (*Tensor, error) {
	if shape.NumElements() != len(v) {
		return nil, fmt.Errorf("compute: FromFloat32: %d values for shape %v", len(v), shape)
	}
	t, err := b.Alloc(dt, shape...)
	if err != nil {
		return nil, err
	}
	return t, b.Upload(t, EncodeFloat32(dt, v))
}

// FromInt64 allocates an integer tensor of dtype dt on b and uploads v.
func FromInt64(b Backend, dt DType, shape Shape, v []int64) (*Tensor, error) {
	if shape.NumElements() != len(v) {
		return nil, fmt.Errorf("compute: FromInt64: %d values for shape %v", len(v), shape)
	}
	t, err := b.Alloc(dt, shape...)
	if err != nil {
		return nil, err
	}
	return t, b.Upload(t, EncodeInt64(dt, v))
}

// ToFloat32 downloads t and converts it to float32 values.
func ToFloat32(t *Tensor) ([]float32, error) {
	b := t.Backend()
	if b == nil {
		return nil, fmt.Errorf("compute: ToFloat32: %v has no storage", t)
	}
	raw := make([]byte, t.Bytes())
	if err := b.Download(raw, t); err != nil {
		return nil, err
	}
	return DecodeFloat32(t.DType(), raw), nil
}

// ToInt64 downloads an integer tensor.
func ToInt64(t *Tensor) ([]int64, error) {
	b := t.Backend()
	if b == nil {
		return nil, fmt.Errorf("compute: ToInt64: %v has no storage", t)
	}
	raw := make([]byte, t.Bytes())
	if err := b.Download(raw, t); err != nil {
		return nil, err
	}
	return DecodeInt64(t.DType(), raw), nil
}

// ConvertFloat converts little-endian values of dtype src to dtype dst, as
// EncodeFloat32(dst, DecodeFloat32(src, b)) does, in chunks on all cores:
// binding a 50-block checkpoint's weights upcast to float32 converts 33 B
// values, which one core does at about 150 M values a second.
func ConvertFloat(dst, src DType, b []byte) []byte {
	n := len(b) / src.Size()
	out := make([]byte, n*dst.Size())
	const chunk = 1 << 16
	chunks := (n + chunk - 1) / chunk
	workers := min(runtime.GOMAXPROCS(0), chunks)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				c := int(next.Add(1) - 1)
				if c >= chunks {
					return
				}
				lo, hi := c*chunk, min(n, (c+1)*chunk)
				copy(out[lo*dst.Size():], EncodeFloat32(dst, DecodeFloat32(src, b[lo*src.Size():hi*src.Size()])))
			}
		}()
	}
	wg.Wait()
	return out
}

// uploadChunk is how many values UploadConverted converts at a time: 16 MiB
// of float32, enough for ConvertFloat to keep every core busy.
const uploadChunk = 1 << 22

// UploadConverted uploads src, little-endian values of the float dtype from,
// into dst (a float dtype), converting a bounded run of values at a time, so
// the host never holds a converted copy of the whole tensor: binding one
// released DiT block upcast to float32 would otherwise leave 2.4 GB of
// garbage in the Go heap, which the process keeps until the collector runs.
// The bytes stored are ConvertFloat's.
func UploadConverted(b Backend, dst *Tensor, from DType, src []byte) error {
	n := dst.NumElements()
	if len(src) != n*from.Size() {
		return fmt.Errorf("compute: UploadConverted to %v: %d bytes of %v given, %d needed", dst, len(src), from, n*from.Size())
	}
	if n == 0 {
		return nil
	}
	flat := dst.Reshape(n)
	for lo := 0; lo < n; lo += uploadChunk {
		hi := min(n, lo+uploadChunk)
		if err := b.Upload(flat.Rows(lo, hi), ConvertFloat(dst.DType(), from, src[lo*from.Size():hi*from.Size()])); err != nil {
			return err
		}
	}
	return nil
}
