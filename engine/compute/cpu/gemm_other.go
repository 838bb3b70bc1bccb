//go:build !amd64

package cpu

const haveSIMDKernel = false

func simdKernel6(a []float32, lda int, b []float32, c []float32, ldc int, kc int) {
	panic("cpu: no SIMD GEMM kernel on this architecture")
}

func simdKernel1(a []float32, b []float32, c []float32, kc int) {
	panic("cpu: no SIMD GEMM kernel on this architecture")
}
