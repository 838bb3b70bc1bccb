package cpu

import (
	"sync"

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

// unravel writes the row-major coordinates of flat index i in dims to pos.
func unravel(pos []int, i int, dims []int) {
	for a := len(dims) - 1; a >= 0; a-- {
		pos[a] = i % dims[a]
		i /= dims[a]
	}
}

// Conv is the N-d cross-correlation with padding modes and groups.
func (b *Backend) Conv(dst, x, w, bias *compute.Tensor, p compute.ConvParams) {
	g := compute.ConvDims(dst, x, w, bias, p)
	G, Cout, cinG, coutG := g.Groups, g.Cout, g.CinG, g.CoutG
	colLen := cinG * g.KernelElems
	b.dispatch(2 * float64(Cout) * float64(g.OutElems) * float64(colLen))
	oneD := func(out, xs, ws, bs []float32, wide bool) { b.conv1D(out, xs, ws, bs, g, p, wide) }
	b.convolve(dst, x, w, bias, g, oneD, func(out, xs, ws, bs []float32, wide bool, lo, hi int) {
		col := make([]float32, colLen)
		opos := make([]int, g.Spatial)
		kpos := make([]int, g.Spatial)
		for o := lo; o < hi; o++ {
			unravel(opos, o, g.Out)
			for gi := 0; gi < G; gi++ {
				// gather the receptive field of this group
				for kk := 0; kk < g.KernelElems; kk++ {
					unravel(kpos, kk, g.Kernel)
					off, ok := 0, true
					for a := 0; a < g.Spatial; a++ {
						i := opos[a]*p.StrideAt(a) - p.PadBeforeAt(a) + kpos[a]*p.DilationAt(a)
						ii, in := padIndex(i, g.In[a], p.PadMode)
						if !in {
							ok = false
							break
						}
						off = off*g.In[a] + ii
					}
					for ci := 0; ci < cinG; ci++ {
						if ok {
							col[ci*g.KernelElems+kk] = xs[(gi*cinG+ci)*g.InElems+off]
						} else {
							col[ci*g.KernelElems+kk] = 0
						}
					}
				}
				for oc := gi * coutG; oc < (gi+1)*coutG; oc++ {
					out[oc*g.OutElems+o] = convDot(col, ws[oc*colLen:(oc+1)*colLen], bs, oc, wide)
				}
			}
		}
	})
}

// convolve loads a convolution's operands, computes its output with the 1-D
// fast path oneD or, for more spatial axes or under OracleGenericConv, with
// nd over ranges [lo, hi) of the output positions in parallel, and stores
// it in dst.
func (b *Backend) convolve(dst, x, w, bias *compute.Tensor, g compute.ConvGeom,
	oneD func(out, xs, ws, bs []float32, wide bool), nd func(out, xs, ws, bs []float32, wide bool, lo, hi int)) {
	bs := loadOpt(bias)
	xs, ws := load(x), load(w)
	out := convOutput(dst, x, w)
	wide := b.wideConv(g)
	if g.Spatial == 1 && !b.opts.Oracles.Has(OracleGenericConv) {
		oneD(out, xs, ws, bs, wide)
	} else {
		b.parallel(g.OutElems, 16, func(lo, hi int) { nd(out, xs, ws, bs, wide, lo, hi) })
	}
	store(dst, out)
}

// ConvTranspose is the transposed N-d convolution (zero padding only).
func (b *Backend) ConvTranspose(dst, x, w, bias *compute.Tensor, p compute.ConvParams) {
	g := compute.ConvTransposeDims(dst, x, w, bias, p)
	Cin, Cout, cinG, coutG := g.Cin, g.Cout, g.CinG, g.CoutG
	b.dispatch(2 * float64(Cin) * float64(coutG) * float64(g.InElems) * float64(g.KernelElems))
	oneD := func(out, xs, ws, bs []float32, wide bool) { b.convTranspose1D(out, xs, ws, bs, g, p, wide) }
	b.convolve(dst, x, w, bias, g, oneD, func(out, xs, ws, bs []float32, wide bool, lo, hi int) {
		opos := make([]int, g.Spatial)
		kpos := make([]int, g.Spatial)
		for o := lo; o < hi; o++ {
			unravel(opos, o, g.Out)
			for oc := 0; oc < Cout; oc++ {
				gi := oc / coutG
				ocl := oc % coutG
				var acc float32
				var acc64 float64
				for kk := 0; kk < g.KernelElems; kk++ {
					unravel(kpos, kk, g.Kernel)
					off, ok := 0, true
					for a := 0; a < g.Spatial; a++ {
						num := opos[a] + p.PadBeforeAt(a) - kpos[a]*p.DilationAt(a)
						s := p.StrideAt(a)
						if num < 0 || num%s != 0 || num/s >= g.In[a] {
							ok = false
							break
						}
						off = off*g.In[a] + num/s
					}
					if !ok {
						continue
					}
					if wide {
						for ci := gi * cinG; ci < (gi+1)*cinG; ci++ {
							acc64 += float64(xs[ci*g.InElems+off]) * float64(ws[(ci*coutG+ocl)*g.KernelElems+kk])
						}
						continue
					}
					for ci := gi * cinG; ci < (gi+1)*cinG; ci++ {
						acc += xs[ci*g.InElems+off] * ws[(ci*coutG+ocl)*g.KernelElems+kk]
					}
				}
				out[oc*g.OutElems+o] = finish(acc, acc64, bs, oc, wide)
			}
		}
	})
}

// OracleGenericConv selects the N-d gather loops of Conv and ConvTranspose
// for 1-D convolutions too, instead of their fast paths. Both compute the
// same products in the same order with the same accumulator, so results
// are bit-identical; the oracle exists for A/B diagnosis.
var OracleGenericConv = compute.RegisterOracle("cpu-generic-conv",
	"CPU Conv/ConvTranspose: the generic N-d gather loop for 1-D convolutions (bit-identical to the fast path)")

// convOutput returns dst's own storage to compute into when that is safe
// (F32 and not overlapping an operand), else scratch: it saves an
// allocation and a copy per call.
func convOutput(dst, x, w *compute.Tensor) []float32 {
	if dst.DType() == compute.F32 && !aliased(dst, x) && !aliased(dst, w) {
		return output(dst)
	}
	return make([]float32, dst.NumElements())
}

// tapTable caches the per-position tap tables of recent 1-D geometries:
// the audio decoder repeats each geometry dozens of times per channel.
type tapTable struct {
	first, taps, pos []int32
}

type tapKey struct {
	transpose, L, K, O, s, d, pb int
	mode                         compute.PadMode
}

var (
	tapMu    sync.Mutex
	tapCache = map[tapKey]*tapTable{}
	tapOrder []tapKey
)

// tapsFor returns, for every output position of a 1-D (transposed)
// convolution, its contributing taps in ascending order and their input
// positions (−1 for a zero-padded tap of Conv).
func tapsFor(k tapKey) *tapTable {
	tapMu.Lock()
	defer tapMu.Unlock()
	if t, ok := tapCache[k]; ok {
		return t
	}
	t := &tapTable{first: make([]int32, k.O+1)}
	if k.transpose == 0 {
		t.pos = make([]int32, k.O*k.K)
		for o := 0; o < k.O; o++ {
			t.first[o] = int32(o * k.K)
			for j := 0; j < k.K; j++ {
				i, ok := padIndex(o*k.s-k.pb+j*k.d, k.L, k.mode)
				if !ok {
					i = -1
				}
				t.pos[o*k.K+j] = int32(i)
			}
		}
		t.first[k.O] = int32(k.O * k.K)
	} else {
		t.taps = make([]int32, 0, k.O*((k.K+k.s-1)/k.s+1))
		t.pos = make([]int32, 0, cap(t.taps))
		for o := 0; o < k.O; o++ {
			t.first[o] = int32(len(t.taps))
			for j := 0; j < k.K; j++ {
				num := o + k.pb - j*k.d
				if num >= 0 && num%k.s == 0 && num/k.s < k.L {
					t.taps = append(t.taps, int32(j))
					t.pos = append(t.pos, int32(num/k.s))
				}
			}
		}
		t.first[k.O] = int32(len(t.taps))
	}
	const keep = 16
	if len(tapOrder) >= keep {
		delete(tapCache, tapOrder[0])
		tapOrder = tapOrder[1:]
	}
	tapCache[k] = t
	tapOrder = append(tapOrder, k)
	return t
}

// conv1D is Conv for one spatial axis: the same receptive-field vector
// (channel-major, then tap) and the same dot product as the generic loop,
// without its per-element coordinate arithmetic.
func (b *Backend) conv1D(out, xs, ws, bs []float32, g compute.ConvGeom, p compute.ConvParams, wide bool) {
	L, K, O := g.In[0], g.Kernel[0], g.Out[0]
	G, cinG, coutG := g.Groups, g.CinG, g.CoutG
	s, d, pb := p.StrideAt(0), p.DilationAt(0), p.PadBeforeAt(0)
	colLen := cinG * K
	// Source index of every (output, tap), or −1 for a zero-padded tap.
	src := tapsFor(tapKey{0, L, K, O, s, d, pb, p.PadMode}).pos
	b.parallel(O, 16, func(lo, hi int) {
		col := make([]float32, colLen)
		for o := lo; o < hi; o++ {
			taps := src[o*K : (o+1)*K]
			for gi := 0; gi < G; gi++ {
				for ci := 0; ci < cinG; ci++ {
					row := xs[(gi*cinG+ci)*L : (gi*cinG+ci+1)*L]
					c := col[ci*K : (ci+1)*K]
					for k, i := range taps {
						if i >= 0 {
							c[k] = row[i]
						} else {
							c[k] = 0
						}
					}
				}
				for oc := gi * coutG; oc < (gi+1)*coutG; oc++ {
					out[oc*O+o] = convDot(col, ws[oc*colLen:(oc+1)*colLen], bs, oc, wide)
				}
			}
		}
	})
}

// convTranspose1D is ConvTranspose for one spatial axis, accumulating in
// the generic loop's order (taps ascending, input channels inner).
func (b *Backend) convTranspose1D(out, xs, ws, bs []float32, g compute.ConvGeom, p compute.ConvParams, wide bool) {
	L, K, O := g.In[0], g.Kernel[0], g.Out[0]
	Cout, cinG, coutG := g.Cout, g.CinG, g.CoutG
	s, d, pb := p.StrideAt(0), p.DilationAt(0), p.PadBeforeAt(0)
	// The contributing taps of every output position and their inputs.
	tt := tapsFor(tapKey{1, L, K, O, s, d, pb, compute.PadZeros})
	first, taps, pos := tt.first, tt.taps, tt.pos
	if cinG == 1 && coutG == 1 { // depthwise (the audio VAE's upsampler)
		b.parallel(Cout*O, 256, func(lo, hi int) {
			for e := lo; e < hi; e++ {
				oc, o := e/O, e%O
				x, w := xs[oc*L:(oc+1)*L], ws[oc*K:(oc+1)*K]
				var acc float32
				var acc64 float64
				if wide {
					for j := first[o]; j < first[o+1]; j++ {
						acc64 += float64(x[pos[j]]) * float64(w[taps[j]])
					}
				} else {
					for j := first[o]; j < first[o+1]; j++ {
						acc += x[pos[j]] * w[taps[j]]
					}
				}
				out[e] = finish(acc, acc64, bs, oc, wide)
			}
		})
		return
	}
	b.parallel(Cout*O, 256, func(lo, hi int) {
		for e := lo; e < hi; e++ {
			oc, o := e/O, e%O
			gi, ocl := oc/coutG, oc%coutG
			var acc float32
			var acc64 float64
			for j := first[o]; j < first[o+1]; j++ {
				k, i := int(taps[j]), int(pos[j])
				if wide {
					for ci := gi * cinG; ci < (gi+1)*cinG; ci++ {
						acc64 += float64(xs[ci*L+i]) * float64(ws[(ci*coutG+ocl)*K+k])
					}
					continue
				}
				for ci := gi * cinG; ci < (gi+1)*cinG; ci++ {
					acc += xs[ci*L+i] * ws[(ci*coutG+ocl)*K+k]
				}
			}
			out[e] = finish(acc, acc64, bs, oc, wide)
		}
	})
}

// OracleConv1DFloat32Accumulate makes 1-D Conv and ConvTranspose accumulate
// in float32 (Conv: 8 partial sums; ConvTranspose: taps ascending, input
// channels inner) like the N-d convolutions, instead of in float64.
var OracleConv1DFloat32Accumulate = compute.RegisterOracle("cpu-conv1d-f32-accumulate",
	"CPU Conv/ConvTranspose: float32 accumulation for 1-D convolutions too (the audio VAE then drifts ~1e-5 from exact arithmetic at the released size)")

// wideConv reports whether a convolution accumulates in float64 and rounds
// once on store. 1-D convolutions do by default: they are the audio VAE's,
// a chain of ~150 convolutions with reductions of up to 14,336 products, in
// which float32 accumulation alone moves the released decoder's waveform
// 1.1e-5 (the encoder's mean 3e-5) from exact arithmetic, past the fp32
// bound; with float64 accumulators the only error left is one rounding per
// stored tensor. N-d convolutions accumulate in float32.
func (b *Backend) wideConv(g compute.ConvGeom) bool {
	return g.Spatial == 1 && !b.opts.Oracles.Has(OracleConv1DFloat32Accumulate)
}

// convDot is one Conv output: the receptive field col · the weight row w
// plus bias[oc], accumulated in float64 (wide) or float32.
func convDot(col, w, bias []float32, oc int, wide bool) float32 {
	if !wide {
		v := dot(col, w)
		if bias != nil {
			v += bias[oc]
		}
		return v
	}
	v := dot64(col, w)
	if bias != nil {
		v += float64(bias[oc])
	}
	return float32(v)
}

// finish adds bias[oc] to a finished ConvTranspose sum (acc64 when wide,
// else acc) and rounds it to float32.
func finish(acc float32, acc64 float64, bias []float32, oc int, wide bool) float32 {
	if !wide {
		if bias != nil {
			acc += bias[oc]
		}
		return acc
	}
	if bias != nil {
		acc64 += float64(bias[oc])
	}
	return float32(acc64)
}

// dot64 is Σ a[i]·b[i] in float64 (each product exact), over 4 partial
// sums.
func dot64(a, b []float32) float64 {
	n := len(a)
	b = b[:n]
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= n; i += 4 {
		s0 += float64(a[i]) * float64(b[i])
		s1 += float64(a[i+1]) * float64(b[i+1])
		s2 += float64(a[i+2]) * float64(b[i+2])
		s3 += float64(a[i+3]) * float64(b[i+3])
	}
	for ; i < n; i++ {
		s0 += float64(a[i]) * float64(b[i])
	}
	return (s0 + s1) + (s2 + s3)
}
