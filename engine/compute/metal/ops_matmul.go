package metal

import (
	"h3studio/engine/compute"
)

const (
	gemmTile    = 32  // gemm.h GEMM_BM, GEMM_BN
	gemmThreads = 128 // gemm.h GEMM_THREADS
)

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// MatMul computes dst[m,n] = Σ_k x[m,k]·w[n,k] + bias[n].
func (b *Backend) MatMul(dst, x, w, bias *compute.Tensor) {
	M, N, K := compute.MatMulDims(dst, x, w, bias)
	flops := 2 * float64(M) * float64(N) * float64(K)
	if _, _, ok := w.Quant(); ok {
		b.quantMatMul(dst, x, w, bias, M, N, K) // ops_quant.go
		return
	}
	if M == 0 || N == 0 {
		b.count(flops)
		return
	}
	xf, releaseX := b.floatIn(x)
	defer releaseX()
	wf, releaseW := b.floatIn(w)
	defer releaseW()
	// Kernels exist for x and w of one type, and for float32 x with bf16/f16 w.
	if xf.DType() != wf.DType() && xf.DType() != compute.F32 {
		var rel func()
		xf, rel = b.asType(xf, compute.F32)
		defer rel()
	}
	b.productRuns(dst, x, w, bias, xf, wf, M, N, K, func(out *compute.Tensor, xr, wa, or Arg, rows int) {
		b.matmulRows(rows, N, K, xr, wa, or, bias, xf.DType(), wf.DType(), out.DType())
	})
}

// productRuns records dst[M, N] = x·wᵀ (+ bias), read as xf and wf, in runs
// of rows (rowRuns) inside floatOut: run records one, given out, xf's and
// out's rows of the run as xr and or, and wf as wa.
func (b *Backend) productRuns(dst, x, w, bias, xf, wf *compute.Tensor, M, N, K int, run func(out *compute.Tensor, xr, wa, or Arg, rows int)) {
	perRow, step := b.rowRuns(M, N, K)
	b.floatOut(dst, []*compute.Tensor{x, w, bias}, func(out *compute.Tensor) {
		xa, wa, oa := b.arg(xf, false), b.arg(wf, false), b.arg(out, true)
		for m0 := 0; m0 < M; m0 += step {
			rows := min(step, M-m0)
			b.count(perRow * float64(rows))
			run(out, rowsOf(xa, m0, rows, K), wa, rowsOf(oa, m0, rows, N), rows)
		}
	})
}

// rowRuns cuts an M×N×K product into runs of rows (whole tiles) whose
// products stay within DispatchBudget: each run's FLOPs are perRow·rows.
func (b *Backend) rowRuns(M, N, K int) (perRow float64, step int) {
	perRow, step = 2*float64(N)*float64(K), M
	if perRow*float64(M) > b.opts.DispatchBudget*0.9 {
		step = max(gemmTile, int(b.opts.DispatchBudget*0.9/perRow)/gemmTile*gemmTile)
	}
	return perRow, step
}

// rowsOf is rows [m0, m0+rows) of a row-major matrix view of width cols.
func rowsOf(a Arg, m0, rows, cols int) Arg {
	row := int64(cols) * int64(a.Align)
	a.Offset += int64(m0) * row
	a.Size = int64(rows) * row
	return a
}

// matmulRows records one product of M rows: MPSGraph where it takes the
// types and the product is large enough, else the hand kernel.
func (b *Backend) matmulRows(M, N, K int, xa, wa, oa Arg, bias *compute.Tensor, xt, wt, ot compute.DType) {
	if b.gemm != nil && !b.opts.Oracles.Has(OracleHandGEMM) && 2*float64(M)*float64(N)*float64(K) >= b.opts.GEMMMinFLOPs &&
		xt == wt && ot == xt {
		g := &GEMM{M: M, N: N, K: K, X: xa, W: wa, Dst: oa, XType: xt, WType: wt, DType: ot}
		if bias != nil {
			g.Bias, g.BiasType = b.arg(bias, false), bias.DType()
		}
		b.mu.Lock()
		ok, err := b.gemm.EncodeGEMM(g)
		if ok {
			b.flopsEncoded = b.flops.Load() // the product's FLOPs went with it
		}
		b.mu.Unlock()
		if err != nil {
			b.fail(err)
		}
		if ok {
			b.dispatches.Add(1)
			b.moved.Add(uint64(g.X.Size + g.W.Size + g.Dst.Size + g.Bias.Size))
			return
		}
	}
	kernel := kname("matmul", xt, ot)
	if xt != wt {
		kernel += "_w" + tname(wt)
	}
	k := KargsGemm{M: uint32(M), N: uint32(N), K: uint32(K), CoutG: uint32(N), BiasDt: dtCode(bias), HasBias: b2u(bias != nil)}
	b.encode(&Dispatch{Kernel: kernel,
		Args:   []Arg{{Bytes: argBytes(k)}, xa, wa, b.optArg(bias), oa},
		Groups: [3]int{ceilDiv(N, gemmTile), ceilDiv(M, gemmTile), 1}, Threads: [3]int{gemmThreads, 1, 1}})
}

// convKargs fills the geometry of kargs_gemm for a checked convolution.
func convKargs(g compute.ConvGeom, p compute.ConvParams) KargsGemm {
	k := KargsGemm{Nsp: uint32(g.Spatial), Kprod: uint32(g.KernelElems), InProd: uint64(g.InElems), OutProd: uint64(g.OutElems),
		PadMode: uint32(p.PadMode), CinG: uint32(g.CinG), CoutG: uint32(g.CoutG)}
	for a := 0; a < 3; a++ {
		k.InSize[a], k.OutSize[a], k.Ker[a], k.Stride[a], k.Dil[a] = 1, 1, 1, 1, 1
	}
	for a := 0; a < g.Spatial; a++ {
		k.InSize[a], k.OutSize[a], k.Ker[a] = uint32(g.In[a]), uint32(g.Out[a]), uint32(g.Kernel[a])
		k.Stride[a], k.Dil[a], k.PadBefore[a] = int32(p.StrideAt(a)), int32(p.DilationAt(a)), int32(p.PadBeforeAt(a))
	}
	return k
}

// conv runs kernel_conv or kernel_conv_transpose.
func (b *Backend) conv(kop string, dst, x, w, bias *compute.Tensor, g compute.ConvGeom, p compute.ConvParams) {
	k := convKargs(g, p)
	k.M, k.N, k.K = uint32(k.OutProd), k.CoutG, k.CinG*k.Kprod
	k.BiasDt, k.HasBias = dtCode(bias), b2u(bias != nil)
	if dst.NumElements() == 0 {
		return
	}
	xf, releaseX := b.floatIn(x)
	defer releaseX()
	wf, releaseW := b.floatIn(w)
	defer releaseW()
	if xf.DType() != wf.DType() {
		var r1, r2 func()
		xf, r1 = b.asType(xf, compute.F32)
		defer r1()
		wf, r2 = b.asType(wf, compute.F32)
		defer r2()
	}
	b.floatOut(dst, []*compute.Tensor{x, w, bias}, func(out *compute.Tensor) {
		b.encode(&Dispatch{Kernel: kname(kop, xf.DType(), out.DType()),
			Args:   []Arg{{Bytes: argBytes(k)}, b.arg(xf, false), b.arg(wf, false), b.optArg(bias), b.arg(out, true)},
			Groups: [3]int{ceilDiv(int(k.N), gemmTile), ceilDiv(int(k.M), gemmTile), g.Groups}, Threads: [3]int{gemmThreads, 1, 1}})
	})
}

// Conv is the N-d cross-correlation (batch 1) with padding modes and groups.
func (b *Backend) Conv(dst, x, w, bias *compute.Tensor, p compute.ConvParams) {
	g := compute.ConvDims(dst, x, w, bias, p)
	b.count(2 * float64(g.Cout) * float64(g.OutElems) * float64(g.CinG*g.KernelElems))
	b.conv("conv", dst, x, w, bias, g, p)
}

// ConvTranspose is the transposed N-d convolution (zero padding only).
func (b *Backend) ConvTranspose(dst, x, w, bias *compute.Tensor, p compute.ConvParams) {
	g := compute.ConvTransposeDims(dst, x, w, bias, p)
	b.count(2 * float64(g.Cin) * float64(g.CoutG) * float64(g.InElems) * float64(g.KernelElems))
	b.conv("conv_transpose", dst, x, w, bias, g, p)
}
