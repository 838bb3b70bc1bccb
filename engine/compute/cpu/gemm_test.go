package cpu

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"h3studio/engine/compute"
)

// TestGEMMShapes checks the blocked GEMM against a float64 definition on
// shapes that exercise every edge: several k blocks, a ragged last panel,
// row counts that are not multiples of the micro-kernel, several tiles; for
// the assembly kernel (where present), the Go kernel and the dot oracle.
// Bound: rel-L2 < 1e-6 (float32 accumulation).
func TestGEMMShapes(t *testing.T) {
	shapes := [][3]int{{1, 1, 1}, {13, 37, 600}, {7, 16, 256}, {200, 300, 33}, {97, 257, 513}}
	variants := []struct {
		name    string
		oracles compute.Oracles
	}{{"default", 0}, {"go-kernel", compute.Oracles(0).With(OracleGoGEMM)}, {"dot", compute.Oracles(0).With(OracleDotMatMul)}}
	rng := rand.New(rand.NewPCG(7, 8))
	for _, s := range shapes {
		M, N, K := s[0], s[1], s[2]
		for _, wdt := range []compute.DType{compute.F32, compute.BF16} {
			ref := New(Options{})
			x, xf := randT(t, ref, rng, compute.F32, M, K)
			w, wf := randT(t, ref, rng, wdt, N, K)
			bias, bf := randT(t, ref, rng, compute.F32, N)
			want := make([]float64, M*N)
			for m := 0; m < M; m++ {
				for n := 0; n < N; n++ {
					v := bf[n]
					for k := 0; k < K; k++ {
						v += xf[m*K+k] * wf[n*K+k]
					}
					want[m*N+n] = v
				}
			}
			for _, v := range variants {
				b := New(Options{Oracles: v.oracles})
				dst := compute.MustAlloc(b, compute.F32, M, N)
				b.MatMul(dst, x, w, bias)
				expectClose(t, fmt.Sprintf("%s %dx%dx%d %v", v.name, M, N, K, wdt), get(t, dst), want, 1e-6)
			}
		}
	}
}

// TestGEMMDeterministic checks bit-identical results for 1, 2, 3 and 8
// threads on a shape with several tiles in both directions, for BF16 and F32
// destinations, and with dst aliasing x.
func TestGEMMDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	ref := New(Options{Threads: 1})
	M, N, K := 250, 600, 530
	x, _ := randT(t, ref, rng, compute.BF16, M, K)
	w, _ := randT(t, ref, rng, compute.BF16, N, K)
	for _, dt := range []compute.DType{compute.F32, compute.BF16} {
		var first []byte
		for _, threads := range []int{1, 2, 3, 8} {
			b := New(Options{Threads: threads})
			dst := compute.MustAlloc(b, dt, M, N)
			b.MatMul(dst, x, w, nil)
			if first == nil {
				first = append([]byte(nil), Bytes(dst)...)
			} else if string(first) != string(Bytes(dst)) {
				t.Fatalf("%v: %d threads differ from 1 thread", dt, threads)
			}
		}
	}
	// dst aliasing x (square weight).
	b := New(Options{Threads: 3})
	sq, _ := randT(t, b, rng, compute.F32, 40, 40)
	xa, _ := randT(t, b, rng, compute.F32, 20, 40)
	want := compute.MustAlloc(b, compute.F32, 20, 40)
	b.MatMul(want, xa, sq, nil)
	b.MatMul(xa, xa, sq, nil)
	if string(Bytes(want)) != string(Bytes(xa)) {
		t.Fatal("MatMul into its own input differs")
	}
}

// TestAttentionBlocked checks the GEMM-based attention against the dot
// oracle on shapes spanning several query blocks and k blocks (grouped
// heads, causal and not, BF16 with rounded probabilities), and its
// bit-identity across thread counts.
func TestAttentionBlocked(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	ref := New(Options{Oracles: compute.Oracles(0).With(OracleDotMatMul)})
	Hq, Hkv, Sq, Sk, D := 4, 2, 130, 300, 40
	for _, dt := range []compute.DType{compute.F32, compute.BF16} {
		q, _ := randT(t, ref, rng, dt, Hq, Sq, D)
		k, _ := randT(t, ref, rng, dt, Hkv, Sk, D)
		v, _ := randT(t, ref, rng, dt, Hkv, Sk, D)
		for _, p := range []compute.AttentionParams{{Scale: 0.15}, {Scale: 0.15, Causal: true}, {Scale: 0.15, RoundProbs: true}} {
			want := compute.MustAlloc(ref, dt, Hq, Sq, D)
			ref.Attention(want, q, k, v, p)
			var first []byte
			for _, threads := range []int{1, 2, 5} {
				b := New(Options{Threads: threads})
				got := compute.MustAlloc(b, dt, Hq, Sq, D)
				b.Attention(got, q, k, v, p)
				tol := 1e-6
				if dt == compute.BF16 {
					tol = 5e-3 // a few BF16 ulps from the different summation order
				}
				expectClose(t, fmt.Sprintf("attention %v %+v", dt, p), get(t, got), get(t, want), tol)
				if first == nil {
					first = append([]byte(nil), Bytes(got)...)
				} else if string(first) != string(Bytes(got)) {
					t.Errorf("attention %v %+v: %d threads differ from 1", dt, p, threads)
				}
			}
		}
	}
}
