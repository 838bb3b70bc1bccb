package compute

import (
	"fmt"
	"math"
)

// DType is the element type of a tensor. The names follow the safetensors
// specification ("F32", "BF16", …).
type DType uint8

// The element types H3 Studio reads from checkpoints or computes with.
const (
	Invalid DType = iota
	F32
	F16
	BF16
	F64
	I64
	I32
	U8
	I8
	Bool
	// U32 holds packed words (the 4- and 8-bit codes of quantized weights,
	// safetensors "U32").
	U32
)

var dtypeNames = [...]string{Invalid: "invalid", F32: "F32", F16: "F16", BF16: "BF16", F64: "F64", I64: "I64", I32: "I32", U8: "U8", I8: "I8", Bool: "BOOL", U32: "U32"}
var dtypeSizes = [...]int{Invalid: 0, F32: 4, F16: 2, BF16: 2, F64: 8, I64: 8, I32: 4, U8: 1, I8: 1, Bool: 1, U32: 4}

// String returns the safetensors spelling of d.
func (d DType) String() string {
	if int(d) < len(dtypeNames) {
		return dtypeNames[d]
	}
	return fmt.Sprintf("DType(%d)", uint8(d))
}

// Size is the number of bytes of one element.
func (d DType) Size() int {
	if int(d) < len(dtypeSizes) {
		return dtypeSizes[d]
	}
	return 0
}

// IsFloat reports whether d is a floating-point type.
func (d DType) IsFloat() bool { return d == F32 || d == F16 || d == BF16 || d == F64 }

// IsInt reports whether d is an integer type.
func (d DType) IsInt() bool {
	return d == I64 || d == I32 || d == U8 || d == I8 || d == Bool || d == U32
}

// ParseDType parses a safetensors dtype string.
func ParseDType(s string) (DType, error) {
	for i, n := range dtypeNames {
		if i != 0 && n == s {
			return DType(i), nil
		}
	}
	return Invalid, fmt.Errorf("compute: unknown dtype %q", s)
}

// BF16FromF32 rounds f to bfloat16 with round-to-nearest-even, the rounding
// torch and the H3 reference use. NaN stays NaN (quiet); ±Inf and overflow
// behave as IEEE rounding does.
func BF16FromF32(f float32) uint16 {
	b := math.Float32bits(f)
	if b&0x7fffffff > 0x7f800000 { // NaN: keep sign, force a quiet payload
		return uint16(b>>16) | 0x0040
	}
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}

// BF16ToF32 widens a bfloat16 value exactly.
func BF16ToF32(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// RoundBF16 returns f rounded to the nearest bfloat16 value, as a float32.
func RoundBF16(f float32) float32 { return BF16ToF32(BF16FromF32(f)) }

// F16FromF32 rounds f to IEEE binary16 with round-to-nearest-even, including
// subnormal results; values beyond the range become ±Inf.
func F16FromF32(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23) & 0xff
	man := b & 0x7fffff
	if exp == 0xff { // Inf or NaN
		if man != 0 {
			return sign | 0x7e00 | uint16(man>>13)
		}
		return sign | 0x7c00
	}
	e := exp - 127 + 15
	if e >= 0x1f {
		return sign | 0x7c00
	}
	if e <= 0 {
		// Subnormal half (or zero). Shift the 24-bit significand right.
		if e < -10 {
			return sign
		}
		m := man | 0x800000
		shift := uint32(14 - e)
		half := uint32(1) << (shift - 1)
		rem := m & (1<<shift - 1)
		r := m >> shift
		if rem > half || (rem == half && r&1 == 1) {
			r++
		}
		return sign | uint16(r)
	}
	r := uint32(e)<<10 | man>>13
	rem := man & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && r&1 == 1) {
		r++ // may carry into the exponent, which is the correct result (up to Inf)
	}
	return sign | uint16(r)
}

// F16ToF32 widens an IEEE binary16 value exactly.
func F16ToF32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	man := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | man<<13)
	case exp == 0:
		if man == 0 {
			return math.Float32frombits(sign)
		}
		// subnormal: value = man · 2^-24
		v := float32(man) * (1.0 / (1 << 24))
		if sign != 0 {
			v = -v
		}
		return v
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | man<<13)
}

// RoundF16 returns f rounded to the nearest binary16 value, as a float32.
func RoundF16(f float32) float32 { return F16ToF32(F16FromF32(f)) }

// Round returns f rounded to the precision of d (F32 for integer types is
// not meaningful and returns f unchanged).
func Round(d DType, f float32) float32 {
	switch d {
	case BF16:
		return RoundBF16(f)
	case F16:
		return RoundF16(f)
	}
	return f
}
