#include "textflag.h"

// func gemmKernel6x16(a unsafe.Pointer, lda uintptr, b unsafe.Pointer, c unsafe.Pointer, ldc uintptr, kc uintptr)
//
// C[i][0:16] += Σ_k A[i][k] · B[k][0:16] for i < 6, k < kc, with
// A rows lda bytes apart, B packed [kc][16] float32 and C rows ldc bytes
// apart. Each of the 96 sums is a fused multiply-add chain in k order
// starting from zero, added to C once at the end (AVX2 + FMA3).
TEXT ·gemmKernel6x16(SB), NOSPLIT, $0-48
	MOVQ a+0(FP), SI
	MOVQ lda+8(FP), R8
	MOVQ b+16(FP), DI
	MOVQ c+24(FP), DX
	MOVQ ldc+32(FP), R9
	MOVQ kc+40(FP), CX

	LEAQ (SI)(R8*1), AX
	LEAQ (AX)(R8*1), BX
	LEAQ (BX)(R8*1), R10
	LEAQ (R10)(R8*1), R11
	LEAQ (R11)(R8*1), R12
	XORQ R13, R13

	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11

	TESTQ CX, CX
	JZ    store6

loop6:
	VMOVUPS      (DI), Y12
	VMOVUPS      32(DI), Y13
	VBROADCASTSS (SI)(R13*1), Y14
	VFMADD231PS  Y12, Y14, Y0
	VFMADD231PS  Y13, Y14, Y1
	VBROADCASTSS (AX)(R13*1), Y15
	VFMADD231PS  Y12, Y15, Y2
	VFMADD231PS  Y13, Y15, Y3
	VBROADCASTSS (BX)(R13*1), Y14
	VFMADD231PS  Y12, Y14, Y4
	VFMADD231PS  Y13, Y14, Y5
	VBROADCASTSS (R10)(R13*1), Y15
	VFMADD231PS  Y12, Y15, Y6
	VFMADD231PS  Y13, Y15, Y7
	VBROADCASTSS (R11)(R13*1), Y14
	VFMADD231PS  Y12, Y14, Y8
	VFMADD231PS  Y13, Y14, Y9
	VBROADCASTSS (R12)(R13*1), Y15
	VFMADD231PS  Y12, Y15, Y10
	VFMADD231PS  Y13, Y15, Y11
	ADDQ         $4, R13
	ADDQ         $64, DI
	DECQ         CX
	JNZ          loop6

store6:
	VADDPS  (DX), Y0, Y0
	VMOVUPS Y0, (DX)
	VADDPS  32(DX), Y1, Y1
	VMOVUPS Y1, 32(DX)
	ADDQ    R9, DX
	VADDPS  (DX), Y2, Y2
	VMOVUPS Y2, (DX)
	VADDPS  32(DX), Y3, Y3
	VMOVUPS Y3, 32(DX)
	ADDQ    R9, DX
	VADDPS  (DX), Y4, Y4
	VMOVUPS Y4, (DX)
	VADDPS  32(DX), Y5, Y5
	VMOVUPS Y5, 32(DX)
	ADDQ    R9, DX
	VADDPS  (DX), Y6, Y6
	VMOVUPS Y6, (DX)
	VADDPS  32(DX), Y7, Y7
	VMOVUPS Y7, 32(DX)
	ADDQ    R9, DX
	VADDPS  (DX), Y8, Y8
	VMOVUPS Y8, (DX)
	VADDPS  32(DX), Y9, Y9
	VMOVUPS Y9, 32(DX)
	ADDQ    R9, DX
	VADDPS  (DX), Y10, Y10
	VMOVUPS Y10, (DX)
	VADDPS  32(DX), Y11, Y11
	VMOVUPS Y11, 32(DX)
	VZEROUPPER
	RET

// func gemmKernel1x16(a unsafe.Pointer, b unsafe.Pointer, c unsafe.Pointer, kc uintptr)
//
// The one-row version of gemmKernel6x16 (same arithmetic per sum).
TEXT ·gemmKernel1x16(SB), NOSPLIT, $0-32
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ c+16(FP), DX
	MOVQ kc+24(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	TESTQ  CX, CX
	JZ     store1

loop1:
	VBROADCASTSS (SI), Y14
	VFMADD231PS  (DI), Y14, Y0
	VFMADD231PS  32(DI), Y14, Y1
	ADDQ         $4, SI
	ADDQ         $64, DI
	DECQ         CX
	JNZ          loop1

store1:
	VADDPS  (DX), Y0, Y0
	VMOVUPS Y0, (DX)
	VADDPS  32(DX), Y1, Y1
	VMOVUPS Y1, 32(DX)
	VZEROUPPER
	RET
