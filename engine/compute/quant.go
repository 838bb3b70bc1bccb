package compute

import (
	"fmt"
	"math"
)

// QuantFormat is an affine, group-wise quantization of a weight matrix
// [out, in] along its input axis — the scheme of MLX's `quantize`
// (mode "affine"): each group of GroupSize consecutive inputs of a row has
// one scale s and one bias b (both BF16), and an element is stored as the
// unsigned code q of Bits bits with ŵ = s·q + b.
type QuantFormat struct {
	Bits      int // 4 or 8
	GroupSize int // 64 (the DiT's); any multiple of 32 divisible by 32/Bits works
}

// Int8 and Int4 are the formats H3 Studio produces: group 64, 8 and 4 bits.
var (
	Int8 = QuantFormat{Bits: 8, GroupSize: 64}
	Int4 = QuantFormat{Bits: 4, GroupSize: 64}
)

func (f QuantFormat) String() string { return fmt.Sprintf("int%d/g%d", f.Bits, f.GroupSize) }

// Validate checks the format, and that in inputs split into whole groups.
func (f QuantFormat) Validate(in int) error {
	if f.Bits != 4 && f.Bits != 8 {
		return fmt.Errorf("compute: quantization: %d bits (want 4 or 8)", f.Bits)
	}
	if f.GroupSize < 32 || f.GroupSize%32 != 0 {
		return fmt.Errorf("compute: quantization: group size %d (want a multiple of 32)", f.GroupSize)
	}
	if in <= 0 || in%f.GroupSize != 0 {
		return fmt.Errorf("compute: quantization: %d inputs are not whole groups of %d", in, f.GroupSize)
	}
	return nil
}

// ForWidth is the format a weight of in inputs is quantized with: f, or f
// with group 32 (the smallest group MLX offers) when f's group does not
// divide in; ok is false when neither does (the weight stays unquantized).
// Every width of the released DiT is a multiple of 64; the tiny test models'
// are not all.
func (f QuantFormat) ForWidth(in int) (QuantFormat, bool) {
	if f.Validate(in) == nil {
		return f, true
	}
	g := f
	g.GroupSize = 32
	if g.Validate(in) == nil {
		return g, true
	}
	return f, false
}

// PerWord is the number of codes one uint32 word holds.
func (f QuantFormat) PerWord() int { return 32 / f.Bits }

// CodeWords is the number of code words of a row of in inputs.
func (f QuantFormat) CodeWords(in int) int { return in / f.PerWord() }

// Groups is the number of groups of a row of in inputs.
func (f QuantFormat) Groups(in int) int { return in / f.GroupSize }

// RowWords is the storage of one row in uint32 words: the code words, then
// one word per group holding the BF16 scale (low half) and bias (high half).
func (f QuantFormat) RowWords(in int) int { return f.CodeWords(in) + f.Groups(in) }

// Code extracts code j of a row's code words: MLX's packing, code j in word
// j/PerWord at bit (j mod PerWord)·Bits (little-endian words).
func (f QuantFormat) Code(codes []uint32, j int) uint32 {
	pw := f.PerWord()
	return codes[j/pw] >> (uint(j%pw) * uint(f.Bits)) & (1<<uint(f.Bits) - 1)
}

// GroupParams returns the scale and bias of group g of a row.
func (f QuantFormat) GroupParams(row []uint32, in, g int) (scale, bias float32) {
	w := row[f.CodeWords(in)+g]
	return BF16ToF32(uint16(w)), BF16ToF32(uint16(w >> 16))
}

// Dequant is the value of code q under (scale, bias): s·q + b in float32,
// the product rounded before the sum (no fused multiply-add), the one
// definition every backend's kernel approximates within the bound.
func Dequant(q uint32, scale, bias float32) float32 {
	return float32(float32(q)*scale) + bias
}

// DequantizeRow writes the in values of a stored row into dst.
func (f QuantFormat) DequantizeRow(dst []float32, row []uint32, in int) {
	pw := f.PerWord()
	mask := uint32(1)<<uint(f.Bits) - 1
	cw := f.CodeWords(in)
	gw := f.GroupSize / pw // code words per group
	for g := 0; g < f.Groups(in); g++ {
		p := row[cw+g]
		s, b := BF16ToF32(uint16(p)), BF16ToF32(uint16(p>>16))
		out := dst[g*f.GroupSize : (g+1)*f.GroupSize]
		for wi, w := range row[g*gw : (g+1)*gw] {
			o := out[wi*pw : (wi+1)*pw]
			for i := range o {
				o[i] = float32(float32(w>>(uint(i)*uint(f.Bits))&mask)*s) + b
			}
		}
	}
}

// QuantStep bounds the rounding error of one element of a group with
// scale s: |w − ŵ| ≤ |s|/2 for a code inside the range (quant.ErrorBound
// adds the clipping and the BF16 rounding of scale and bias).
func QuantStep(scale float32) float64 { return math.Abs(float64(scale)) / 2 }

// quantView marks a tensor as a quantized weight.
type quantView struct {
	f  QuantFormat
	in int
}

// Quantized tags t — U32 storage [out, f.RowWords(in)] in the row layout of
// RowWords — as the quantized weight [out, in] that MatMul multiplies by
// without dequantizing it in memory. It panics when the storage does not
// have that shape.
func Quantized(t *Tensor, f QuantFormat, in int) *Tensor {
	if err := f.Validate(in); err != nil {
		panic(err.Error())
	}
	if t.dtype != U32 || len(t.shape) != 2 || t.shape[1] != f.RowWords(in) {
		panic(fmt.Sprintf("compute: %v is not the %s storage of %d inputs (want U32[out, %d])", t, f, in, f.RowWords(in)))
	}
	v := *t
	v.shape = t.shape.Clone()
	v.q = &quantView{f: f, in: in}
	return &v
}

// Quant reports the quantization of a weight tagged by Quantized and its
// input width (ok false for an ordinary tensor).
func (t *Tensor) Quant() (f QuantFormat, in int, ok bool) {
	if t == nil || t.q == nil {
		return QuantFormat{}, 0, false
	}
	return t.q.f, t.q.in, true
}
