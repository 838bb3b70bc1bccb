package cpu

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"

	"h3studio/engine/compute"
)

// BenchmarkGEMMvsGonum times MatMul (float32 x and w, float32 out) and
// gonum's Sgemm (C = A·Bᵀ, the same product) on the same shapes in the same
// run, alternating the two, and reports both rates and their ratio
// (target: ratio ≥ 1).
func BenchmarkGEMMvsGonum(b *testing.B) {
	for _, s := range [][3]int{{256, 1024, 1024}, {1024, 512, 2048}, {97, 1000, 333}} {
		M, N, K := s[0], s[1], s[2]
		b.Run(fmt.Sprintf("%dx%dx%d", M, N, K), func(b *testing.B) {
			be := New(Options{})
			rng := rand.New(rand.NewPCG(1, 2))
			xv := make([]float32, M*K)
			wv := make([]float32, N*K)
			for i := range xv {
				xv[i] = float32(rng.NormFloat64())
			}
			for i := range wv {
				wv[i] = float32(rng.NormFloat64())
			}
			x, _ := compute.FromFloat32(be, compute.F32, compute.Shape{M, K}, xv)
			w, _ := compute.FromFloat32(be, compute.F32, compute.Shape{N, K}, wv)
			dst := compute.MustAlloc(be, compute.F32, M, N)
			c := make([]float32, M*N)
			impl := gonum.Implementation{}
			var ours, theirs time.Duration
			for b.Loop() {
				t0 := time.Now()
				be.MatMul(dst, x, w, nil)
				t1 := time.Now()
				impl.Sgemm(blas.NoTrans, blas.Trans, M, N, K, 1, xv, K, wv, K, 0, c, N)
				t2 := time.Now()
				ours += t1.Sub(t0)
				theirs += t2.Sub(t1)
			}
			flops := 2 * float64(M) * float64(N) * float64(K) * float64(b.N)
			b.ReportMetric(flops/ours.Seconds()/1e9, "GFLOP/s")
			b.ReportMetric(flops/theirs.Seconds()/1e9, "gonum-GFLOP/s")
			b.ReportMetric(theirs.Seconds()/ours.Seconds(), "x-gonum")
		})
	}
}
