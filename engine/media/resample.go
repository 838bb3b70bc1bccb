package media

import (
	"fmt"
	"image"
	"math"
	"runtime"
	"sync"
)

// Filter is an image resampling filter.
type Filter uint8

// Resampling filters. Both reproduce Pillow's Image.resize for 8-bit RGB
// images (the reference pipeline resizes keyframes, reference images and
// reference-video frames with PIL's LANCZOS).
const (
	Lanczos Filter = iota // PIL Image.Resampling.LANCZOS (a = 3)
	Bicubic               // PIL Image.Resampling.BICUBIC (a = −0.5)
)

func (f Filter) String() string {
	switch f {
	case Lanczos:
		return "lanczos"
	case Bicubic:
		return "bicubic"
	}
	return fmt.Sprintf("Filter(%d)", uint8(f))
}

// support is the filter's half-width at scale 1.
func (f Filter) support() float64 {
	if f == Bicubic {
		return 2
	}
	return 3
}

func (f Filter) eval(x float64) float64 {
	switch f {
	case Bicubic:
		const a = -0.5
		x = math.Abs(x)
		if x < 1 {
			return ((a+2)*x-(a+3))*x*x + 1
		}
		if x < 2 {
			return (((x-5)*x+8)*x - 4) * a
		}
		return 0
	default:
		if -3 <= x && x < 3 {
			return sinc(x) * sinc(x/3)
		}
		return 0
	}
}

func sinc(x float64) float64 {
	if x == 0 {
		return 1
	}
	x *= math.Pi
	return math.Sin(x) / x
}

// precisionBits is the fixed-point precision of the 8-bit convolution
// (32 bits − 8 for the pixel − 2 of headroom), as in Pillow.
const precisionBits = 32 - 8 - 2

// coeffs holds, per output sample, the first input index, the tap count and
// ksize fixed-point weights.
type coeffs struct {
	ksize  int
	bounds []int // xmin, n per output sample
	k      []int32
}

// precompute returns the weights that map inSize samples onto outSize with
// filter f. It follows Pillow's two-pass resampler: the filter is widened by
// the scale when reducing, each output centre is at (x+0.5)·scale, taps are
// normalised to sum to 1 in float64 and then rounded to 22-bit fixed point.
func precompute(inSize, outSize int, f Filter) coeffs {
	scale := float64(inSize) / float64(outSize)
	filterscale := scale
	if filterscale < 1 {
		filterscale = 1
	}
	support := f.support() * filterscale
	ksize := int(math.Ceil(support))*2 + 1
	c := coeffs{ksize: ksize, bounds: make([]int, 2*outSize), k: make([]int32, outSize*ksize)}
	w := make([]float64, ksize)
	ss := 1 / filterscale
	for xx := 0; xx < outSize; xx++ {
		center := (float64(xx) + 0.5) * scale
		xmin := int(center - support + 0.5) // C truncation toward zero
		if xmin < 0 {
			xmin = 0
		}
		xmax := int(center + support + 0.5)
		if xmax > inSize {
			xmax = inSize
		}
		n := xmax - xmin
		ww := 0.0
		for x := 0; x < n; x++ {
			w[x] = f.eval((float64(x+xmin) - center + 0.5) * ss)
			ww += w[x]
		}
		k := c.k[xx*ksize : (xx+1)*ksize]
		for x := 0; x < n; x++ {
			v := w[x]
			if ww != 0 {
				v /= ww
			}
			if v < 0 {
				k[x] = int32(-0.5 + v*(1<<precisionBits))
			} else {
				k[x] = int32(0.5 + v*(1<<precisionBits))
			}
		}
		c.bounds[2*xx], c.bounds[2*xx+1] = xmin, n
	}
	return c
}

func clip8(v int32) uint8 {
	v >>= precisionBits
	if v < 0 {
		return 0
	}
	if v > 255 {
		return 255
	}
	return uint8(v)
}

// rgb is a packed 3-bytes-per-pixel image (Pillow's RGB mode minus the pad byte).
type rgb struct {
	w, h int
	pix  []uint8
}

func rgbFrom(src *image.RGBA) rgb {
	b := src.Bounds()
	out := rgb{w: b.Dx(), h: b.Dy(), pix: make([]uint8, 3*b.Dx()*b.Dy())}
	for y := 0; y < out.h; y++ {
		row := src.Pix[(y)*src.Stride:]
		o := out.pix[3*y*out.w:]
		for x := 0; x < out.w; x++ {
			o[3*x], o[3*x+1], o[3*x+2] = row[4*x], row[4*x+1], row[4*x+2]
		}
	}
	return out
}

func (r rgb) toRGBA() *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, r.w, r.h))
	for i, j := 0, 0; i < len(r.pix); i, j = i+3, j+4 {
		img.Pix[j], img.Pix[j+1], img.Pix[j+2], img.Pix[j+3] = r.pix[i], r.pix[i+1], r.pix[i+2], 255
	}
	return img
}

// Resize scales src to w×h with filter f, ignoring aspect ratio. It is
// bit-exact with Pillow's Image.resize((w, h), filter) of the same RGB image
// (no reducing_gap): a horizontal pass over the rows the vertical pass needs,
// rounded to 8 bits, then a vertical pass, both in 22-bit fixed point.
// Alpha is ignored and set to opaque; an image already at w×h is copied.
func Resize(src *image.RGBA, w, h int, f Filter) *image.RGBA {
	if w <= 0 || h <= 0 {
		panic(fmt.Sprintf("media: Resize to %dx%d", w, h))
	}
	s := src
	if src.Bounds().Min != (image.Point{}) {
		s = toRGBA(src) // rebase to the origin
	}
	in := rgbFrom(s)
	if in.w == w && in.h == h {
		return in.toRGBA()
	}
	return resizeRGB(in, w, h, f).toRGBA()
}

func resizeRGB(in rgb, w, h int, f Filter) rgb {
	needH, needV := w != in.w, h != in.h
	hc := precompute(in.w, w, f)
	vc := precompute(in.h, h, f)
	if needH {
		first := vc.bounds[0]
		last := vc.bounds[2*h-2] + vc.bounds[2*h-1]
		if !needV {
			first, last = 0, in.h
		} else {
			for i := 0; i < h; i++ {
				vc.bounds[2*i] -= first
			}
		}
		tmp := rgb{w: w, h: last - first, pix: make([]uint8, 3*w*(last-first))}
		horizontal(tmp, in, first, hc)
		in = tmp
	}
	if !needV {
		return in
	}
	out := rgb{w: w, h: h, pix: make([]uint8, 3*w*h)}
	vertical(out, in, vc)
	return out
}

// parallelRows runs f over [0, n) split into contiguous ranges, one per
// CPU. Every output row is computed independently, so the result does not
// depend on the split.
func parallelRows(n int, f func(y0, y1 int)) {
	workers := min(runtime.GOMAXPROCS(0), max(1, n/16))
	if workers <= 1 {
		f(0, n)
		return
	}
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		y0, y1 := n*w/workers, n*(w+1)/workers
		wg.Add(1)
		go func() { defer wg.Done(); f(y0, y1) }()
	}
	wg.Wait()
}

func horizontal(out, in rgb, yoff int, c coeffs) {
	parallelRows(out.h, func(y0, y1 int) { horizontalRows(out, in, yoff, c, y0, y1) })
}

func horizontalRows(out, in rgb, yoff int, c coeffs, y0, y1 int) {
	for y := y0; y < y1; y++ {
		src := in.pix[3*(y+yoff)*in.w:]
		dst := out.pix[3*y*out.w:]
		for xx := 0; xx < out.w; xx++ {
			xmin, n := c.bounds[2*xx], c.bounds[2*xx+1]
			k := c.k[xx*c.ksize:]
			s0, s1, s2 := int32(1<<(precisionBits-1)), int32(1<<(precisionBits-1)), int32(1<<(precisionBits-1))
			for x := 0; x < n; x++ {
				p := src[3*(xmin+x):]
				kx := k[x]
				s0 += int32(p[0]) * kx
				s1 += int32(p[1]) * kx
				s2 += int32(p[2]) * kx
			}
			dst[3*xx], dst[3*xx+1], dst[3*xx+2] = clip8(s0), clip8(s1), clip8(s2)
		}
	}
}

func vertical(out, in rgb, c coeffs) {
	parallelRows(out.h, func(y0, y1 int) { verticalRows(out, in, c, y0, y1) })
}

func verticalRows(out, in rgb, c coeffs, y0, y1 int) {
	stride := 3 * in.w
	for yy := y0; yy < y1; yy++ {
		ymin, n := c.bounds[2*yy], c.bounds[2*yy+1]
		k := c.k[yy*c.ksize:]
		dst := out.pix[3*yy*out.w:]
		for xx := 0; xx < 3*out.w; xx++ {
			s := int32(1 << (precisionBits - 1))
			col := in.pix[ymin*stride+xx:]
			for y := 0; y < n; y++ {
				s += int32(col[y*stride]) * k[y]
			}
			dst[xx] = clip8(s)
		}
	}
}
