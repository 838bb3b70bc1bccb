package cpu

import (
	"h3studio/engine/compute"
)

// Modulate computes x·(1+scale)+shift with per-row table rows.
func (b *Backend) Modulate(dst, x, table, idx *compute.Tensor, shiftCol, scaleCol int) {
	R, H, W, T := compute.ModulateDims(dst, x, table, idx, shiftCol, scaleCol)
	ix := indices(idx)
	b.dispatch(3 * float64(x.NumElements()))
	xs, ts := load(x), load(table)
	out := output(dst)
	low := lowPrecision(dst.DType())
	r := rounder(dst.DType())
	b.perTableRow("Modulate", R, 16, T, ix, func(row, tr int) {
		sh := ts[tr*W+shiftCol : tr*W+shiftCol+H]
		sc := ts[tr*W+scaleCol : tr*W+scaleCol+H]
		modulateRow(out[row*H:(row+1)*H], xs[row*H:(row+1)*H], sh, sc, low, r)
	})
	store(dst, out)
}

// perTableRow runs fn(row, tr) for rows [0, R) in parallel, grain rows at a
// time, tr being row's table row ix[row]; it panics, naming op, for a table
// row outside [0, T).
func (b *Backend) perTableRow(op string, R, grain, T int, ix []int64, fn func(row, tr int)) {
	b.parallel(R, grain, func(lo, hi int) {
		for row := lo; row < hi; row++ {
			tr := int(ix[row])
			compute.Check(tr >= 0 && tr < T, op, "table row %d outside [0,%d)", tr, T)
			fn(row, tr)
		}
	})
}

// modulateRow writes xr·(1+sc)+sh into o (o may be xr), rounding with r
// after each operation when low (the BF16/F16 chain).
func modulateRow(o, xr, sh, sc []float32, low bool, r func(float32) float32) {
	for j := range o {
		if low {
			o[j] = r(r(xr[j]*r(1+sc[j])) + sh[j])
		} else {
			o[j] = xr[j]*(1+sc[j]) + sh[j]
		}
	}
}

// GatedAdd computes x + gate·y with per-row table rows.
func (b *Backend) GatedAdd(dst, x, y, table, idx *compute.Tensor, gateCol int) {
	R, H, W, T := compute.GatedAddDims(dst, x, y, table, idx, gateCol)
	ix := indices(idx)
	b.dispatch(2 * float64(x.NumElements()))
	xs, ys, ts := load(x), load(y), load(table)
	out := output(dst)
	low := lowPrecision(dst.DType())
	r := rounder(dst.DType())
	b.perTableRow("GatedAdd", R, 16, T, ix, func(row, tr int) {
		g := ts[tr*W+gateCol : tr*W+gateCol+H]
		gatedAddRow(out[row*H:(row+1)*H], xs[row*H:(row+1)*H], ys[row*H:(row+1)*H], g, low, r)
	})
	store(dst, out)
}

// gatedAddRow writes xr + g·yr into o (o may be xr), rounding the product
// and the sum with r when low.
func gatedAddRow(o, xr, yr, g []float32, low bool, r func(float32) float32) {
	for j := range o {
		if low {
			o[j] = r(xr[j] + r(g[j]*yr[j]))
		} else {
			o[j] = xr[j] + g[j]*yr[j]
		}
	}
}

// RoPE applies rotate-half rotary embedding to the first rotDim channels.
func (b *Backend) RoPE(dst, x, cos, sin *compute.Tensor, rotDim int) {
	rows, S, D := compute.RoPEDims(dst, x, cos, sin, rotDim)
	half := rotDim / 2
	b.dispatch(3 * float64(x.NumElements()))
	xs, cs, ss := load(x), load(cos), load(sin)
	out := make([]float32, dst.NumElements())
	low := lowPrecision(dst.DType())
	r := rounder(dst.DType())
	b.parallel(rows, 32, func(lo, hi int) {
		for row := lo; row < hi; row++ {
			s := row % S
			ropeRow(out[row*D:(row+1)*D], xs[row*D:(row+1)*D], cs[s*half:(s+1)*half], ss[s*half:(s+1)*half], rotDim, low, r)
		}
	})
	store(dst, out)
}

// ropeRow rotates the first rotDim channels of xr into o (rotate-half, c and
// sn of rotDim/2 angles; o must not be xr), rounding both products and the
// sum with r when low, and copies the other channels.
func ropeRow(o, xr, c, sn []float32, rotDim int, low bool, r func(float32) float32) {
	half := rotDim / 2
	for d := 0; d < half; d++ {
		a, bb := xr[d], xr[d+half]
		if low {
			o[d] = r(r(a*c[d]) + r(-bb*sn[d]))
			o[d+half] = r(r(bb*c[d]) + r(a*sn[d]))
		} else {
			o[d] = a*c[d] - bb*sn[d]
			o[d+half] = bb*c[d] + a*sn[d]
		}
	}
	copy(o[rotDim:], xr[rotDim:])
}
