package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"h3studio/engine/compute"
	"h3studio/engine/testkit"
)

func randT(t testing.TB, b *Backend, rng *rand.Rand, dt compute.DType, shape ...int) (*compute.Tensor, []float64) {
	t.Helper()
	n := compute.Shape(shape).NumElements()
	v := make([]float32, n)
	for i := range v {
		v[i] = compute.Round(dt, float32(rng.NormFloat64()))
	}
	x, err := compute.FromFloat32(b, dt, shape, v)
	if err != nil {
		t.Fatal(err)
	}
	f := make([]float64, n)
	for i := range v {
		f[i] = float64(v[i])
	}
	return x, f
}

func get(t *testing.T, x *compute.Tensor) []float64 {
	t.Helper()
	v, err := compute.ToFloat32(x)
	if err != nil {
		t.Fatal(err)
	}
	f := make([]float64, len(v))
	for i := range v {
		f[i] = float64(v[i])
	}
	return f
}

func expectClose(t *testing.T, name string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", name, len(got), len(want))
	}
	if e := testkit.RelL2(got, want); !(e < tol) {
		t.Errorf("%s: rel-L2 %.3g ≥ %.3g", name, e, tol)
	}
}

func TestMatMulAgainstFloat64(t *testing.T) {
	for _, threads := range []int{1, 3} {
		b := New(Options{Threads: threads})
		rng := rand.New(rand.NewPCG(1, 2))
		for _, wdt := range []compute.DType{compute.F32, compute.BF16} {
			x, xf := randT(t, b, rng, compute.F32, 2, 5, 37)
			w, wf := randT(t, b, rng, wdt, 70, 37)
			bias, bf := randT(t, b, rng, compute.F32, 70)
			dst := compute.MustAlloc(b, compute.F32, 10, 70)
			b.MatMul(dst, x, w, bias)
			want := make([]float64, 10*70)
			for m := 0; m < 10; m++ {
				for n := 0; n < 70; n++ {
					s := bf[n]
					for k := 0; k < 37; k++ {
						s += xf[m*37+k] * wf[n*37+k]
					}
					want[m*70+n] = s
				}
			}
			expectClose(t, "matmul "+wdt.String(), get(t, dst), want, 1e-6)
		}
	}
}

func TestMatMulDeterministicAcrossThreads(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	b1 := New(Options{Threads: 1})
	x, _ := randT(t, b1, rng, compute.F32, 33, 129)
	w, _ := randT(t, b1, rng, compute.BF16, 65, 129)
	d1 := compute.MustAlloc(b1, compute.BF16, 33, 65)
	b1.MatMul(d1, x, w, nil)
	b4 := New(Options{Threads: 4})
	d4 := compute.MustAlloc(b4, compute.BF16, 33, 65)
	b4.MatMul(d4, x, w, nil)
	if string(Bytes(d1)) != string(Bytes(d4)) {
		t.Fatal("MatMul differs between 1 and 4 threads")
	}
}

func TestAttentionAgainstFloat64(t *testing.T) {
	b := New(Options{})
	rng := rand.New(rand.NewPCG(5, 6))
	for _, causal := range []bool{false, true} {
		Hq, Hkv, Sq, Sk, D := 4, 2, 5, 7, 8
		q, qf := randT(t, b, rng, compute.F32, Hq, Sq, D)
		k, kf := randT(t, b, rng, compute.F32, Hkv, Sk, D)
		v, vf := randT(t, b, rng, compute.F32, Hkv, Sk, D)
		dst := compute.MustAlloc(b, compute.F32, Hq, Sq, D)
		scale := float32(1 / math.Sqrt(float64(D)))
		b.Attention(dst, q, k, v, compute.AttentionParams{Scale: scale, Causal: causal})
		want := make([]float64, Hq*Sq*D)
		for h := 0; h < Hq; h++ {
			kh := h / (Hq / Hkv)
			for i := 0; i < Sq; i++ {
				lim := Sk
				if causal {
					lim = i + Sk - Sq + 1
				}
				s := make([]float64, lim)
				mx := math.Inf(-1)
				for j := 0; j < lim; j++ {
					for d := 0; d < D; d++ {
						s[j] += qf[(h*Sq+i)*D+d] * kf[(kh*Sk+j)*D+d]
					}
					s[j] *= float64(scale)
					mx = math.Max(mx, s[j])
				}
				var sum float64
				for j := range s {
					s[j] = math.Exp(s[j] - mx)
					sum += s[j]
				}
				for d := 0; d < D; d++ {
					var a float64
					for j := range s {
						a += s[j] / sum * vf[(kh*Sk+j)*D+d]
					}
					want[(h*Sq+i)*D+d] = a
				}
			}
		}
		expectClose(t, "attention", get(t, dst), want, 1e-6)
	}
}

// naiveConv1D computes a grouped, strided, dilated 1-D convolution in float64.
func naiveConv(xf, wf, bf []float64, cin, cout, groups int, in, k []int, p compute.ConvParams, out []int) []float64 {
	n := len(in)
	prod := func(s []int) int {
		r := 1
		for _, v := range s {
			r *= v
		}
		return r
	}
	inP, kP, outP := prod(in), prod(k), prod(out)
	res := make([]float64, cout*outP)
	cinG, coutG := cin/groups, cout/groups
	for oc := 0; oc < cout; oc++ {
		g := oc / coutG
		for o := 0; o < outP; o++ {
			op := make([]int, n)
			unravel(op, o, out)
			s := 0.0
			if bf != nil {
				s = bf[oc]
			}
			for ci := 0; ci < cinG; ci++ {
				for kk := 0; kk < kP; kk++ {
					kp := make([]int, n)
					unravel(kp, kk, k)
					off, ok := 0, true
					for a := 0; a < n; a++ {
						i := op[a]*p.StrideAt(a) - p.PadBeforeAt(a) + kp[a]*p.DilationAt(a)
						ii, okk := padIndex(i, in[a], p.PadMode)
						if !okk {
							ok = false
						}
						off = off*in[a] + ii
					}
					if ok {
						s += xf[(g*cinG+ci)*inP+off] * wf[(oc*cinG+ci)*kP+kk]
					}
				}
			}
			res[oc*outP+o] = s
		}
	}
	return res
}

func TestConvAgainstFloat64(t *testing.T) {
	b := New(Options{})
	rng := rand.New(rand.NewPCG(7, 8))
	cases := []struct {
		in, k  []int
		cin    int
		cout   int
		groups int
		p      compute.ConvParams
	}{
		{[]int{19}, []int{5}, 4, 6, 2, compute.ConvParams{Stride: []int{2}, Dilation: []int{3}, PadBefore: []int{4}, PadAfter: []int{2}}},
		{[]int{9, 7}, []int{3, 3}, 3, 5, 1, compute.ConvParams{PadBefore: []int{1, 1}, PadAfter: []int{1, 1}, PadMode: compute.PadReflect}},
		{[]int{5, 6, 7}, []int{3, 3, 3}, 2, 4, 1, compute.ConvParams{Stride: []int{1, 2, 2}, PadBefore: []int{2, 1, 1}, PadAfter: []int{0, 1, 1}, PadMode: compute.PadReplicate}},
		{[]int{12}, []int{12}, 3, 3, 3, compute.ConvParams{Stride: []int{2}, PadBefore: []int{5}, PadAfter: []int{6}, PadMode: compute.PadReplicate}},
	}
	for ci, c := range cases {
		var out []int
		for a := range c.in {
			out = append(out, compute.ConvOutSize(c.in[a], c.k[a], c.p.StrideAt(a), c.p.DilationAt(a), c.p.PadBeforeAt(a), c.p.PadAfterAt(a)))
		}
		c.p.Groups = c.groups
		x, xf := randT(t, b, rng, compute.F32, append([]int{c.cin}, c.in...)...)
		w, wf := randT(t, b, rng, compute.F32, append([]int{c.cout, c.cin / c.groups}, c.k...)...)
		bias, bf := randT(t, b, rng, compute.F32, c.cout)
		dst := compute.MustAlloc(b, compute.F32, append([]int{c.cout}, out...)...)
		b.Conv(dst, x, w, bias, c.p)
		want := naiveConv(xf, wf, bf, c.cin, c.cout, c.groups, c.in, c.k, c.p, out)
		expectClose(t, "conv case "+string(rune('0'+ci)), get(t, dst), want, 1e-6)
	}
}

func TestConvTransposeAgainstScatter(t *testing.T) {
	b := New(Options{})
	rng := rand.New(rand.NewPCG(9, 10))
	cin, coutG, groups, L, K, stride, crop := 4, 3, 2, 11, 6, 3, 2
	x, xf := randT(t, b, rng, compute.F32, cin, L)
	w, wf := randT(t, b, rng, compute.F32, cin, coutG, K)
	full := (L-1)*stride + K
	out := full - 2*crop
	dst := compute.MustAlloc(b, compute.F32, coutG*groups, out)
	b.ConvTranspose(dst, x, w, nil, compute.ConvParams{Stride: []int{stride}, PadBefore: []int{crop}, PadAfter: []int{crop}, Groups: groups})
	want := make([]float64, coutG*groups*full)
	cinG := cin / groups
	for ci := 0; ci < cin; ci++ {
		g := ci / cinG
		for i := 0; i < L; i++ {
			for oc := 0; oc < coutG; oc++ {
				for k := 0; k < K; k++ {
					want[(g*coutG+oc)*full+i*stride+k] += xf[ci*L+i] * wf[(ci*coutG+oc)*K+k]
				}
			}
		}
	}
	cropped := make([]float64, 0, coutG*groups*out)
	for oc := 0; oc < coutG*groups; oc++ {
		cropped = append(cropped, want[oc*full+crop:oc*full+crop+out]...)
	}
	expectClose(t, "conv transpose", get(t, dst), cropped, 1e-6)
}

func TestTransposeAndGather(t *testing.T) {
	b := New(Options{Threads: 2})
	rng := rand.New(rand.NewPCG(11, 12))
	x, xf := randT(t, b, rng, compute.F32, 2, 3, 4, 5)
	dst := compute.MustAlloc(b, compute.F32, 4, 2, 5, 3)
	b.Transpose(dst, x, 2, 0, 3, 1)
	got := get(t, dst)
	for i0 := 0; i0 < 4; i0++ {
		for i1 := 0; i1 < 2; i1++ {
			for i2 := 0; i2 < 5; i2++ {
				for i3 := 0; i3 < 3; i3++ {
					g := got[((i0*2+i1)*5+i2)*3+i3]
					w := xf[((i1*3+i3)*4+i0)*5+i2]
					if g != w {
						t.Fatalf("transpose mismatch at %d,%d,%d,%d", i0, i1, i2, i3)
					}
				}
			}
		}
	}
	idx, _ := compute.FromInt64(b, compute.I32, compute.Shape{3}, []int64{1, 0, 1})
	src := x.Reshape(2, 60)
	g := compute.MustAlloc(b, compute.F32, 3, 60)
	b.GatherRows(g, src, idx)
	gv := get(t, g)
	for j := 0; j < 60; j++ {
		if gv[j] != xf[60+j] || gv[60+j] != xf[j] || gv[120+j] != xf[60+j] {
			t.Fatal("gather mismatch")
		}
	}
}

func TestBF16ChainsRoundAtEachStep(t *testing.T) {
	b := New(Options{})
	// Modulate with BF16 dst: r(r(x·r(1+scale)) + shift).
	x, _ := compute.FromFloat32(b, compute.BF16, compute.Shape{1, 2}, []float32{1.0078125, 3})
	table, _ := compute.FromFloat32(b, compute.BF16, compute.Shape{1, 4}, []float32{0.00390625, 0.001, 0.0078125, 0.01})
	idx, _ := compute.FromInt64(b, compute.I32, compute.Shape{1}, []int64{0})
	dst := compute.MustAlloc(b, compute.BF16, 1, 2)
	b.Modulate(dst, x, table, idx, 0, 2)
	got := get(t, dst)
	r := compute.RoundBF16
	tv := []float32{compute.RoundBF16(0.00390625), compute.RoundBF16(0.001), 0.0078125, compute.RoundBF16(0.01)}
	for j, xv := range []float32{1.0078125, 3} {
		want := r(r(xv*r(1+tv[2+j])) + tv[j])
		if float32(got[j]) != want {
			t.Errorf("modulate[%d] = %v, want %v", j, got[j], want)
		}
	}
}

func TestMemoryLimit(t *testing.T) {
	b := New(Options{MemoryLimit: 1000})
	a, err := b.Alloc(compute.F32, 200)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Alloc(compute.F32, 100); err == nil {
		t.Fatal("allocation past the limit succeeded")
	}
	b.Free(a)
	if _, err := b.Alloc(compute.F32, 100); err != nil {
		t.Fatalf("after Free: %v", err)
	}
	if s := b.Stats(); s.PeakBytes != 800 {
		t.Errorf("peak %d, want 800", s.PeakBytes)
	}
}
