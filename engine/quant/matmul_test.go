package quant

import (
	"encoding/binary"
	"math"
	"testing"

	"h3studio/engine/compute"
	"h3studio/engine/compute/cpu"
)

// upload puts quantized rows on b as a tagged weight.
func upload(t testing.TB, b compute.Backend, rows []uint32, out, in int, f compute.QuantFormat) *compute.Tensor {
	raw := make([]byte, 4*len(rows))
	for i, w := range rows {
		binary.LittleEndian.PutUint32(raw[4*i:], w)
	}
	st, err := b.Alloc(compute.U32, out, f.RowWords(in))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Upload(st, raw); err != nil {
		t.Fatal(err)
	}
	return compute.Quantized(st, f, in)
}

// TestMatMulWithinQuantizationError checks the CPU kernel (blocked GEMM and
// the dot-product oracle) against the product with the unquantized BF16
// weight: |y − x·wᵀ| ≤ Σ_k |x_k|·e_k + float32 summation error, with e_k
// the representation error bound of w's group (TestRoundTripWithinStep's).
func TestMatMulWithinQuantizationError(t *testing.T) {
	const M, N, K = 19, 40, 320
	x := bf16Matrix(M, K, 9)
	w := bf16Matrix(N, K, 10)
	for _, f := range []compute.QuantFormat{compute.Int8, compute.Int4} {
		rows, err := Quantize(w, N, K, f)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range []compute.Oracles{0, compute.Oracles(0).With(cpu.OracleDotMatMul)} {
			b := cpu.New(cpu.Options{Threads: 2, Oracles: o})
			xt, _ := compute.FromFloat32(b, compute.F32, compute.Shape{M, K}, x)
			wq := upload(t, b, rows, N, K, f)
			dst := compute.MustAlloc(b, compute.F32, M, N)
			b.MatMul(dst, xt, wq, nil)
			got, _ := compute.ToFloat32(dst)
			rw := f.RowWords(K)
			qmax := float64(int(1)<<f.Bits - 1)
			for m := 0; m < M; m++ {
				for n := 0; n < N; n++ {
					var want, bound, mag float64
					row := rows[n*rw : (n+1)*rw]
					for k := 0; k < K; k++ {
						xv, wv := float64(x[m*K+k]), float64(w[n*K+k])
						want += xv * wv
						g := k / f.GroupSize
						s, bi := f.GroupParams(row, K, g)
						grp := w[n*K+g*f.GroupSize : n*K+(g+1)*f.GroupSize]
						lo, hi := minMax(grp)
						short := max(0, float64(hi-lo)-qmax*math.Abs(float64(s)))
						e := compute.QuantStep(s) + short + math.Ldexp(1, -9)*(math.Abs(float64(bi))+qmax*math.Abs(float64(s)))*1.01
						bound += math.Abs(xv) * e
						mag += math.Abs(xv) * (math.Abs(wv) + e)
					}
					bound += 2 * K * math.Ldexp(1, -24) * mag
					if d := math.Abs(float64(got[m*N+n]) - want); d > bound {
						t.Fatalf("%s oracles %v: y[%d,%d] = %g, unquantized %g: |Δ| %g > bound %g", f, o, m, n, got[m*N+n], want, d, bound)
					}
				}
			}
		}
	}
}

func minMax(v []float32) (lo, hi float32) {
	lo, hi = v[0], v[0]
	for _, x := range v {
		lo, hi = min(lo, x), max(hi, x)
	}
	return lo, hi
}
