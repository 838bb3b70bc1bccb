package cpu

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// The AVX2/FMA3 micro-kernels of gemm (gemm_amd64.s).

//go:noescape
func gemmKernel6x16(a unsafe.Pointer, lda uintptr, b unsafe.Pointer, c unsafe.Pointer, ldc uintptr, kc uintptr)

//go:noescape
func gemmKernel1x16(a unsafe.Pointer, b unsafe.Pointer, c unsafe.Pointer, kc uintptr)

var haveSIMDKernel = cpu.X86.HasAVX2 && cpu.X86.HasFMA

func simdKernel6(a []float32, lda int, b []float32, c []float32, ldc int, kc int) {
	_ = a[5*lda+kc-1]
	_ = b[16*kc-1]
	_ = c[5*ldc+15]
	gemmKernel6x16(unsafe.Pointer(&a[0]), uintptr(lda)*4, unsafe.Pointer(&b[0]), unsafe.Pointer(&c[0]), uintptr(ldc)*4, uintptr(kc))
}

func simdKernel1(a []float32, b []float32, c []float32, kc int) {
	_ = a[kc-1]
	_ = b[16*kc-1]
	_ = c[15]
	gemmKernel1x16(unsafe.Pointer(&a[0]), unsafe.Pointer(&b[0]), unsafe.Pointer(&c[0]), uintptr(kc))
}
