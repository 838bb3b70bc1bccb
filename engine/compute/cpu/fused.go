package cpu

import (
	"h3studio/engine/compute"
)

// The fused DiT kernels (compute.Fused). Each is its unfused definition
// (compute.Unfused*) computed in one pass per row: the row functions are the
// ones the unfused kernels run, and every intermediate the sequence stores is
// rounded to its destination's dtype in between, so the results are
// bit-identical to the sequence (fused_test.go checks it). Destinations of a
// dtype other than F32, F16 or BF16 run the sequence itself.

func isFloat(dt compute.DType) bool {
	return dt == compute.F32 || dt == compute.F16 || dt == compute.BF16
}

// roundRow rounds o in place to dt (what storing it as dt and loading it
// back gives).
func roundRow(o []float32, dt compute.DType) {
	if dt == compute.F32 {
		return
	}
	r := rounder(dt)
	for i, v := range o {
		o[i] = r(v)
	}
}

// RMSNormModulate is RMSNorm then Modulate (compute.Fused).
func (b *Backend) RMSNormModulate(dst, x *compute.Tensor, p compute.NormModulation) {
	const op = "RMSNormModulate"
	R, H, W, T := compute.RMSNormModulateDims(dst, x, p)
	if !isFloat(dst.DType()) {
		compute.UnfusedRMSNormModulate(b, dst, x, p)
		return
	}
	ix, ws, ts := indices(p.Rows), loadOpt(p.Weight), load(p.Table)
	b.dispatch(7 * float64(x.NumElements()))
	xs := load(x)
	out := output(dst)
	dt := dst.DType()
	low, r := lowPrecision(dt), rounder(dt)
	b.perTableRow(op, R, 8, T, ix, func(row, tr int) {
		o := out[row*H : (row+1)*H]
		rmsNormRow(o, xs[row*H:(row+1)*H], ws, p.Eps)
		roundRow(o, dt)
		modulateRow(o, o, ts[tr*W+p.ShiftCol:tr*W+p.ShiftCol+H], ts[tr*W+p.ScaleCol:tr*W+p.ScaleCol+H], low, r)
	})
	store(dst, out)
}

// GatedAddRMSNormModulate is GatedAdd then RMSNorm then Modulate
// (compute.Fused).
func (b *Backend) GatedAddRMSNormModulate(h, n, x, y, gateTable *compute.Tensor, gateCol int, p compute.NormModulation) {
	const op = "GatedAddRMSNormModulate"
	R, H, W, T, GW, GT := compute.GatedAddRMSNormModulateDims(h, n, x, y, gateTable, gateCol, p, overlap)
	if !isFloat(h.DType()) || !isFloat(n.DType()) {
		compute.UnfusedGatedAddRMSNormModulate(b, h, n, x, y, gateTable, gateCol, p)
		return
	}
	ix, ws, ts := indices(p.Rows), loadOpt(p.Weight), load(p.Table)
	gs := ts
	if gateTable != p.Table {
		gs = load(gateTable)
	}
	b.dispatch(9 * float64(x.NumElements()))
	xs, ys := load(x), load(y)
	hout, nout := output(h), output(n)
	hdt, ndt := h.DType(), n.DType()
	hlow, hr := lowPrecision(hdt), rounder(hdt)
	nlow, nr := lowPrecision(ndt), rounder(ndt)
	b.perTableRow(op, R, 8, min(T, GT), ix, func(row, tr int) {
		ho := hout[row*H : (row+1)*H]
		gatedAddRow(ho, xs[row*H:(row+1)*H], ys[row*H:(row+1)*H], gs[tr*GW+gateCol:tr*GW+gateCol+H], hlow, hr)
		roundRow(ho, hdt) // already rounded by the BF16/F16 chain; kept for clarity of the definition
		no := nout[row*H : (row+1)*H]
		rmsNormRow(no, ho, ws, p.Eps)
		roundRow(no, ndt)
		modulateRow(no, no, ts[tr*W+p.ShiftCol:tr*W+p.ShiftCol+H], ts[tr*W+p.ScaleCol:tr*W+p.ScaleCol+H], nlow, nr)
	})
	store(h, hout)
	store(n, nout)
}

// QKNormRoPE splits a QKV projection into q, k, v heads with QK-norm and
// rotary embedding (compute.Fused).
func (b *Backend) QKNormRoPE(q, k, v, qkv *compute.Tensor, p compute.QKNormRoPEParams) {
	S, Hs, D := compute.QKNormRoPEDims(q, k, v, qkv, p, overlap)
	dt := qkv.DType()
	rope := p.Cos != nil
	half := p.RotDim / 2
	if !isFloat(dt) {
		compute.UnfusedQKNormRoPE(b, q, k, v, qkv, p)
		return
	}
	b.dispatch(14 * float64(q.NumElements()))
	src := load(qkv)
	raw, es := bytesOf(qkv), dt.Size()
	vb := bytesOf(v)
	wq, wk, cs, sn := loadOpt(p.NormQ), loadOpt(p.NormK), loadOpt(p.Cos), loadOpt(p.Sin)
	qo, ko := output(q), output(k)
	low, r := lowPrecision(dt), rounder(dt)
	// off is the element offset of part c of head h at position s.
	off := func(c, s, h int) int {
		if p.Layout == compute.QKVPlanar {
			return ((c*S+s)*Hs + h) * D
		}
		return ((s*Hs+h)*3 + c) * D
	}
	b.parallel(Hs*S, 16, func(lo, hi int) {
		tmp := make([]float32, D)
		for row := lo; row < hi; row++ {
			h, s := row/S, row%S
			// v is a transpose: bytes are copied, never converted.
			copy(vb[row*D*es:(row+1)*D*es], raw[off(2, s, h)*es:(off(2, s, h)+D)*es])
			for c, o := range [][]float32{qo[row*D : (row+1)*D], ko[row*D : (row+1)*D]} {
				w := wq
				if c == 1 {
					w = wk
				}
				if !rope {
					rmsNormRow(o, src[off(c, s, h):off(c, s, h)+D], w, p.Eps)
					roundRow(o, dt)
					continue
				}
				rmsNormRow(tmp, src[off(c, s, h):off(c, s, h)+D], w, p.Eps)
				roundRow(tmp, dt)
				ropeRow(o, tmp, cs[s*half:(s+1)*half], sn[s*half:(s+1)*half], p.RotDim, low, r)
			}
		}
	})
	store(q, qo)
	store(k, ko)
}

// overlap reports whether two CPU tensors share bytes.
func overlap(a, b *compute.Tensor) bool {
	x, y := bytesOf(a), bytesOf(b)
	if len(x) == 0 || len(y) == 0 {
		return false
	}
	return overlaps(&x[0], len(x), &y[0], len(y))
}
