package cpu

import (
	"math"
	"sync"

	"h3studio/engine/compute"
)

// This file is the CPU backend's blocked, multi-threaded GEMM: the engine
// behind MatMul and Attention.
//
//	c[m, n] = Σ_k a[m, k] · B(n, k)     m < M, n < N, k < K
//
// a is row-major float32; B is read through a packer, so weights in any
// dtype (decoded while packing), transposed operands and attention's K and
// V all use the same kernels. The work is split into (row block × column
// block) tiles; each tile packs B in panels of 16 columns × 256 k, and a
// micro-kernel accumulates 6 rows × 16 columns of one panel over one k
// block (AVX2/FMA3 assembly on amd64, a Go loop elsewhere).
//
// Determinism: every c[m, n] is the sum over k blocks (in k order) of a
// multiply-add chain over the block (in k order, starting from zero). Tile
// and micro-kernel shapes only decide which sums are computed together,
// never how one is computed, so the result is identical for any thread
// count and any edge handling.

const (
	gemmMR = 6   // micro-kernel rows
	gemmNR = 16  // micro-kernel columns (one packed panel)
	gemmKC = 256 // k block
	gemmMC = 96  // rows per tile (a multiple of gemmMR)
	gemmNC = 256 // columns per tile (a multiple of gemmNR)
)

// OracleDotMatMul selects the original reference MatMul: one 8-way float32
// dot product per output element, no blocking, no SIMD.
var OracleDotMatMul = compute.RegisterOracle("cpu-matmul-dot",
	"CPU MatMul/Attention products as one 8-way float32 dot product per element instead of the blocked SIMD GEMM")

// OracleGoGEMM selects the portable Go micro-kernel of the blocked GEMM even
// where an assembly kernel exists.
var OracleGoGEMM = compute.RegisterOracle("cpu-gemm-go",
	"CPU blocked GEMM with the portable Go micro-kernel instead of AVX2/FMA3 assembly")

// packer writes dst[kk·16 + j] = B(n0+j, k0+kk) for kk < kc, j < 16, with
// zeros for columns n0+j ≥ N.
type packer func(dst []float32, n0, k0, kc int)

// rowPacker packs B from its rows: fill writes B(n, k0+kk) to
// dst[kk·16 + j] for kk < kc; the columns j of rows n ≥ N are zeros.
func rowPacker(N int, fill func(dst []float32, j, n, k0, kc int)) packer {
	return func(dst []float32, n0, k0, kc int) {
		for j := 0; j < gemmNR; j++ {
			n := n0 + j
			if n >= N {
				for kk := 0; kk < kc; kk++ {
					dst[kk*gemmNR+j] = 0
				}
				continue
			}
			fill(dst, j, n, k0, kc)
		}
	}
}

// packRows packs B(n, k) = src[n·ld + k] from float32 rows.
func packRows(src []float32, ld, N int) packer {
	return rowPacker(N, func(dst []float32, j, n, k0, kc int) {
		for kk, v := range src[n*ld+k0 : n*ld+k0+kc] {
			dst[kk*gemmNR+j] = v
		}
	})
}

// packTensorRows packs B(n, k) = t[n, k] for a 2-D tensor of any float
// dtype, decoding while packing.
func packTensorRows(t *compute.Tensor) packer {
	if _, _, ok := t.Quant(); ok {
		return packQuantRows(t)
	}
	N, K := t.Dim(0), t.Dim(1)
	switch t.DType() {
	case compute.F32:
		return packRows(load(t), K, N)
	case compute.BF16:
		raw := Uint16s(t)
		return rowPacker(N, func(dst []float32, j, n, k0, kc int) {
			for kk, v := range raw[n*K+k0 : n*K+k0+kc] {
				dst[kk*gemmNR+j] = math.Float32frombits(uint32(v) << 16)
			}
		})
	}
	return packRows(load(t), K, N)
}

// packCols packs B(n, k) = src[k·ld + n]: a row-major [K, N] operand used
// untransposed (attention's V).
func packCols(src []float32, ld, N int) packer {
	return func(dst []float32, n0, k0, kc int) {
		w := min(gemmNR, N-n0)
		for kk := 0; kk < kc; kk++ {
			row := src[(k0+kk)*ld+n0 : (k0+kk)*ld+n0+w]
			d := dst[kk*gemmNR : (kk+1)*gemmNR]
			copy(d, row)
			for j := w; j < gemmNR; j++ {
				d[j] = 0
			}
		}
	}
}

var packPool = sync.Pool{New: func() any {
	s := make([]float32, gemmNC*gemmKC+gemmMC*gemmNR)
	return &s
}}

// gemm overwrites c[m·ldc + n] (m < M, n < N) with Σ_k a[m·lda + k]·B(n, k),
// splitting tiles over the backend's threads.
func (b *Backend) gemm(c []float32, ldc int, a []float32, lda int, M, N, K int, pack packer) {
	if M == 0 || N == 0 {
		return
	}
	simd := b.simdGEMM()
	mt := (M + gemmMC - 1) / gemmMC
	nt := (N + gemmNC - 1) / gemmNC
	b.parallel(mt*nt, 1, func(lo, hi int) {
		ws := packPool.Get().(*[]float32)
		defer packPool.Put(ws)
		gemmTiles(c, ldc, a, lda, M, N, K, pack, simd, *ws, lo, hi)
	})
}

func (b *Backend) simdGEMM() bool { return haveSIMDKernel && !b.opts.Oracles.Has(OracleGoGEMM) }

// gemmSerial is gemm on the calling goroutine (for kernels that parallelise
// at a coarser grain, like Attention). ws is a workspace from packPool.
func gemmSerial(c []float32, ldc int, a []float32, lda int, M, N, K int, pack packer, simd bool, ws []float32) {
	if M == 0 || N == 0 {
		return
	}
	mt := (M + gemmMC - 1) / gemmMC
	nt := (N + gemmNC - 1) / gemmNC
	gemmTiles(c, ldc, a, lda, M, N, K, pack, simd, ws, 0, mt*nt)
}

// gemmTiles computes tiles [lo, hi) of the (row block × column block) grid.
func gemmTiles(c []float32, ldc int, a []float32, lda int, M, N, K int, pack packer, simd bool, ws []float32, lo, hi int) {
	nt := (N + gemmNC - 1) / gemmNC
	bp := ws[:gemmNC*gemmKC]
	edge := ws[gemmNC*gemmKC:]
	for t := lo; t < hi; t++ {
		m0, n0 := (t/nt)*gemmMC, (t%nt)*gemmNC
		gemmTile(c, ldc, a, lda, m0, min(m0+gemmMC, M), n0, min(n0+gemmNC, N), K, pack, bp, edge, simd)
	}
}

// gemmTile computes rows [m0, m1) × columns [n0, n1) of c.
func gemmTile(c []float32, ldc int, a []float32, lda, m0, m1, n0, n1, K int, pack packer, bp, edge []float32, simd bool) {
	rows := m1 - m0
	for m := m0; m < m1; m++ {
		clear(c[m*ldc+n0 : m*ldc+n1])
	}
	panels := (n1 - n0 + gemmNR - 1) / gemmNR
	ragged := (n1-n0)%gemmNR != 0
	if ragged {
		clear(edge[:rows*gemmNR])
	}
	for k0 := 0; k0 < K; k0 += gemmKC {
		kc := min(gemmKC, K-k0)
		for p := 0; p < panels; p++ {
			panel := bp[p*gemmKC*gemmNR : p*gemmKC*gemmNR+kc*gemmNR]
			pack(panel, n0+p*gemmNR, k0, kc)
			// Target: c itself, or the edge tile for a ragged last panel.
			tgt, ldt, off := c, ldc, m0*ldc+n0+p*gemmNR
			if ragged && p == panels-1 {
				tgt, ldt, off = edge, gemmNR, 0
			}
			m := 0
			for ; m+gemmMR <= rows; m += gemmMR {
				ar := a[(m0+m)*lda+k0:]
				cr := tgt[off+m*ldt:]
				if simd {
					simdKernel6(ar, lda, panel, cr, ldt, kc)
				} else {
					goKernel(ar, lda, panel, cr, ldt, kc, gemmMR)
				}
			}
			for ; m < rows; m++ {
				ar := a[(m0+m)*lda+k0:]
				cr := tgt[off+m*ldt:]
				if simd {
					simdKernel1(ar, panel, cr, kc)
				} else {
					goKernel(ar, lda, panel, cr, ldt, kc, 1)
				}
			}
		}
	}
	if ragged {
		n := n0 + (panels-1)*gemmNR
		w := n1 - n
		for m := 0; m < rows; m++ {
			copy(c[(m0+m)*ldc+n:(m0+m)*ldc+n+w], edge[m*gemmNR:m*gemmNR+w])
		}
	}
}

// goKernel is the portable micro-kernel: rows × 16 sums over one k block,
// each a multiply-add chain in k order from zero, added to c. (The Go
// compiler fuses the multiply-adds on arm64, as the assembly does on amd64.)
func goKernel(a []float32, lda int, b []float32, c []float32, ldc, kc, rows int) {
	b = b[:kc*gemmNR]
	for i := 0; i+2 <= rows; i += 2 {
		a0 := a[i*lda : i*lda+kc]
		a1 := a[(i+1)*lda : (i+1)*lda+kc][:len(a0)]
		for j := 0; j < gemmNR; j += 4 {
			var s00, s01, s02, s03, s10, s11, s12, s13 float32
			for kk, x0 := range a0 {
				x1 := a1[kk]
				bb := b[kk*gemmNR+j : kk*gemmNR+j+4]
				s00 += x0 * bb[0]
				s01 += x0 * bb[1]
				s02 += x0 * bb[2]
				s03 += x0 * bb[3]
				s10 += x1 * bb[0]
				s11 += x1 * bb[1]
				s12 += x1 * bb[2]
				s13 += x1 * bb[3]
			}
			r0 := c[i*ldc+j : i*ldc+j+4]
			r0[0] += s00
			r0[1] += s01
			r0[2] += s02
			r0[3] += s03
			r1 := c[(i+1)*ldc+j : (i+1)*ldc+j+4]
			r1[0] += s10
			r1[1] += s11
			r1[2] += s12
			r1[3] += s13
		}
	}
	if rows%2 == 1 {
		i := rows - 1
		a0 := a[i*lda : i*lda+kc]
		for j := 0; j < gemmNR; j += 4 {
			var s0, s1, s2, s3 float32
			for kk, x0 := range a0 {
				bb := b[kk*gemmNR+j : kk*gemmNR+j+4]
				s0 += x0 * bb[0]
				s1 += x0 * bb[1]
				s2 += x0 * bb[2]
				s3 += x0 * bb[3]
			}
			r := c[i*ldc+j : i*ldc+j+4]
			r[0] += s0
			r[1] += s1
			r[2] += s2
			r[3] += s3
		}
	}
}
