package cpu

import (
	"context"
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
			_, xv, wv := benchOperands(M, N, K, 1)
			x, _ := compute.FromFloat32(be, compute.F32, compute.Shape{M, K}, xv)
			w, _ := compute.FromFloat32(be, compute.F32, compute.Shape{N, K}, wv)
			dst := compute.MustAlloc(be, compute.F32, M, N)
			c := make([]float32, M*N)
			impl := gonum.Implementation{}
			race(b, M, N, K, "gonum", func() { be.MatMul(dst, x, w, nil) }, func() {
				impl.Sgemm(blas.NoTrans, blas.Trans, M, N, K, 1, xv, K, wv, K, 0, c, N)
			})
		})
	}
}

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
			rng, xv, wv := benchOperands(M, N, K, 0.05)
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
			race(b, M, N, K, "bf16", func() { be.MatMul(dst, x, q, nil) }, func() { be.MatMul(dst, x, w, nil) })
		})
	}
}

// benchOperands are x [M, K] and w [N, K] of normal values (w's scaled by
// wScale) and the generator, seeded alike for every benchmark, that drew
// them.
func benchOperands(M, N, K int, wScale float64) (rng *rand.Rand, xv, wv []float32) {
	rng = rand.New(rand.NewPCG(1, 2))
	xv = make([]float32, M*K)
	wv = make([]float32, N*K)
	for i := range xv {
		xv[i] = float32(rng.NormFloat64())
	}
	for i := range wv {
		wv[i] = float32(rng.NormFloat64() * wScale)
	}
	return rng, xv, wv
}

// race runs ours and theirs, an [M, K]·[K, N] product each, alternately
// over b.Loop and reports ours' rate (GFLOP/s), theirs' (name-GFLOP/s) and
// how many times faster ours is (x-name).
func race(b *testing.B, M, N, K int, name string, ours, theirs func()) {
	var to, tt time.Duration
	for b.Loop() {
		t0 := time.Now()
		ours()
		t1 := time.Now()
		theirs()
		t2 := time.Now()
		to += t1.Sub(t0)
		tt += t2.Sub(t1)
	}
	flops := 2 * float64(M) * float64(N) * float64(K) * float64(b.N)
	b.ReportMetric(flops/to.Seconds()/1e9, "GFLOP/s")
	b.ReportMetric(flops/tt.Seconds()/1e9, name+"-GFLOP/s")
	b.ReportMetric(tt.Seconds()/to.Seconds(), "x-"+name)
}

// BenchmarkWatchedKernels times kernels while a context is watched (the
// take's run: each chunk in grain-sized pieces with a cancel check before
// each) against the same kernels unwatched, alternating them in one run
// (x-unwatched: the unwatched time over the watched one; target ≈ 1):
// the DiT's BF16 linear, an F32 GEMM and a 3-D convolution like the video
// VAE encoder's.
func BenchmarkWatchedKernels(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	watched := func(be *Backend, f func()) func() {
		return func() {
			stop := be.WatchContext(ctx)
			defer stop()
			f()
		}
	}
	for _, dt := range []compute.DType{compute.BF16, compute.F32} {
		const M, N, K = 2048, 1024, 1024
		b.Run(fmt.Sprintf("matmul-%v/%dx%dx%d", dt, M, N, K), func(b *testing.B) {
			be := New(Options{})
			_, xv, wv := benchOperands(M, N, K, 0.05)
			x, _ := compute.FromFloat32(be, dt, compute.Shape{M, K}, xv)
			w, _ := compute.FromFloat32(be, dt, compute.Shape{N, K}, wv)
			dst := compute.MustAlloc(be, dt, M, N)
			mm := func() { be.MatMul(dst, x, w, nil) }
			race(b, M, N, K, "unwatched", watched(be, mm), mm)
		})
	}
	b.Run("conv3d/64x64x5x32x32-k3", func(b *testing.B) {
		const C, T, H, W = 64, 5, 32, 32
		be := New(Options{})
		_, xv, wv := benchOperands(C*T*H*W, C*C*27, 1, 0.05) // x, w as flat vectors
		x, _ := compute.FromFloat32(be, compute.F32, compute.Shape{C, T, H, W}, xv[:C*T*H*W])
		w, _ := compute.FromFloat32(be, compute.F32, compute.Shape{C, C, 3, 3, 3}, wv[:C*C*27])
		dst := compute.MustAlloc(be, compute.F32, C, T-2, H-2, W-2)
		conv := func() { be.Conv(dst, x, w, nil, compute.ConvParams{}) }
		race(b, (T-2)*(H-2)*(W-2), C, C*27, "unwatched", watched(be, conv), conv)
	})
}
