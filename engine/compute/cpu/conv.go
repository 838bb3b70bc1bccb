package cpu

import (
	"h3studio/engine/compute"
)

// reflectIndex maps a padded coordinate into [0, n) for the border rule; ok
// is false for a zero-padded position.
func padIndex(i, n int, mode compute.PadMode) (int, bool) {
	if i >= 0 && i < n {
		return i, true
	}
	switch mode {
	case compute.PadReflect:
		if n == 1 {
			return 0, true
		}
		period := 2 * (n - 1)
		i %= period
		if i < 0 {
			i += period
		}
		if i >= n {
			i = period - i
		}
		return i, true
	case compute.PadReplicate:
		if i < 0 {
			return 0, true
		}
		return n - 1, true
	}
	return 0, false
}

type convGeom struct {
	nsp     int   // spatial axes
	in, out []int // spatial sizes
	k       []int // kernel sizes
	kprod   int
	inProd  int
	outProd int
}

func newConvGeom(op string, dst, x, w *compute.Tensor, transpose bool) convGeom {
	n := x.Rank() - 1
	compute.Check(n >= 1 && n <= 3 && w.Rank() == n+2 && dst.Rank() == n+2-1, op, "x %v w %v dst %v: want [C, spatial…] with 1–3 spatial axes", x, w, dst)
	g := convGeom{nsp: n, kprod: 1, inProd: 1, outProd: 1}
	for a := 0; a < n; a++ {
		g.in = append(g.in, x.Dim(a+1))
		g.out = append(g.out, dst.Dim(a+1))
		g.k = append(g.k, w.Dim(a+2))
		g.kprod *= w.Dim(a + 2)
		g.inProd *= x.Dim(a + 1)
		g.outProd *= dst.Dim(a + 1)
	}
	return g
}

// Conv is the N-d cross-correlation with padding modes and groups.
func (b *Backend) Conv(dst, x, w, bias *compute.Tensor, p compute.ConvParams) {
	g := newConvGeom("Conv", dst, x, w, false)
	G := p.GroupCount()
	Cin, Cout := x.Dim(0), w.Dim(0)
	compute.Check(Cin%G == 0 && Cout%G == 0 && w.Dim(1) == Cin/G && dst.Dim(0) == Cout, "Conv", "channels: x %v w %v dst %v groups %d", x, w, dst, G)
	for a := 0; a < g.nsp; a++ {
		want := compute.ConvOutSize(g.in[a], g.k[a], p.StrideAt(a), p.DilationAt(a), p.PadBeforeAt(a), p.PadAfterAt(a))
		compute.Check(g.out[a] == want, "Conv", "axis %d: output %d, want %d (x %v w %v)", a, g.out[a], want, x, w)
	}
	var bs []float32
	if bias != nil {
		compute.Check(bias.NumElements() == Cout, "Conv", "bias %v for %d channels", bias, Cout)
		bs = load(bias)
	}
	cinG, coutG := Cin/G, Cout/G
	colLen := cinG * g.kprod
	b.dispatch(2 * float64(Cout) * float64(g.outProd) * float64(colLen))
	xs, ws := load(x), load(w)
	out := make([]float32, dst.NumElements())
	b.parallel(g.outProd, 16, func(lo, hi int) {
		col := make([]float32, colLen)
		opos := make([]int, g.nsp)
		kpos := make([]int, g.nsp)
		for o := lo; o < hi; o++ {
			rem := o
			for a := g.nsp - 1; a >= 0; a-- {
				opos[a] = rem % g.out[a]
				rem /= g.out[a]
			}
			for gi := 0; gi < G; gi++ {
				// gather the receptive field of this group
				for kk := 0; kk < g.kprod; kk++ {
					r := kk
					for a := g.nsp - 1; a >= 0; a-- {
						kpos[a] = r % g.k[a]
						r /= g.k[a]
					}
					off, ok := 0, true
					for a := 0; a < g.nsp; a++ {
						i := opos[a]*p.StrideAt(a) - p.PadBeforeAt(a) + kpos[a]*p.DilationAt(a)
						ii, in := padIndex(i, g.in[a], p.PadMode)
						if !in {
							ok = false
							break
						}
						off = off*g.in[a] + ii
					}
					for ci := 0; ci < cinG; ci++ {
						if ok {
							col[ci*g.kprod+kk] = xs[(gi*cinG+ci)*g.inProd+off]
						} else {
							col[ci*g.kprod+kk] = 0
						}
					}
				}
				for oc := gi * coutG; oc < (gi+1)*coutG; oc++ {
					v := dot(col, ws[oc*colLen:(oc+1)*colLen])
					if bs != nil {
						v += bs[oc]
					}
					out[oc*g.outProd+o] = v
				}
			}
		}
	})
	store(dst, out)
}

// ConvTranspose is the transposed N-d convolution (zero padding only).
func (b *Backend) ConvTranspose(dst, x, w, bias *compute.Tensor, p compute.ConvParams) {
	g := newConvGeom("ConvTranspose", dst, x, w, true)
	compute.Check(p.PadMode == compute.PadZeros, "ConvTranspose", "only zero padding")
	G := p.GroupCount()
	Cin := x.Dim(0)
	coutG := w.Dim(1)
	Cout := coutG * G
	compute.Check(w.Dim(0) == Cin && Cin%G == 0 && dst.Dim(0) == Cout, "ConvTranspose", "channels: x %v w %v dst %v groups %d", x, w, dst, G)
	for a := 0; a < g.nsp; a++ {
		want := compute.ConvTransposeOutSize(g.in[a], g.k[a], p.StrideAt(a), p.DilationAt(a), p.PadBeforeAt(a), p.PadAfterAt(a))
		compute.Check(g.out[a] == want, "ConvTranspose", "axis %d: output %d, want %d", a, g.out[a], want)
	}
	var bs []float32
	if bias != nil {
		compute.Check(bias.NumElements() == Cout, "ConvTranspose", "bias %v for %d channels", bias, Cout)
		bs = load(bias)
	}
	cinG := Cin / G
	b.dispatch(2 * float64(Cin) * float64(coutG) * float64(g.inProd) * float64(g.kprod))
	xs, ws := load(x), load(w)
	out := make([]float32, dst.NumElements())
	b.parallel(g.outProd, 16, func(lo, hi int) {
		opos := make([]int, g.nsp)
		kpos := make([]int, g.nsp)
		for o := lo; o < hi; o++ {
			rem := o
			for a := g.nsp - 1; a >= 0; a-- {
				opos[a] = rem % g.out[a]
				rem /= g.out[a]
			}
			for oc := 0; oc < Cout; oc++ {
				gi := oc / coutG
				ocl := oc % coutG
				var acc float32
				for kk := 0; kk < g.kprod; kk++ {
					r := kk
					for a := g.nsp - 1; a >= 0; a-- {
						kpos[a] = r % g.k[a]
						r /= g.k[a]
					}
					off, ok := 0, true
					for a := 0; a < g.nsp; a++ {
						num := opos[a] + p.PadBeforeAt(a) - kpos[a]*p.DilationAt(a)
						s := p.StrideAt(a)
						if num < 0 || num%s != 0 || num/s >= g.in[a] {
							ok = false
							break
						}
						off = off*g.in[a] + num/s
					}
					if !ok {
						continue
					}
					for ci := gi * cinG; ci < (gi+1)*cinG; ci++ {
						acc += xs[ci*g.inProd+off] * ws[(ci*coutG+ocl)*g.kprod+kk]
					}
				}
				if bs != nil {
					acc += bs[oc]
				}
				out[oc*g.outProd+o] = acc
			}
		}
	})
	store(dst, out)
}
