#include "textflag.h"

// ZERO2 clears the two accumulators of one C row.
#define ZERO2(lo, hi) \
	VXORPS lo, lo, lo; \
	VXORPS hi, hi, hi

// FMAROW broadcasts A[row][k] (row's pointer at r, k's byte offset in R13)
// into t and adds its products with B[k][0:8] (Y12) and B[k][8:16] (Y13)
// to the row's accumulators.
#define FMAROW(r, t, lo, hi) \
	VBROADCASTSS (r)(R13*1), t; \
	VFMADD231PS  Y12, t, lo; \
	VFMADD231PS  Y13, t, hi

// STOREROW adds one row's accumulators to C[row][0:16] at DX.
#define STOREROW(lo, hi) \
	VADDPS  (DX), lo, lo; \
	VMOVUPS lo, (DX); \
	VADDPS  32(DX), hi, hi; \
	VMOVUPS hi, 32(DX)

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

	ZERO2(Y0, Y1)
	ZERO2(Y2, Y3)
	ZERO2(Y4, Y5)
	ZERO2(Y6, Y7)
	ZERO2(Y8, Y9)
	ZERO2(Y10, Y11)

	TESTQ CX, CX
	JZ    store6

loop6:
	VMOVUPS      (DI), Y12
	VMOVUPS      32(DI), Y13
	FMAROW(SI, Y14, Y0, Y1)
	FMAROW(AX, Y15, Y2, Y3)
	FMAROW(BX, Y14, Y4, Y5)
	FMAROW(R10, Y15, Y6, Y7)
	FMAROW(R11, Y14, Y8, Y9)
	FMAROW(R12, Y15, Y10, Y11)
	ADDQ         $4, R13
	ADDQ         $64, DI
	DECQ         CX
	JNZ          loop6

store6:
	STOREROW(Y0, Y1)
	ADDQ R9, DX
	STOREROW(Y2, Y3)
	ADDQ R9, DX
	STOREROW(Y4, Y5)
	ADDQ R9, DX
	STOREROW(Y6, Y7)
	ADDQ R9, DX
	STOREROW(Y8, Y9)
	ADDQ R9, DX
	STOREROW(Y10, Y11)
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
	ZERO2(Y0, Y1)
	TESTQ CX, CX
	JZ    store1

loop1:
	VBROADCASTSS (SI), Y14
	VFMADD231PS  (DI), Y14, Y0
	VFMADD231PS  32(DI), Y14, Y1
	ADDQ         $4, SI
	ADDQ         $64, DI
	DECQ         CX
	JNZ          loop1

store1:
	STOREROW(Y0, Y1)
	VZEROUPPER
	RET
