package cpu

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"h3studio/engine/compute"
)

// BenchmarkQuantMatMul times MatMul by an int8 and an int4 weight against
// the same product by the BF16 weight (BF16 x, BF16 out: the DiT's linears)
// at M = 2,048, alternating them in one run, and reports the quantized
// rate's ratio to the BF16 one (target: x-bf16 ≥ 0.8). The codes are random
// (the kernel's speed does not depend on them).
func BenchmarkQuantMatMul(b *testing.B) {
	const M, N, K = 2048, 1024, 1024
	for _, f := range []compute.QuantFormat{compute.Int8, compute.Int4} {
		b.Run(fmt.Sprintf("%s/%dx%dx%d", f, M, N, K), func(b *testing.B) {
			be := New(Options{})
			rng := rand.New(rand.NewPCG(1, 2))
			xv := make([]float32, M*K)
			wv := make([]float32, N*K)
			for i := range xv {
				xv[i] = float32(rng.NormFloat64())
			}
			for i := range wv {
				wv[i] = float32(rng.NormFloat64() * 0.05)
			}
			x, _ := compute.FromFloat32(be, compute.BF16, compute.Shape{M, K}, xv)
			w, _ := compute.FromFloat32(be, compute.BF16, compute.Shape{N, K}, wv)
			st := compute.MustAlloc(be, compute.U32, N, f.RowWords(K))
			ws := words(st)
			for i := range ws {
				ws[i] = rng.Uint32()
			}
			for n := 0; n < N; n++ { // sane scales and biases
				for g := 0; g < f.Groups(K); g++ {
					ws[n*f.RowWords(K)+f.CodeWords(K)+g] = uint32(compute.BF16FromF32(0.01)) | uint32(compute.BF16FromF32(-0.05))<<16
				}
			}
			q := compute.Quantized(st, f, K)
			dst := compute.MustAlloc(be, compute.BF16, M, N)
			var tq, tb time.Duration
			for b.Loop() {
				t0 := time.Now()
				be.MatMul(dst, x, q, nil)
				t1 := time.Now()
				be.MatMul(dst, x, w, nil)
				t2 := time.Now()
				tq += t1.Sub(t0)
				tb += t2.Sub(t1)
			}
			flops := 2 * float64(M) * float64(N) * float64(K) * float64(b.N)
			b.ReportMetric(flops/tq.Seconds()/1e9, "GFLOP/s")
			b.ReportMetric(flops/tb.Seconds()/1e9, "bf16-GFLOP/s")
			b.ReportMetric(tb.Seconds()/tq.Seconds(), "x-bf16")
		})
	}
}
