package computetest

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"h3studio/engine/compute"
	"h3studio/engine/quant"
)

// The cases of MatMul by a quantized weight (compute.Quantized). The
// reference is the CPU backend's product with the dequantized weight
// ŵ = s·q + b (compute.Dequant); a backend may dequantize in its own order
// (a fused multiply-add) and accumulate in its own order, so the bound is
// sumBound over the magnitudes Σ|x|·(|s|·q + |b|) ≥ Σ|x·ŵ|. How far ŵ lies
// from the unquantized weight — the quantization step — is checked by
// engine/quant's TestMatMulWithinQuantizationError.

func quantFormatOf(t Tensor) compute.QuantFormat {
	return compute.QuantFormat{Bits: int(t.Gen.Lo), GroupSize: 64}
}

// quantWeightValues draws a weight [rows, N] and returns its quantized
// storage words.
func quantWeightValues(rng *rand.Rand, t Tensor) []float64 {
	f := quantFormatOf(t)
	rows, in := t.Shape[0], t.Gen.N
	s := t.Gen.Scale
	if s == 0 {
		s = 1
	}
	w := make([]float32, rows*in)
	for i := range w {
		w[i] = compute.RoundBF16(float32(rng.NormFloat64() * s))
	}
	words, err := quant.Quantize(w, rows, in, f)
	if err != nil {
		panic(fmt.Sprintf("computetest: %v", err))
	}
	if len(words) != compute.Shape(t.Shape).NumElements() {
		panic(fmt.Sprintf("computetest: quantized weight shape %v, want [%d, %d]", t.Shape, rows, f.RowWords(in)))
	}
	v := make([]float64, len(words))
	for i, x := range words {
		v[i] = float64(x)
	}
	return v
}

// quantWeightMagnitudes is the weight with |s| and |b| (the sign bits of
// each group's scale and bias cleared), on the reference.
func quantWeightMagnitudes(ref compute.Backend, t Tensor, v []float64) (*compute.Tensor, error) {
	f := quantFormatOf(t)
	rw, cw := f.RowWords(t.Gen.N), f.CodeWords(t.Gen.N)
	iv := make([]int64, len(v))
	for i, x := range v {
		w := uint32(x)
		if i%rw >= cw {
			w &^= 0x80008000
		}
		iv[i] = int64(w)
	}
	return compute.FromInt64(ref, compute.U32, t.Shape, iv)
}

// qw is a quantized weight operand [rows, in] at bits.
func qw(bits, rows, in int, scale float64) Tensor {
	f := compute.QuantFormat{Bits: bits, GroupSize: 64}
	return Tensor{DType: compute.U32, Shape: []int{rows, f.RowWords(in)}, Gen: Gen{Kind: QuantWeight, N: in, Lo: float64(bits), Scale: scale}}
}

func quantCases() []Case {
	var cs []Case
	qmm := func(bits, in int) func(k compute.Kernels, d *compute.Tensor, ins []*compute.Tensor) {
		return func(k compute.Kernels, d *compute.Tensor, ins []*compute.Tensor) {
			var bias *compute.Tensor
			if len(ins) > 2 {
				bias = ins[2]
			}
			w := compute.Quantized(ins[1], compute.QuantFormat{Bits: bits, GroupSize: 64}, in)
			k.MatMul(d, ins[0], w, bias)
		}
	}
	add := func(name string, bits int, x Tensor, rows int, bias *Tensor, out compute.DType) {
		in := x.Shape[len(x.Shape)-1]
		ops := []Tensor{x, qw(bits, rows, in, 0.05)}
		if bias != nil {
			ops = append(ops, *bias)
		}
		m := x.NumElements() / in
		run := qmm(bits, in)
		c := mk(name, ops, nrm(out, m, rows), sumBound(in), run)
		c.Mag = run
		cs = append(cs, c)
	}
	for _, bits := range []int{4, 8} {
		for _, xt := range floats {
			for _, out := range floats {
				add(fmt.Sprintf("MatMul/q%d/%s_%s", bits, tn(xt), tn(out)), bits, nrm(xt, 37, 128), 45, &Tensor{DType: compute.F32, Shape: []int{45}}, out)
			}
		}
		add(fmt.Sprintf("MatMul/q%d/tiles", bits), bits, nrm(compute.BF16, 70, 320), 96, nil, compute.BF16)
		add(fmt.Sprintf("MatMul/q%d/m1", bits), bits, nrm(compute.BF16, 1, 64), 9, nil, compute.F32)
		add(fmt.Sprintf("MatMul/q%d/k_blocks", bits), bits, nrm(compute.F32, 13, 576), 17, nil, compute.F32)
	}
	return cs
}

// NumElements of an operand description.
func (t Tensor) NumElements() int { return compute.Shape(t.Shape).NumElements() }

// QuantStepCheck checks b's product by a quantized weight against the
// product by the unquantized weight itself, within a bound derived from
// the quantization step: x [M, K] (normal values) times a BF16 weight
// [N, K] (normal, σ 0.05, its first group constant) quantized to f, F32
// out, must satisfy for every element
//
//	|y − x·wᵀ| ≤ Σₖ |xₖ|·eₖ + 2K·2⁻²⁴·Σₖ |xₖ|·(|wₖ| + eₖ)
//
// with eₖ = quant.ErrorBound of wₖ's group (the rounding to the code grid,
// the clipped end, the BF16 scale and bias) and the second term the float32
// summation in any order. RunAll runs it at 4 and 8 bits as
// MatMul/q4/quant_step and MatMul/q8/quant_step.
func QuantStepCheck(b compute.Backend, f compute.QuantFormat, M, N, K int, seed uint64) error {
	rng := rand.New(rand.NewPCG(seed, 5))
	x := make([]float32, M*K)
	w := make([]float32, N*K)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	for i := range w {
		w[i] = compute.RoundBF16(float32(rng.NormFloat64() * 0.05))
	}
	for j := 0; j < f.GroupSize; j++ {
		w[j] = 0.25
	}
	rows, err := quant.Quantize(w, N, K, f)
	if err != nil {
		return err
	}
	iv := make([]int64, len(rows))
	for i, v := range rows {
		iv[i] = int64(v)
	}
	ws, err := compute.FromInt64(b, compute.U32, compute.Shape{N, f.RowWords(K)}, iv)
	if err != nil {
		return err
	}
	defer b.Free(ws)
	xt, err := compute.FromFloat32(b, compute.F32, compute.Shape{M, K}, x)
	if err != nil {
		return err
	}
	defer b.Free(xt)
	dst, err := b.Alloc(compute.F32, M, N)
	if err != nil {
		return err
	}
	defer b.Free(dst)
	b.MatMul(dst, xt, compute.Quantized(ws, f, K), nil)
	if err := b.Sync(context.Background()); err != nil {
		return err
	}
	got, err := compute.ToFloat32(dst)
	if err != nil {
		return err
	}
	rw := f.RowWords(K)
	e := make([]float64, N*K) // eₖ per weight element
	for n := 0; n < N; n++ {
		for g := 0; g < f.Groups(K); g++ {
			grp := w[n*K+g*f.GroupSize : n*K+(g+1)*f.GroupSize]
			eg := quant.ErrorBound(f, rows[n*rw:(n+1)*rw], K, g, grp)
			for j := range grp {
				e[n*K+g*f.GroupSize+j] = eg
			}
		}
	}
	for m := 0; m < M; m++ {
		for n := 0; n < N; n++ {
			var want, bound, mag float64
			for k := 0; k < K; k++ {
				xv, wv, ek := float64(x[m*K+k]), float64(w[n*K+k]), e[n*K+k]
				want += xv * wv
				bound += math.Abs(xv) * ek
				mag += math.Abs(xv) * (math.Abs(wv) + ek)
			}
			bound += 2 * float64(K) * math.Ldexp(1, -24) * mag
			if d := math.Abs(float64(got[m*N+n]) - want); !(d <= bound) {
				return fmt.Errorf("%s: y[%d, %d] = %g, by the unquantized weight %g: |Δ| %g > the quantization bound %g", f, m, n, got[m*N+n], want, d, bound)
			}
		}
	}
	return nil
}
