// Package quant quantizes weight matrices with MLX's affine group-wise
// scheme (compute.QuantFormat: group 64, 4 or 8 bits, a BF16 scale and bias
// per group, codes packed little-endian in uint32 words), converts between
// MLX's three-tensor form (weight, scales, biases) and the one-buffer row
// layout the kernels read, and keeps a quantized cache of a BF16 checkpoint
// (cache.go). Everything here is host-side and pure.
package quant

import (
	"fmt"
	"math"

	"h3studio/engine/compute"
)

// eps is MLX's smallest scale: a constant group gets scale eps.
const eps = 1e-7

// Quantize quantizes w [out, in] (row-major float32) into the row layout of
// compute.QuantFormat.RowWords, as MLX's `quantize` (mode "affine") does:
// per group, with lo = min and hi = max,
//
//	scale = max((hi − lo)/(2^bits − 1), 1e-7), negated unless |lo| > |hi|
//	edge  = lo when |lo| > |hi|, else hi        (the larger-magnitude end)
//	q0    = round(edge/scale)
//	scale = edge/q0 when q0 ≠ 0;  bias = edge when q0 ≠ 0, else 0
//	code  = clamp(round((w − bias)/scale), 0, 2^bits − 1)
//
// in float32, rounding half to even; scale and bias are then rounded to
// BF16. This is bit for bit what mlx.core.quantize 0.32 computes for BF16
// weights (TestAgainstMLX).
func Quantize(w []float32, out, in int, f compute.QuantFormat) ([]uint32, error) {
	if err := f.Validate(in); err != nil {
		return nil, err
	}
	if len(w) != out*in {
		return nil, fmt.Errorf("quant: %d values for a [%d, %d] matrix", len(w), out, in)
	}
	rw := f.RowWords(in)
	dst := make([]uint32, out*rw)
	for r := 0; r < out; r++ {
		quantizeRow(dst[r*rw:(r+1)*rw], w[r*in:(r+1)*in], f)
	}
	return dst, nil
}

func quantizeRow(dst []uint32, w []float32, f compute.QuantFormat) {
	in := len(w)
	nBins := float32(int(1)<<f.Bits - 1)
	cw := f.CodeWords(in)
	pw := f.PerWord()
	clear(dst[:cw])
	for g := 0; g < f.Groups(in); g++ {
		grp := w[g*f.GroupSize : (g+1)*f.GroupSize]
		lo, hi := grp[0], grp[0]
		for _, v := range grp {
			lo, hi = min(lo, v), max(hi, v)
		}
		scale := max((hi-lo)/nBins, eps)
		edge := hi
		if abs32(lo) > abs32(hi) {
			edge = lo
		} else {
			scale = -scale
		}
		q0 := roundEven(edge / scale)
		bias := float32(0)
		if q0 != 0 {
			scale, bias = edge/q0, edge
		}
		for j, v := range grp {
			q := min(max(roundEven((v-bias)/scale), 0), nBins)
			k := g*f.GroupSize + j
			dst[k/pw] |= uint32(q) << (uint(k%pw) * uint(f.Bits))
		}
		dst[cw+g] = uint32(compute.BF16FromF32(scale)) | uint32(compute.BF16FromF32(bias))<<16
	}
}

func abs32(v float32) float32 { return float32(math.Abs(float64(v))) }

func roundEven(v float32) float32 { return float32(math.RoundToEven(float64(v))) }

// ErrorBound bounds |ŵ − w| over group g of row, quantized (Quantize)
// from the group's values grp: half a step of the code grid (the rounding,
// compute.QuantStep), plus how far the grid falls short of the group's
// range when scale = edge/q0 made it shorter (the clipped end), plus the
// BF16 rounding of the scale and the bias (2⁻⁹ relative each, the scale's
// times the largest code; 1 % slack for the float32 arithmetic).
func ErrorBound(f compute.QuantFormat, row []uint32, in, g int, grp []float32) float64 {
	s, b := f.GroupParams(row, in, g)
	lo, hi := grp[0], grp[0]
	for _, v := range grp {
		lo, hi = min(lo, v), max(hi, v)
	}
	qmax := float64(int(1)<<f.Bits - 1)
	as := math.Abs(float64(s))
	short := max(0, float64(hi-lo)-qmax*as)
	return compute.QuantStep(s) + short + math.Ldexp(1, -9)*(math.Abs(float64(b))+qmax*as)*1.01
}

// Dequantize expands the row layout back to float32 [out, in] (ŵ = s·q + b,
// compute.Dequant).
func Dequantize(rows []uint32, out, in int, f compute.QuantFormat) ([]float32, error) {
	if err := f.Validate(in); err != nil {
		return nil, err
	}
	rw := f.RowWords(in)
	if len(rows) != out*rw {
		return nil, fmt.Errorf("quant: %d words for %d rows of %s over %d inputs (want %d)", len(rows), out, f, in, out*rw)
	}
	dst := make([]float32, out*in)
	for r := 0; r < out; r++ {
		f.DequantizeRow(dst[r*in:(r+1)*in], rows[r*rw:(r+1)*rw], in)
	}
	return dst, nil
}

// MLX is a quantized matrix in MLX's form: Weight [out, in·bits/32] code
// words, Scales and Biases [out, in/group] BF16 bits.
type MLX struct {
	Weight         []uint32
	Scales, Biases []uint16
}

// ToMLX splits the row layout into MLX's three tensors.
func ToMLX(rows []uint32, out, in int, f compute.QuantFormat) MLX {
	cw, ng, rw := f.CodeWords(in), f.Groups(in), f.RowWords(in)
	m := MLX{Weight: make([]uint32, out*cw), Scales: make([]uint16, out*ng), Biases: make([]uint16, out*ng)}
	for r := 0; r < out; r++ {
		row := rows[r*rw : (r+1)*rw]
		copy(m.Weight[r*cw:(r+1)*cw], row[:cw])
		for g, p := range row[cw:] {
			m.Scales[r*ng+g], m.Biases[r*ng+g] = uint16(p), uint16(p>>16)
		}
	}
	return m
}

// FromMLX joins MLX's three tensors into the row layout.
func FromMLX(m MLX, out, in int, f compute.QuantFormat) ([]uint32, error) {
	if err := f.Validate(in); err != nil {
		return nil, err
	}
	cw, ng, rw := f.CodeWords(in), f.Groups(in), f.RowWords(in)
	if len(m.Weight) != out*cw || len(m.Scales) != out*ng || len(m.Biases) != out*ng {
		return nil, fmt.Errorf("quant: MLX tensors of %d, %d, %d elements for [%d, %d] at %s (want %d, %d, %d)",
			len(m.Weight), len(m.Scales), len(m.Biases), out, in, f, out*cw, out*ng, out*ng)
	}
	rows := make([]uint32, out*rw)
	for r := 0; r < out; r++ {
		row := rows[r*rw : (r+1)*rw]
		copy(row[:cw], m.Weight[r*cw:(r+1)*cw])
		for g := range ng {
			row[cw+g] = uint32(m.Scales[r*ng+g]) | uint32(m.Biases[r*ng+g])<<16
		}
	}
	return rows, nil
}

// Names are the spellings of --quant and of the memory modes' suffixes.
const (
	NameInt8 = "int8"
	NameInt4 = "int4"
)

// Parse reads a --quant value: "int8" or "int4" (group 64), or "" / "bf16"
// for unquantized weights (the zero format).
func Parse(s string) (compute.QuantFormat, error) {
	switch s {
	case "", "bf16", "none":
		return compute.QuantFormat{}, nil
	case NameInt8:
		return compute.Int8, nil
	case NameInt4:
		return compute.Int4, nil
	}
	return compute.QuantFormat{}, fmt.Errorf("quant: %q: want int8, int4 or bf16", s)
}

// Name is the --quant spelling of f ("" for unquantized weights).
func Name(f compute.QuantFormat) string {
	switch f {
	case compute.Int8:
		return NameInt8
	case compute.Int4:
		return NameInt4
	}
	if f.Bits == 0 {
		return ""
	}
	return f.String()
}
