package computetest

import (
	"math"

	"h3studio/engine/compute"
)

// Cases of the fused DiT kernels (compute.Fused). Each configuration is
// checked twice:
//
//   - against the reference backend, with a bound derived from the unfused
//     sequence: the reference and the backend may sum a row's squares in
//     different orders (the norm bound), and a normalised value that
//     rounds to the other neighbour of the activation type then moves the
//     modulated (or rotated) result by about two units of that type at the
//     magnitude of its terms;
//   - against the backend's own unfused sequence (Case.Unfused), bit for bit:
//     a fused kernel must compute what the kernels it replaces compute.

// stepRel is the relative spacing of dt's values (2^-mantissa bits).
func stepRel(dt compute.DType) float64 {
	switch dt {
	case compute.BF16:
		return math.Ldexp(1, -7)
	case compute.F16:
		return math.Ldexp(1, -10)
	}
	return math.Ldexp(1, -23)
}

// fusedNormBound bounds a fused RMSNorm + modulation against the
// reference, relative to the magnitude |n|·(1+|scale|) + |shift| (Mag).
func fusedNormBound(dt compute.DType) Bound {
	return Bound{ULP: 1, Rel: 2*stepRel(dt) + 2e-5, RMS: 2e-5}
}

// fusedRoPEBound bounds QKNormRoPE against the reference: a flip of a
// normalised channel moves both outputs of its rotation pair, so the bound
// is relative to the row's root mean square as well as the element.
func fusedRoPEBound(dt compute.DType) Bound {
	return Bound{ULP: 2, Rel: 2 * stepRel(dt), RMS: 4*stepRel(dt) + 2e-5}
}

func fusedCases(add func(...Case)) {
	type run = func(k compute.Kernels, d *compute.Tensor, t []*compute.Tensor)
	both := func(name string, in []Tensor, out Tensor, b Bound, mag, fused, unfused run) {
		c := mk(name, in, out, b, fused)
		c.Mag = mag
		e := mk(name+"/unfused", in, out, exact, fused)
		e.Unfused = unfused
		add(c, e)
	}
	bothInPlace := func(name string, in []Tensor, b Bound, mag, fused, unfused run) {
		c := inPlace(mk(name, in, Tensor{}, b, fused), 0)
		c.Mag = mag
		e := inPlace(mk(name+"/unfused", in, Tensor{}, exact, fused), 0)
		e.Unfused = unfused
		add(c, e)
	}

	// ------------------------------------------------------------ RMSNormModulate
	// x [R, H], w [H] (or none), table [T, W], rows [R]; shift and scale
	// columns inside W.
	nm := func(t []*compute.Tensor, w bool, shift, scale int) compute.NormModulation {
		p := compute.NormModulation{Eps: 1e-6, Table: t[2], Rows: t[3], ShiftCol: shift, ScaleCol: scale}
		if w {
			p.Weight = t[1]
		}
		return p
	}
	normMod := func(w bool, shift, scale int) (fused, unfused run) {
		return func(k compute.Kernels, d *compute.Tensor, t []*compute.Tensor) {
				k.RMSNormModulate(d, t[0], nm(t, w, shift, scale))
			}, func(k compute.Kernels, d *compute.Tensor, t []*compute.Tensor) {
				compute.UnfusedRMSNormModulate(k, d, t[0], nm(t, w, shift, scale))
			}
	}
	for _, dt := range floats {
		f, u := normMod(true, 3, 80)
		both(pn2("RMSNormModulate", dt), []Tensor{nrmS(dt, 2, 5, 77), nrm(compute.BF16, 77), nrmS(compute.BF16, 0.5, 3, 4*77), index(compute.I64, 3, 5)},
			nrm(dt, 5, 77), fusedNormBound(dt), f, f, u)
	}
	f, u := normMod(false, 300, 0)
	bothInPlace("RMSNormModulate/wide_no_weight_f32_table/bf16_bf16",
		[]Tensor{nrm(compute.BF16, 3, 300), nrm(compute.BF16, 300), nrmS(compute.F32, 0.5, 2, 600), index(compute.I32, 2, 3)},
		fusedNormBound(compute.BF16), f, f, u)
	f, u = normMod(true, 0, 33)
	both("RMSNormModulate/mixed_fallback/f32_bf16", []Tensor{nrm(compute.F32, 4, 33), nrm(compute.F32, 33), nrmS(compute.BF16, 0.5, 2, 66), index(compute.I64, 2, 4)},
		nrm(compute.BF16, 4, 33), fusedNormBound(compute.BF16), f, f, u)

	// ------------------------------------------------------------ GatedAddRMSNormModulate
	// x [R, H], y [R, H], gate table, w, modulation table, rows; dst [2, R, H]
	// holds h then n.
	gnm := func(t []*compute.Tensor, mod int) compute.NormModulation {
		return compute.NormModulation{Weight: t[3], Eps: 1e-5, Table: t[mod], Rows: t[5], ShiftCol: 7, ScaleCol: 77 + 7}
	}
	gated := func(mod int) (fused, unfused run) {
		return func(k compute.Kernels, d *compute.Tensor, t []*compute.Tensor) {
				k.GatedAddRMSNormModulate(d.Row(0), d.Row(1), t[0], t[1], t[2], 2*77, gnm(t, mod))
			}, func(k compute.Kernels, d *compute.Tensor, t []*compute.Tensor) {
				compute.UnfusedGatedAddRMSNormModulate(k, d.Row(0), d.Row(1), t[0], t[1], t[2], 2*77, gnm(t, mod))
			}
	}
	for _, dt := range floats {
		in := []Tensor{nrm(dt, 5, 77), nrm(compute.F32, 5, 77), nrmS(compute.BF16, 0.5, 3, 3*77), nrm(compute.BF16, 77),
			nrmS(compute.F32, 0.5, 4, 3*77), index(compute.I64, 3, 5)}
		f, u := gated(4) // the next block's table
		both(pn2("GatedAddRMSNormModulate", dt), in, nrm(dt, 2, 5, 77), fusedNormBound(dt), f, f, u)
	}
	{
		// One table for the gate and the modulation (inside a block), h the
		// same view as x, a wide row.
		sameTable := func(t []*compute.Tensor) compute.NormModulation {
			return compute.NormModulation{Weight: t[2], Eps: 1e-5, Table: t[1], Rows: t[3], ShiftCol: 0, ScaleCol: 300}
		}
		f := func(k compute.Kernels, d *compute.Tensor, t []*compute.Tensor) {
			k.GatedAddRMSNormModulate(d.Row(0), d.Row(1), d.Row(0), t[4], t[1], 600, sameTable(t))
		}
		u := func(k compute.Kernels, d *compute.Tensor, t []*compute.Tensor) {
			compute.UnfusedGatedAddRMSNormModulate(k, d.Row(0), d.Row(1), d.Row(0), t[4], t[1], 600, sameTable(t))
		}
		mag := func(k compute.Kernels, d *compute.Tensor, t []*compute.Tensor) {
			k.GatedAddRMSNormModulate(d.Row(0), d.Row(1), t[0].Row(0), t[4], t[1], 600, sameTable(t))
		}
		bothInPlace("GatedAddRMSNormModulate/in_place_one_table/bf16_bf16",
			[]Tensor{nrm(compute.BF16, 2, 3, 300), nrmS(compute.BF16, 0.5, 2, 900), nrm(compute.F32, 300), index(compute.I32, 2, 3), nrm(compute.BF16, 3, 300)},
			fusedNormBound(compute.BF16), mag, f, u)
	}

	// ------------------------------------------------------------ QKNormRoPE
	// qkv in a layout, NormQ, NormK, cos, sin; dst [3, heads, S, D] holds
	// q, k and v.
	qk := func(layout compute.QKVLayout, rot int, weights bool) (fused, unfused run) {
		params := func(t []*compute.Tensor) compute.QKNormRoPEParams {
			p := compute.QKNormRoPEParams{Layout: layout, Eps: 1e-5}
			if weights {
				p.NormQ, p.NormK = t[1], t[2]
			}
			if rot > 0 {
				p.Cos, p.Sin, p.RotDim = t[3], t[4], rot
			}
			return p
		}
		return func(k compute.Kernels, d *compute.Tensor, t []*compute.Tensor) {
				k.QKNormRoPE(d.Row(0), d.Row(1), d.Row(2), t[0], params(t))
			}, func(k compute.Kernels, d *compute.Tensor, t []*compute.Tensor) {
				compute.UnfusedQKNormRoPE(k.(compute.Backend), d.Row(0), d.Row(1), d.Row(2), t[0], params(t))
			}
	}
	qkvShape := func(l compute.QKVLayout, S, H, D int) []int {
		if l == compute.QKVPlanar {
			return []int{3, S, H, D}
		}
		return []int{S, H, 3, D}
	}
	for _, dt := range floats {
		const S, H, D, rot = 7, 3, 40, 24
		f, u := qk(compute.QKVInterleaved, rot, true)
		in := []Tensor{nrmS(dt, 2, qkvShape(compute.QKVInterleaved, S, H, D)...), uni(compute.BF16, 0.5, 1.5, D), uni(compute.F32, 0.5, 1.5, D),
			uni(compute.BF16, -1, 1, S, rot/2), uni(compute.BF16, -1, 1, S, rot/2)}
		both(pn2("QKNormRoPE/interleaved", dt), in, nrm(dt, 3, H, S, D), fusedRoPEBound(dt), nil, f, u)
	}
	for _, c := range []struct {
		name      string
		layout    compute.QKVLayout
		dt        compute.DType
		S, H, D   int
		rot       int
		weights   bool
		tableType compute.DType
	}{
		{"planar_d128_full_rotation", compute.QKVPlanar, compute.BF16, 5, 2, 128, 128, true, compute.F32},
		{"planar_no_rope_no_weights", compute.QKVPlanar, compute.F32, 6, 2, 32, 0, false, compute.F32},
		{"interleaved_no_rope", compute.QKVInterleaved, compute.BF16, 4, 3, 64, 0, true, compute.BF16},
		{"d300_fallback", compute.QKVInterleaved, compute.F32, 3, 2, 300, 96, true, compute.F32},
	} {
		f, u := qk(c.layout, c.rot, c.weights)
		half := max(c.rot/2, 1)
		in := []Tensor{nrmS(c.dt, 2, qkvShape(c.layout, c.S, c.H, c.D)...), uni(compute.BF16, 0.5, 1.5, c.D), uni(compute.BF16, 0.5, 1.5, c.D),
			uni(c.tableType, -1, 1, c.S, half), uni(c.tableType, -1, 1, c.S, half)}
		both("QKNormRoPE/"+c.name+"/"+tn(c.dt)+"_"+tn(c.dt), in, nrm(c.dt, 3, c.H, c.S, c.D), fusedRoPEBound(c.dt), nil, f, u)
	}
}

// pn2 names a case of one activation type: op/t_t.
func pn2(op string, dt compute.DType) string { return op + "/" + tn(dt) + "_" + tn(dt) }
