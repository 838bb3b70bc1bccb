package computetest

import (
	"fmt"
	"math"
	"strings"

	"h3studio/engine/compute"
)

var floats = []compute.DType{compute.F32, compute.F16, compute.BF16}

// tn spells dt in case names: f32, bf16, f64.
func tn(dt compute.DType) string { return strings.ToLower(dt.String()) }

// dims spells a shape 3x5x7.
func dims(s []int) string {
	var b strings.Builder
	for i, d := range s {
		if i > 0 {
			b.WriteByte('x')
		}
		fmt.Fprint(&b, d)
	}
	return b.String()
}

// Operand constructors.
func nrm(dt compute.DType, shape ...int) Tensor { return Tensor{DType: dt, Shape: shape} }
func nrmS(dt compute.DType, scale float64, shape ...int) Tensor {
	return Tensor{DType: dt, Shape: shape, Gen: Gen{Kind: Normal, Scale: scale}}
}
func uni(dt compute.DType, lo, hi float64, shape ...int) Tensor {
	return Tensor{DType: dt, Shape: shape, Gen: Gen{Kind: Uniform, Lo: lo, Hi: hi}}
}
func ints(dt compute.DType, lo, hi float64, shape ...int) Tensor {
	return Tensor{DType: dt, Shape: shape, Gen: Gen{Kind: Ints, Lo: lo, Hi: hi}}
}
func index(dt compute.DType, n int, shape ...int) Tensor {
	return Tensor{DType: dt, Shape: shape, Gen: Gen{Kind: Index, N: n}}
}
func perm(dt compute.DType, n int, shape ...int) Tensor {
	return Tensor{DType: dt, Shape: shape, Gen: Gen{Kind: Perm, N: n}}
}

func mk(name string, in []Tensor, out Tensor, b Bound, run func(k compute.Kernels, dst *compute.Tensor, in []*compute.Tensor)) Case {
	return Case{Name: name, In: in, Out: out, InPlace: -1, Bound: b, Run: run}
}

func inPlace(c Case, i int) Case {
	c.InPlace = i
	c.Name += "/inplace"
	return c
}

var (
	exact = Bound{Exact: true}
	// transcendental: float32 functions against float64 ones rounded to
	// float32 (Metal's precise functions are within a few ulps).
	transcendental = Bound{ULP: 1, Rel: 2e-6, Abs: 2e-7}
)

// sumBound is the bound for sums of k products in float32 computed in two
// orders: 2·k·2⁻²⁴ of Σ|terms| (the classical worst case of each), plus two
// output ulps (rounding flips; a library GEMM may round the product before
// adding the bias).
func sumBound(k int) Bound { return Bound{ULP: 2, Rel: 2 * float64(max(k, 1)) * math.Ldexp(1, -24)} }

// Cases lists the conformance cases.
func Cases(o Options) []Case {
	var cs []Case
	add := func(c ...Case) { cs = append(cs, c...) }
	pairs := func(f func(in, out compute.DType)) {
		for _, in := range floats {
			for _, out := range floats {
				f(in, out)
			}
		}
	}
	pn := func(op string, in, out compute.DType) string { return fmt.Sprintf("%s/%s_%s", op, tn(in), tn(out)) }

	// ---------------------------------------------------------------- Copy, Fill
	all := []compute.DType{compute.F32, compute.F16, compute.BF16, compute.F64, compute.I64, compute.I32, compute.U8, compute.I8, compute.Bool}
	for _, dt := range all {
		in := nrmS(dt, 3, 3, 37)
		switch dt {
		case compute.I64, compute.I32, compute.I8:
			in = ints(dt, -100, 100, 3, 37)
		case compute.U8:
			in = ints(dt, 0, 255, 3, 37)
		case compute.Bool:
			in = ints(dt, 0, 1, 3, 37)
		}
		add(mk("Copy/same/"+dt.String(), []Tensor{in}, Tensor{DType: dt, Shape: []int{111}}, exact,
			func(k compute.Kernels, dst *compute.Tensor, in []*compute.Tensor) { k.Copy(dst, in[0]) }))
	}
	for _, src := range floats {
		for _, dst := range floats {
			if src == dst {
				continue
			}
			wide := Tensor{DType: src, Shape: []int{5, 41}, Gen: Gen{Kind: Normal, Scale: 30}}
			add(mk(pn("Copy/convert", src, dst), []Tensor{wide}, Tensor{DType: dst, Shape: []int{5, 41}}, exact,
				func(k compute.Kernels, d *compute.Tensor, in []*compute.Tensor) { k.Copy(d, in[0]) }))
		}
	}
	for _, dst := range []compute.DType{compute.BF16, compute.F16, compute.F64} {
		sp := Tensor{DType: compute.F32, Shape: []int{2, 31}, Gen: Gen{Kind: Specials}}
		add(mk("Copy/convert/f32_"+tn(dst)+"/specials", []Tensor{sp}, Tensor{DType: dst, Shape: []int{62}}, exact,
			func(k compute.Kernels, d *compute.Tensor, in []*compute.Tensor) { k.Copy(d, in[0]) }))
	}
	for _, src := range []compute.DType{compute.BF16, compute.F16} {
		sp := Tensor{DType: src, Shape: []int{31}, Gen: Gen{Kind: Specials}}
		add(mk("Copy/convert/"+tn(src)+"_f32/specials", []Tensor{sp}, Tensor{DType: compute.F32, Shape: []int{31}}, exact,
			func(k compute.Kernels, d *compute.Tensor, in []*compute.Tensor) { k.Copy(d, in[0]) }))
	}
	add(mk("Scale/specials/f32_bf16", []Tensor{{DType: compute.F32, Shape: []int{31}, Gen: Gen{Kind: Specials}}}, Tensor{DType: compute.BF16, Shape: []int{31}}, exact,
		func(k compute.Kernels, d *compute.Tensor, in []*compute.Tensor) { k.Scale(d, in[0], 1, 0) }))
	tiny := Tensor{DType: compute.F32, Shape: []int{64}, Gen: Gen{Kind: Normal, Scale: 3e-6}} // f16 subnormals
	add(mk("Copy/convert/f32_f16/subnormal", []Tensor{tiny}, Tensor{DType: compute.F16, Shape: []int{64}}, exact,
		func(k compute.Kernels, d *compute.Tensor, in []*compute.Tensor) { k.Copy(d, in[0]) }))
	huge := Tensor{DType: compute.F32, Shape: []int{64}, Gen: Gen{Kind: Normal, Scale: 1e5}} // f16 overflow
	add(mk("Copy/convert/f32_f16/overflow", []Tensor{huge}, Tensor{DType: compute.F16, Shape: []int{64}}, exact,
		func(k compute.Kernels, d *compute.Tensor, in []*compute.Tensor) { k.Copy(d, in[0]) }))
	for _, p := range []struct {
		src Tensor
		dst compute.DType
	}{
		{ints(compute.I64, -1e6, 1e6, 4, 9), compute.F32},
		{ints(compute.I32, -1000, 1000, 4, 9), compute.F32},
		{ints(compute.U8, 0, 255, 4, 9), compute.BF16},
		{ints(compute.I8, -128, 127, 4, 9), compute.F16},
		{ints(compute.Bool, 0, 1, 4, 9), compute.F32},
		{uni(compute.F32, -100, 100, 4, 9), compute.I32},
		{uni(compute.F32, -1e5, 1e5, 4, 9), compute.I64},
		{uni(compute.BF16, -100, 100, 4, 9), compute.I8},
		{uni(compute.F32, 0, 255, 4, 9), compute.U8},
		{nrmS(compute.F64, 1e3, 4, 9), compute.F32},
		{nrmS(compute.F64, 1e-39, 4, 9), compute.F32}, // float32 subnormals
		{nrmS(compute.F32, 1e3, 4, 9), compute.F64},
		{nrmS(compute.F32, 1e-41, 4, 9), compute.F64}, // from float32 subnormals
		{nrmS(compute.F64, 2, 4, 9), compute.BF16},
		{ints(compute.I32, -1000, 1000, 4, 9), compute.I64},
		{ints(compute.I64, -1000, 1000, 4, 9), compute.I32},
		{nrmS(compute.F16, 100, 4, 9), compute.F64},
		{ints(compute.F64, -1e6, 1e6, 4, 9), compute.I64},
	} {
		name := fmt.Sprintf("Copy/any/%v_%v", p.src.DType, p.dst)
		if p.src.Gen.Scale < 1e-30 && p.src.Gen.Scale > 0 {
			name += "/subnormal"
		}
		add(mk(name, []Tensor{p.src}, Tensor{DType: p.dst, Shape: []int{36}}, exact,
			func(k compute.Kernels, d *compute.Tensor, in []*compute.Tensor) { k.Copy(d, in[0]) }))
	}
	for _, p := range []struct {
		dt compute.DType
		v  float32
	}{{compute.F32, 1.7}, {compute.BF16, -2.3}, {compute.F16, 0.1}, {compute.U8, 7}, {compute.I64, -5}, {compute.F64, 3.25}, {compute.I32, 9}, {compute.Bool, 1}} {
		v := p.v
		add(mk("Fill/"+p.dt.String(), nil, Tensor{DType: p.dt, Shape: []int{3, 29}}, exact,
			func(k compute.Kernels, d *compute.Tensor, _ []*compute.Tensor) { k.Fill(d, v) }))
	}

	// ---------------------------------------------------------------- Transpose, GatherRows, ScatterRows
	for _, p := range []struct {
		in   Tensor
		perm []int
	}{
		{nrm(compute.F32, 3, 5, 7), []int{2, 0, 1}},
		{nrm(compute.BF16, 2, 3, 4, 5), []int{0, 2, 1, 3}},
		{ints(compute.U8, 0, 255, 7, 9), []int{1, 0}},
		{ints(compute.I64, -9, 9, 4, 6, 2), []int{1, 0, 2}},
		{nrm(compute.F16, 1, 6, 1, 5), []int{3, 2, 1, 0}},
		{nrm(compute.F32, 2, 2, 2, 2, 2, 2, 3), []int{6, 5, 4, 3, 2, 1, 0}}, // 7 axes: no kernel, CPU fallback
	} {
		perm := p.perm
		out := make([]int, len(perm))
		for i, a := range perm {
			out[i] = p.in.Shape[a]
		}
		add(mk(fmt.Sprintf("Transpose/%v_%s/%s", p.in.DType, dims(p.in.Shape), dims(perm)), []Tensor{p.in}, Tensor{DType: p.in.DType, Shape: out}, exact,
			func(k compute.Kernels, d *compute.Tensor, in []*compute.Tensor) { k.Transpose(d, in[0], perm...) }))
	}
	Z, R, P := compute.PadZeros, compute.PadReflect, compute.PadReplicate
	for _, p := range []struct {
		x Tensor
		p compute.PadParams
	}{
		{nrm(compute.F32, 3, 4, 5), compute.PadParams{Before: []int{1, 2, 0}, After: []int{0, 1, 3}, Modes: []compute.PadMode{Z, R, P}}},
		{nrm(compute.BF16, 2, 6, 7), compute.PadParams{Before: []int{0, 3, 2}, After: []int{0, 2, 5}, Modes: []compute.PadMode{Z, R, R}}},
		{ints(compute.U8, 0, 255, 5, 9), compute.PadParams{Before: []int{2, 1}, After: []int{1, 2}, Modes: []compute.PadMode{P, Z}}},
		{nrm(compute.F64, 4, 3), compute.PadParams{Before: []int{1, 2}, After: []int{2, 2}, Modes: []compute.PadMode{R, P}}},
		{nrm(compute.F16, 2, 3, 4, 5), compute.PadParams{Before: []int{2, 0, 0, 1}}},                                                      // causal time padding, merged axes
		{nrm(compute.F32, 2, 2, 2, 2, 2, 2, 3), compute.PadParams{Before: []int{1, 0, 1, 0, 1, 0, 1}, After: []int{0, 1, 0, 1, 0, 1, 0}}}, // 7 padded axes: CPU fallback
	} {
		pp := p.p
		out := make([]int, len(p.x.Shape))
		for a, d := range p.x.Shape {
			out[a] = pp.BeforeAt(a) + d + pp.AfterAt(a)
		}
		add(mk(fmt.Sprintf("Pad/%v_%s/%s", p.x.DType, dims(p.x.Shape), dims(out)), []Tensor{p.x}, Tensor{DType: p.x.DType, Shape: out}, exact,
			func(k compute.Kernels, d *compute.Tensor, in []*compute.Tensor) { k.Pad(d, in[0], pp) }))
	}
	for _, p := range []struct {
		src Tensor
		idx Tensor
	}{
		{nrm(compute.F32, 10, 7), index(compute.I32, 10, 6)},
		{nrm(compute.BF16, 9, 5), index(compute.I64, 9, 4)},
		{ints(compute.U8, 0, 255, 8, 3), index(compute.I32, 8, 5)},
		{nrm(compute.F64, 6, 3), index(compute.I64, 6, 7)},
		{nrm(compute.F32, 5, 4), index(compute.U8, 5, 3)},
	} {
		out := append([]int{p.idx.Shape[0]}, p.src.Shape[1:]...)
		add(mk(fmt.Sprintf("GatherRows/%v_%s/%v", p.src.DType, dims(p.src.Shape), p.idx.DType), []Tensor{p.src, p.idx}, Tensor{DType: p.src.DType, Shape: out}, exact,
			func(k compute.Kernels, d *compute.Tensor, in []*compute.Tensor) { k.GatherRows(d, in[0], in[1]) }))
	}
	for _, p := range []struct {
		dst Tensor
		n   int
		idt compute.DType
	}{
		{nrm(compute.F32, 10, 7), 6, compute.I32},
		{nrm(compute.BF16, 9, 5), 4, compute.I64},
		{ints(compute.U8, 0, 255, 8, 3), 5, compute.I32},
		{ints(compute.I64, -50, 50, 6, 2), 3, compute.I64},
	} {
		src := p.dst
		src.Shape = append([]int{p.n}, p.dst.Shape[1:]...)
		c := mk(fmt.Sprintf("ScatterRows/%v_%s/%v", p.dst.DType, dims(p.dst.Shape), p.idt), []Tensor{src, perm(p.idt, p.dst.Shape[0], p.n)}, p.dst, exact,
			func(k compute.Kernels, d *compute.Tensor, in []*compute.Tensor) { k.ScatterRows(d, in[0], in[1]) })
		c.Keep = true
		add(c)
	}

	// ---------------------------------------------------------------- MatMul
	mm := func(k compute.Kernels, d *compute.Tensor, in []*compute.Tensor) {
		var bias *compute.Tensor
		if len(in) > 2 {
			bias = in[2]
		}
		k.MatMul(d, in[0], in[1], bias)
	}
	mmCase := func(name string, in []Tensor, out Tensor) Case {
		c := mk(name, in, out, sumBound(in[1].Shape[1]), mm)
		c.Mag = mm
		return c
	}
	pairs(func(in, out compute.DType) {
		add(mmCase(pn("MatMul", in, out), []Tensor{nrm(in, 37, 70), nrmS(in, 0.2, 45, 70), nrm(compute.F32, 45)}, nrm(out, 37, 45)))
	})
	for _, w := range []compute.DType{compute.BF16, compute.F16} {
		for _, out := range floats {
			add(mmCase(fmt.Sprintf("MatMul/f32_%s_w%s", tn(out), tn(w)), []Tensor{nrm(compute.F32, 21, 33), nrmS(w, 0.2, 19, 33)}, nrm(out, 21, 19)))
		}
	}
	add(mmCase("MatMul/leading_axes/bias_bf16", []Tensor{nrm(compute.F32, 2, 3, 17), nrm(compute.F32, 19, 17), nrm(compute.BF16, 19)}, nrm(compute.F32, 2, 3, 19)),
		mmCase("MatMul/k1", []Tensor{nrm(compute.F32, 5, 1), nrm(compute.F32, 7, 1)}, nrm(compute.F32, 5, 7)),
		mmCase("MatMul/m1", []Tensor{nrm(compute.BF16, 1, 40), nrm(compute.BF16, 9, 40)}, nrm(compute.BF16, 1, 9)),
		mmCase("MatMul/n1", []Tensor{nrm(compute.F32, 33, 40), nrm(compute.F32, 1, 40), nrm(compute.F32, 1)}, nrm(compute.F32, 33, 1)),
		mmCase("MatMul/x_i32", []Tensor{ints(compute.I32, -5, 5, 4, 6), nrm(compute.F32, 3, 6)}, nrm(compute.F32, 4, 3)),
		mmCase("MatMul/x_bf16_w_f32", []Tensor{nrm(compute.BF16, 6, 10), nrm(compute.F32, 5, 10)}, nrm(compute.BF16, 6, 5)),
		mmCase("MatMul/x_f16_w_bf16", []Tensor{nrm(compute.F16, 6, 10), nrm(compute.BF16, 5, 10)}, nrm(compute.F32, 6, 5)),
		mmCase("MatMul/tiles", []Tensor{nrm(compute.BF16, 70, 130), nrmS(compute.BF16, 0.1, 96, 130), nrm(compute.BF16, 96)}, nrm(compute.BF16, 70, 96)),
		inPlace(mmCase("MatMul/square", []Tensor{nrm(compute.F32, 8, 8), nrm(compute.F32, 8, 8)}, nrm(compute.F32, 8, 8)), 0),
	)
	if o.Large {
		add(mmCase("MatMul/large/bf16", []Tensor{nrm(compute.BF16, 1024, 2048), nrmS(compute.BF16, 0.03, 1536, 2048), nrm(compute.BF16, 1536)}, nrm(compute.BF16, 1024, 1536)),
			mmCase("MatMul/large/f32", []Tensor{nrm(compute.F32, 512, 1024), nrmS(compute.F32, 0.03, 768, 1024)}, nrm(compute.F32, 512, 768)))
	}

	// ---------------------------------------------------------------- Conv, ConvTranspose
	type convSpec struct {
		name string
		x, w []int
		bias bool
		p    compute.ConvParams
	}
	convOut := func(s convSpec, transpose bool) []int {
		out := []int{s.w[0]}
		if transpose {
			out[0] = s.w[1] * s.p.GroupCount()
		}
		for a := 0; a < len(s.x)-1; a++ {
			if transpose {
				out = append(out, compute.ConvTransposeOutSize(s.x[a+1], s.w[a+2], s.p.StrideAt(a), s.p.DilationAt(a), s.p.PadBeforeAt(a), s.p.PadAfterAt(a)))
			} else {
				out = append(out, compute.ConvOutSize(s.x[a+1], s.w[a+2], s.p.StrideAt(a), s.p.DilationAt(a), s.p.PadBeforeAt(a), s.p.PadAfterAt(a)))
			}
		}
		return out
	}
	convCase := func(op string, s convSpec, in, out compute.DType, transpose bool) Case {
		run := func(k compute.Kernels, d *compute.Tensor, t []*compute.Tensor) {
			var bias *compute.Tensor
			if len(t) > 2 {
				bias = t[2]
			}
			if transpose {
				k.ConvTranspose(d, t[0], t[1], bias, s.p)
			} else {
				k.Conv(d, t[0], t[1], bias, s.p)
			}
		}
		ops := []Tensor{nrm(in, s.x...), nrmS(in, 0.3, s.w...)}
		o := convOut(s, transpose)
		if s.bias {
			ops = append(ops, nrm(compute.F32, o[0]))
		}
		kk := 1
		for _, d := range s.w[1:] {
			kk *= d
		}
		if transpose {
			kk = s.x[0] / s.p.GroupCount()
			for _, d := range s.w[2:] {
				kk *= d
			}
		}
		c := mk(fmt.Sprintf("%s/%s/%s_%s", op, s.name, tn(in), tn(out)), ops, nrm(out, o...), sumBound(kk), run)
		c.Mag = run
		return c
	}
	conv1 := convSpec{"1d", []int{5, 23}, []int{6, 5, 3}, true, compute.ConvParams{Stride: []int{2}, PadBefore: []int{1}, PadAfter: []int{1}}}
	pairs(func(in, out compute.DType) { add(convCase("Conv", conv1, in, out, false)) })
	for _, s := range []convSpec{
		{"2d_groups_reflect", []int{4, 9, 11}, []int{6, 2, 3, 3}, true, compute.ConvParams{Stride: []int{2, 1}, Dilation: []int{1, 2}, PadBefore: []int{1, 1}, PadAfter: []int{1, 2}, PadMode: compute.PadReflect, Groups: 2}},
		{"3d_causal_replicate", []int{3, 5, 6, 7}, []int{4, 3, 3, 3, 3}, false, compute.ConvParams{PadBefore: []int{2, 1, 1}, PadAfter: []int{0, 1, 1}, PadMode: compute.PadReplicate}},
		{"1d_depthwise", []int{4, 15}, []int{4, 1, 5}, true, compute.ConvParams{PadBefore: []int{2}, PadAfter: []int{2}, Groups: 4}},
		{"2d_tiles", []int{16, 12, 13}, []int{24, 16, 3, 3}, true, compute.ConvParams{PadBefore: []int{1, 1}, PadAfter: []int{1, 1}}},
	} {
		add(convCase("Conv", s, compute.F32, compute.F32, false), convCase("Conv", s, compute.BF16, compute.BF16, false))
	}
	convT1 := convSpec{"1d", []int{6, 9}, []int{6, 2, 4}, true, compute.ConvParams{Stride: []int{2}, PadBefore: []int{1}, PadAfter: []int{1}}}
	pairs(func(in, out compute.DType) { add(convCase("ConvTranspose", convT1, in, out, true)) })
	for _, s := range []convSpec{
		{"1d_groups", []int{4, 7}, []int{4, 3, 3}, true, compute.ConvParams{Stride: []int{3}, PadAfter: []int{1}, Groups: 2}},
		{"2d", []int{3, 4, 5}, []int{3, 2, 3, 3}, false, compute.ConvParams{Stride: []int{2, 2}, PadBefore: []int{1, 1}, PadAfter: []int{1, 1}}},
		{"3d_dilated", []int{2, 3, 3, 4}, []int{2, 2, 2, 2, 2}, true, compute.ConvParams{Stride: []int{2, 1, 2}, Dilation: []int{1, 2, 1}}},
	} {
		add(convCase("ConvTranspose", s, compute.F32, compute.F32, true), convCase("ConvTranspose", s, compute.BF16, compute.F32, true))
	}

	// ---------------------------------------------------------------- Attention
	type attSpec struct {
		hq, hkv, sq, sk, d int
		causal, round      bool
	}
	attCase := func(name string, s attSpec, in, out compute.DType) Case {
		p := compute.AttentionParams{Scale: float32(1 / math.Sqrt(float64(s.d))), Causal: s.causal, RoundProbs: s.round}
		run := func(k compute.Kernels, d *compute.Tensor, t []*compute.Tensor) { k.Attention(d, t[0], t[1], t[2], p) }
		// Errors: scores carry d-term sums (relative 2·d·2⁻²⁴ of Σ|q·k|·scale,
		// which exp turns into a relative error of the weights); bounded
		// generously by 64·d·2⁻²⁴ of Σ p·|v|. Rounded probabilities differ
		// by up to one unit of the output type, relative.
		b := Bound{ULP: 2, Rel: 64 * float64(s.d) * math.Ldexp(1, -24)}
		if s.round {
			b.Rel += 2 * ulp(out, 1)
		}
		c := mk(fmt.Sprintf("Attention/%s/%s_%s", name, tn(in), tn(out)),
			[]Tensor{nrm(in, s.hq, s.sq, s.d), nrm(in, s.hkv, s.sk, s.d), nrm(in, s.hkv, s.sk, s.d)}, nrm(out, s.hq, s.sq, s.d), b, run)
		c.Mag = func(k compute.Kernels, d *compute.Tensor, t []*compute.Tensor) { k.Attention(d, t[0], t[1], t[2], p) }
		c.MagAbs = []bool{false, false, true}
		return c
	}
	pairs(func(in, out compute.DType) {
		add(attCase("d64", attSpec{4, 2, 37, 45, 40, false, false}, in, out),
			attCase("d128", attSpec{2, 1, 33, 40, 96, false, false}, in, out),
			attCase("d256", attSpec{2, 2, 9, 20, 200, false, false}, in, out))
	})
	add(attCase("d64_causal", attSpec{2, 2, 37, 37, 64, true, false}, compute.F32, compute.F32),
		attCase("d64_causal_prefix", attSpec{3, 1, 20, 45, 32, true, false}, compute.BF16, compute.BF16),
		attCase("d128_causal", attSpec{2, 1, 40, 70, 128, true, false}, compute.F16, compute.F16),
		attCase("d64_gqa", attSpec{6, 3, 11, 70, 64, false, false}, compute.F32, compute.F32),
		attCase("d64_round_probs", attSpec{2, 1, 20, 50, 48, false, true}, compute.BF16, compute.BF16),
		attCase("d128_round_probs", attSpec{2, 2, 20, 50, 128, false, true}, compute.F16, compute.F16),
		attCase("d300_fallback", attSpec{1, 1, 5, 6, 300, false, false}, compute.F32, compute.F32),
	)

	// ---------------------------------------------------------------- RMSNorm, LayerNorm, GroupNorm
	rms := func(eps float32, w bool) func(k compute.Kernels, d *compute.Tensor, t []*compute.Tensor) {
		return func(k compute.Kernels, d *compute.Tensor, t []*compute.Tensor) {
			var wt *compute.Tensor
			if w {
				wt = t[1]
			}
			k.RMSNorm(d, t[0], wt, eps)
		}
	}
	normBound := Bound{ULP: 1, Rel: 1e-5, RMS: 1e-5}
	pairs(func(in, out compute.DType) {
		add(mk(pn("RMSNorm", in, out), []Tensor{nrmS(in, 2, 5, 77), nrm(compute.BF16, 77)}, nrm(out, 5, 77), normBound, rms(1e-6, true)))
	})
	add(mk("RMSNorm/no_weight/f32_f32", []Tensor{nrm(compute.F32, 3, 300)}, nrm(compute.F32, 3, 300), normBound, rms(1e-5, false)),
		mk("RMSNorm/d1/f32_f32", []Tensor{nrm(compute.F32, 4, 1), nrm(compute.F32, 1)}, nrm(compute.F32, 4, 1), normBound, rms(1e-6, true)),
		inPlace(mk("RMSNorm/f32_f32", []Tensor{nrm(compute.F32, 6, 64), nrm(compute.F32, 64)}, Tensor{}, normBound, rms(1e-6, true)), 0))
	ln := func(eps float32, wb bool) func(k compute.Kernels, d *compute.Tensor, t []*compute.Tensor) {
		return func(k compute.Kernels, d *compute.Tensor, t []*compute.Tensor) {
			if wb {
				k.LayerNorm(d, t[0], t[1], t[2], eps)
			} else {
				k.LayerNorm(d, t[0], nil, nil, eps)
			}
		}
	}
	pairs(func(in, out compute.DType) {
		add(mk(pn("LayerNorm", in, out), []Tensor{uni(in, -1, 3, 3, 300), nrm(compute.F32, 300), nrm(compute.BF16, 300)}, nrm(out, 3, 300), normBound, ln(1e-5, true)))
	})
	add(mk("LayerNorm/no_affine/f32_f32", []Tensor{nrm(compute.F32, 7, 33)}, nrm(compute.F32, 7, 33), normBound, ln(1e-6, false)),
		inPlace(mk("LayerNorm/bf16_bf16", []Tensor{nrm(compute.BF16, 4, 50), nrm(compute.BF16, 50), nrm(compute.BF16, 50)}, Tensor{}, normBound, ln(1e-6, true)), 0))
	gn := func(groups int, wb bool) func(k compute.Kernels, d *compute.Tensor, t []*compute.Tensor) {
		return func(k compute.Kernels, d *compute.Tensor, t []*compute.Tensor) {
			if wb {
				k.GroupNorm(d, t[0], t[1], t[2], groups, 1e-6)
			} else {
				k.GroupNorm(d, t[0], nil, nil, groups, 1e-5)
			}
		}
	}
	pairs(func(in, out compute.DType) {
		add(mk(pn("GroupNorm", in, out), []Tensor{uni(in, -2, 4, 8, 7, 9), nrm(compute.F32, 8), nrm(compute.BF16, 8)}, nrm(out, 8, 7, 9), normBound, gn(4, true)))
	})
	add(mk("GroupNorm/large_group/f32_f32", []Tensor{nrm(compute.F32, 6, 500)}, nrm(compute.F32, 6, 500), normBound, gn(3, false)),
		inPlace(mk("GroupNorm/f32_f32", []Tensor{nrm(compute.F32, 4, 33), nrm(compute.F32, 4), nrm(compute.F32, 4)}, Tensor{}, normBound, gn(2, true)), 0))

	// ---------------------------------------------------------------- elementwise
	addOp := func(k compute.Kernels, d *compute.Tensor, t []*compute.Tensor) { k.Add(d, t[0], t[1]) }
	mulOp := func(k compute.Kernels, d *compute.Tensor, t []*compute.Tensor) { k.Mul(d, t[0], t[1]) }
	pairs(func(in, out compute.DType) {
		add(mk(pn("Add", in, out), []Tensor{nrm(in, 5, 7), nrm(compute.BF16, 7)}, nrm(out, 5, 7), exact, addOp),
			mk(pn("Mul", in, out), []Tensor{nrm(in, 5, 7), nrm(compute.F32, 5, 7)}, nrm(out, 5, 7), exact, mulOp),
			mk(pn("Scale", in, out), []Tensor{nrm(in, 4, 19)}, nrm(out, 4, 19), exact,
				func(k compute.Kernels, d *compute.Tensor, t []*compute.Tensor) { k.Scale(d, t[0], 1.5, -0.25) }),
			mk(pn("Clamp", in, out), []Tensor{nrm(in, 4, 19)}, nrm(out, 4, 19), exact,
				func(k compute.Kernels, d *compute.Tensor, t []*compute.Tensor) { k.Clamp(d, t[0], -0.5, 0.7) }),
			mk(pn("Unary/silu", in, out), []Tensor{nrmS(in, 3, 3, 33)}, nrm(out, 3, 33), transcendental,
				func(k compute.Kernels, d *compute.Tensor, t []*compute.Tensor) { k.Unary(d, t[0], compute.SiLU) }),
			mk(pn("GLU/silu_gate_first", in, out), []Tensor{nrmS(in, 2, 3, 34)}, nrm(out, 3, 17), Bound{ULP: 2, Rel: 2e-6, Abs: 2e-7},
				func(k compute.Kernels, d *compute.Tensor, t []*compute.Tensor) { k.GLU(d, t[0], compute.SiLU, true) }),
		)
	})
	add(mk("Add/same_shape/f32_f32", []Tensor{nrm(compute.F32, 4, 6), nrm(compute.F32, 4, 6)}, nrm(compute.F32, 4, 6), exact, addOp),
		mk("Add/b_i32/f32_f32", []Tensor{nrm(compute.F32, 3, 5), ints(compute.I32, -9, 9, 5)}, nrm(compute.F32, 3, 5), exact, addOp),
		mk("Add/a_i64/f32", []Tensor{ints(compute.I64, -9, 9, 3, 5), nrm(compute.F32, 5)}, nrm(compute.F32, 3, 5), exact, addOp),
		mk("Add/out_i32", []Tensor{nrmS(compute.F32, 20, 3, 5), nrmS(compute.F32, 20, 5)}, nrm(compute.I32, 3, 5), exact, addOp),
		inPlace(mk("Add/bf16_bf16", []Tensor{nrm(compute.BF16, 6, 9), nrm(compute.BF16, 9)}, Tensor{}, exact, addOp), 0),
		inPlace(mk("Mul/f32_f32", []Tensor{nrm(compute.F32, 6, 9), nrm(compute.F32, 6, 9)}, Tensor{}, exact, mulOp), 1),
	)
	for op := compute.Identity; op <= compute.Abs; op++ {
		in, b := nrmS(compute.F32, 2, 4, 50), transcendental
		switch op {
		case compute.Identity, compute.Neg, compute.Square, compute.Abs:
			b = exact
		case compute.Sqrt:
			in, b = uni(compute.F32, 0.01, 9, 4, 50), exact
		case compute.Rsqrt:
			in, b = uni(compute.F32, 0.01, 9, 4, 50), Bound{Rel: 2.5e-7}
		}
		op := op
		add(mk(fmt.Sprintf("Unary/%v/f32_f32", op), []Tensor{in}, nrm(compute.F32, 4, 50), b,
			func(k compute.Kernels, d *compute.Tensor, t []*compute.Tensor) { k.Unary(d, t[0], op) }))
	}
	add(inPlace(mk("Unary/gelu/bf16_bf16", []Tensor{nrm(compute.BF16, 5, 9)}, Tensor{}, transcendental,
		func(k compute.Kernels, d *compute.Tensor, t []*compute.Tensor) { k.Unary(d, t[0], compute.GELU) }), 0),
		// Far in the left tail the reference itself (float64 1+erf(x/√2))
		// cancels to about 1e-16 absolute; kernels do better through erfc.
		mk("Unary/gelu/tails/f32_f32", []Tensor{nrmS(compute.F32, 6, 4, 64)}, nrm(compute.F32, 4, 64), Bound{ULP: 1, Rel: 4e-6, Abs: 2e-15},
			func(k compute.Kernels, d *compute.Tensor, t []*compute.Tensor) { k.Unary(d, t[0], compute.GELU) }),
		mk("GLU/gelu_gate_last/f32_f32", []Tensor{nrm(compute.F32, 4, 26)}, nrm(compute.F32, 4, 13), transcendental,
			func(k compute.Kernels, d *compute.Tensor, t []*compute.Tensor) { k.GLU(d, t[0], compute.GELU, false) }),
		mk("GLU/gelu_tanh/bf16_bf16", []Tensor{nrm(compute.BF16, 4, 26)}, nrm(compute.BF16, 4, 13), Bound{ULP: 2, Rel: 2e-6, Abs: 2e-7},
			func(k compute.Kernels, d *compute.Tensor, t []*compute.Tensor) {
				k.GLU(d, t[0], compute.GELUTanh, true)
			}),
	)

	// ---------------------------------------------------------------- Modulate, GatedAdd, RoPE, Snake
	pairs(func(in, out compute.DType) {
		add(mk(pn("Modulate", in, out), []Tensor{nrm(in, 6, 10), nrmS(compute.BF16, 0.5, 3, 40), index(compute.I64, 3, 6)}, nrm(out, 6, 10), exact,
			func(k compute.Kernels, d *compute.Tensor, t []*compute.Tensor) {
				k.Modulate(d, t[0], t[1], t[2], 5, 20)
			}),
			mk(pn("GatedAdd", in, out), []Tensor{nrm(in, 6, 10), nrm(in, 6, 10), nrmS(compute.F32, 0.5, 3, 40), index(compute.I32, 3, 6)}, nrm(out, 6, 10), exact,
				func(k compute.Kernels, d *compute.Tensor, t []*compute.Tensor) {
					k.GatedAdd(d, t[0], t[1], t[2], t[3], 12)
				}),
			mk(pn("RoPE", in, out), []Tensor{nrm(in, 2, 5, 12), uni(compute.F32, -1, 1, 5, 4), uni(compute.F32, -1, 1, 5, 4)}, nrm(out, 2, 5, 12), exact,
				func(k compute.Kernels, d *compute.Tensor, t []*compute.Tensor) { k.RoPE(d, t[0], t[1], t[2], 8) }),
			mk(pn("Snake", in, out), []Tensor{nrmS(in, 2, 4, 33), uni(compute.F32, 0.2, 2, 4), uni(compute.BF16, 0.2, 2, 4)}, nrm(out, 4, 33),
				Bound{ULP: 1, Rel: 4e-6, RMS: 1e-6},
				func(k compute.Kernels, d *compute.Tensor, t []*compute.Tensor) { k.Snake(d, t[0], t[1], t[2], false) }),
		)
	})
	add(mk("Modulate/table_f32_idx_i32/bf16_bf16", []Tensor{nrm(compute.BF16, 4, 8), nrmS(compute.F32, 0.5, 2, 24), index(compute.I32, 2, 4)}, nrm(compute.BF16, 4, 8), exact,
		func(k compute.Kernels, d *compute.Tensor, t []*compute.Tensor) {
			k.Modulate(d, t[0], t[1], t[2], 16, 0)
		}),
		inPlace(mk("GatedAdd/bf16_bf16", []Tensor{nrm(compute.BF16, 6, 10), nrm(compute.F32, 6, 10), nrmS(compute.BF16, 0.5, 3, 40), index(compute.I64, 3, 6)}, Tensor{}, exact,
			func(k compute.Kernels, d *compute.Tensor, t []*compute.Tensor) {
				k.GatedAdd(d, t[0], t[1], t[2], t[3], 30)
			}), 0),
		mk("RoPE/mixed_tables_bf16_cos_f32_sin/f32_f32", []Tensor{nrm(compute.F32, 2, 5, 12), uni(compute.BF16, -1, 1, 5, 4), uni(compute.F32, -1, 1, 5, 4)}, nrm(compute.F32, 2, 5, 12), exact,
			func(k compute.Kernels, d *compute.Tensor, t []*compute.Tensor) { k.RoPE(d, t[0], t[1], t[2], 8) }),
		mk("RoPE/full_rotation_bf16_tables/bf16_bf16", []Tensor{nrm(compute.BF16, 3, 4, 6, 16), uni(compute.BF16, -1, 1, 6, 8), uni(compute.BF16, -1, 1, 6, 8)}, nrm(compute.BF16, 3, 4, 6, 16), exact,
			func(k compute.Kernels, d *compute.Tensor, t []*compute.Tensor) { k.RoPE(d, t[0], t[1], t[2], 16) }),
		inPlace(mk("RoPE/f32_f32", []Tensor{nrm(compute.F32, 2, 7, 10), uni(compute.F32, -1, 1, 7, 3), uni(compute.F32, -1, 1, 7, 3)}, Tensor{}, exact,
			func(k compute.Kernels, d *compute.Tensor, t []*compute.Tensor) { k.RoPE(d, t[0], t[1], t[2], 6) }), 0),
		mk("Snake/log_scale/f32_f32", []Tensor{nrmS(compute.F32, 2, 3, 40), nrmS(compute.F32, 0.5, 3)}, nrm(compute.F32, 3, 40), Bound{ULP: 1, Rel: 4e-6, RMS: 1e-6},
			func(k compute.Kernels, d *compute.Tensor, t []*compute.Tensor) { k.Snake(d, t[0], t[1], nil, true) }),
		mk("Snake/beta_log_scale/bf16_f32", []Tensor{nrmS(compute.BF16, 2, 3, 40), nrmS(compute.F32, 0.5, 3), nrmS(compute.F32, 0.5, 3)}, nrm(compute.F32, 3, 40), Bound{ULP: 1, Rel: 4e-6, RMS: 1e-6},
			func(k compute.Kernels, d *compute.Tensor, t []*compute.Tensor) { k.Snake(d, t[0], t[1], t[2], true) }),
	)
	fusedCases(add) // cases_fused.go
	add(quantCases()...)
	return cs
}
