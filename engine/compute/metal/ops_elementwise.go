package metal

import (
	"h3studio/engine/compute"
)

func (b *Backend) binary(op, kop string, dst, x, y *compute.Tensor) {
	period := compute.BroadcastLen(op, dst, x, y)
	n := int64(dst.NumElements())
	b.count(float64(n))
	if n == 0 {
		return // an empty b broadcasts only over an empty a
	}
	xf, release := b.floatIn(x)
	defer release()
	b.floatOut(dst, nil, func(out *compute.Tensor) {
		b.launch1(kname(kop, xf.DType(), out.DType()), n, argBytes(KargsBinary{N: uint64(n), Period: uint64(period), BDt: dtCode(y)}), true,
			b.arg(xf, false), b.arg(y, false), b.arg(out, true))
	})
}

// Add computes a + b with suffix broadcasting.
func (b *Backend) Add(dst, x, y *compute.Tensor) { b.binary("Add", "add", dst, x, y) }

// Mul computes a · b with suffix broadcasting.
func (b *Backend) Mul(dst, x, y *compute.Tensor) { b.binary("Mul", "mul", dst, x, y) }

// unaryLike runs a one-input kernel with its argument bytes.
func (b *Backend) unaryLike(op, kop string, dst, x *compute.Tensor, flops float64, kargs func(n uint64) []byte) {
	compute.SameShape(op, dst, x)
	n := int64(dst.NumElements())
	b.count(flops * float64(n))
	xf, release := b.floatIn(x)
	defer release()
	b.floatOut(dst, nil, func(out *compute.Tensor) {
		b.launch1(kname(kop, xf.DType(), out.DType()), n, kargs(uint64(n)), true, b.arg(xf, false), b.arg(out, true))
	})
}

// Scale computes x·alpha + beta.
func (b *Backend) Scale(dst, x *compute.Tensor, alpha, beta float32) {
	b.unaryLike("Scale", "scale", dst, x, 2, func(n uint64) []byte { return argBytes(KargsScale{N: n, Alpha: alpha, Beta: beta}) })
}

// Clamp limits every element to [lo, hi]; NaN stays NaN.
func (b *Backend) Clamp(dst, x *compute.Tensor, lo, hi float32) {
	b.unaryLike("Clamp", "clamp", dst, x, 1, func(n uint64) []byte { return argBytes(KargsClamp{N: n, Lo: lo, Hi: hi}) })
}

// Unary applies op to every element.
func (b *Backend) Unary(dst, x *compute.Tensor, op compute.UnaryOp) {
	compute.CheckUnary(dst, x, op)
	b.unaryLike("Unary", "unary", dst, x, 4, func(n uint64) []byte { return argBytes(KargsUnary{N: n, Op: uint32(op)}) })
}

// GLU computes act(gate)·up over the two halves of each row of x.
func (b *Backend) GLU(dst, x *compute.Tensor, act compute.UnaryOp, gateFirst bool) {
	_, F := compute.GLUDims(dst, x, act)
	n := int64(dst.NumElements())
	b.count(6 * float64(n))
	if n == 0 {
		return
	}
	xf, release := b.floatIn(x)
	defer release()
	b.floatOut(dst, []*compute.Tensor{x}, func(out *compute.Tensor) {
		b.launch1(kname("glu", xf.DType(), out.DType()), n,
			argBytes(KargsGlu{N: uint64(n), F: uint32(F), Act: uint32(act), GateFirst: b2u(gateFirst)}), false,
			b.arg(xf, false), b.arg(out, true))
	})
}

// Modulate computes x·(1 + table[idx[r], scaleCol:+H]) + table[idx[r], shiftCol:+H].
func (b *Backend) Modulate(dst, x, table, idx *compute.Tensor, shiftCol, scaleCol int) {
	_, H, W, T := compute.ModulateDims(dst, x, table, idx, shiftCol, scaleCol)
	n := int64(x.NumElements())
	b.count(3 * float64(n))
	if n == 0 {
		return
	}
	xf, release := b.floatIn(x)
	defer release()
	ix, releaseI := b.indexTensor("Modulate", idx)
	defer releaseI()
	k := KargsModulate{N: uint64(n), H: uint32(H), TableW: uint32(W), TableRows: uint32(T),
		ShiftCol: uint32(shiftCol), ScaleCol: uint32(scaleCol), TableDt: dtCode(table), IdxDt: dtCode(ix)}
	b.floatOut(dst, []*compute.Tensor{table, idx}, func(out *compute.Tensor) {
		b.launch1(kname("modulate", xf.DType(), out.DType()), n, argBytes(k), true,
			b.arg(xf, false), b.arg(table, false), b.arg(ix, false), b.arg(out, true))
	})
}

// GatedAdd computes x + table[idx[r], gateCol:+H]·y.
func (b *Backend) GatedAdd(dst, x, y, table, idx *compute.Tensor, gateCol int) {
	_, H, W, T := compute.GatedAddDims(dst, x, y, table, idx, gateCol)
	n := int64(x.NumElements())
	b.count(2 * float64(n))
	if n == 0 {
		return
	}
	xf, release := b.floatIn(x)
	defer release()
	ix, releaseI := b.indexTensor("GatedAdd", idx)
	defer releaseI()
	k := KargsGatedAdd{N: uint64(n), H: uint32(H), TableW: uint32(W), TableRows: uint32(T),
		GateCol: uint32(gateCol), TableDt: dtCode(table), IdxDt: dtCode(ix), YDt: dtCode(y)}
	b.floatOut(dst, []*compute.Tensor{table, idx}, func(out *compute.Tensor) {
		b.launch1(kname("gated_add", xf.DType(), out.DType()), n, argBytes(k), true,
			b.arg(xf, false), b.arg(y, false), b.arg(table, false), b.arg(ix, false), b.arg(out, true))
	})
}

// RoPE rotates the first rotDim channels of x [.., S, D] (rotate-half).
func (b *Backend) RoPE(dst, x, cos, sin *compute.Tensor, rotDim int) {
	rows, S, D := compute.RoPEDims(dst, x, cos, sin, rotDim)
	half := rotDim / 2
	b.count(3 * float64(x.NumElements()))
	if rows == 0 || D == 0 {
		return
	}
	xf, release := b.floatIn(x)
	defer release()
	cf, sf := cos, sin
	if cf.DType() != sf.DType() { // one code reads both tables: widen both to F32 (exact)
		var rel1, rel2 func()
		cf, rel1 = b.asType(cf, compute.F32)
		defer rel1()
		sf, rel2 = b.asType(sf, compute.F32)
		defer rel2()
	}
	k := KargsRope{Rows: uint64(rows), S: uint32(S), D: uint32(D), RotDim: uint32(rotDim), CsDt: dtCode(cf)}
	per := D - half
	tg := min(per, groupSize)
	b.floatOut(dst, []*compute.Tensor{cos, sin}, func(out *compute.Tensor) {
		b.encode(&Dispatch{Kernel: kname("rope", xf.DType(), out.DType()),
			Args:   []Arg{{Bytes: argBytes(k)}, b.arg(xf, false), b.arg(cf, false), b.arg(sf, false), b.arg(out, true)},
			Groups: [3]int{(per + tg - 1) / tg, rows, 1}, Threads: [3]int{tg, 1, 1}, InPlace: true})
	})
}

// Snake computes x + 1/(a+1e-9)·sin²(a·x) (SnakeBeta: 1/(b+1e-9)) per channel.
func (b *Backend) Snake(dst, x, alpha, beta *compute.Tensor, logScale bool) {
	_, L := compute.SnakeDims(dst, x, alpha, beta)
	n := int64(x.NumElements())
	b.count(8 * float64(n))
	if n == 0 {
		return
	}
	xf, release := b.floatIn(x)
	defer release()
	k := KargsSnake{N: uint64(n), L: uint64(L), AlphaDt: dtCode(alpha), BetaDt: dtCode(beta), HasBeta: b2u(beta != nil), LogScale: b2u(logScale)}
	b.floatOut(dst, []*compute.Tensor{alpha, beta}, func(out *compute.Tensor) {
		b.launch1(kname("snake", xf.DType(), out.DType()), n, argBytes(k), true,
			b.arg(xf, false), b.arg(alpha, false), b.optArg(beta), b.arg(out, true))
	})
}
