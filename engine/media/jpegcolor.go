package media

import "image"

// ycbcrToRGBA converts a decoded JPEG's planes the way libjpeg-turbo does
// by default (PIL's decoder): "fancy" triangle-filter chroma upsampling for
// 4:2:0, 4:2:2 and 4:4:0, then the fixed-point YCbCr→RGB tables of
// jdcolor.c (each term rounded separately). Go's own conversion takes the
// nearest chroma sample, which differs by up to ~120 levels at sharp colour
// edges. Other subsampling ratios fall back to Go's conversion.
func ycbcrToRGBA(src *image.YCbCr) *image.RGBA {
	b := src.Bounds()
	w, h := b.Dx(), b.Dy()
	var hs, vs int
	switch src.SubsampleRatio {
	case image.YCbCrSubsampleRatio444:
		hs, vs = 1, 1
	case image.YCbCrSubsampleRatio422:
		hs, vs = 2, 1
	case image.YCbCrSubsampleRatio420:
		hs, vs = 2, 2
	case image.YCbCrSubsampleRatio440:
		hs, vs = 1, 2
	default:
		return nil
	}
	cw, ch := (w+hs-1)/hs, (h+vs-1)/vs
	plane := func(p []uint8) []uint8 { // the component's valid samples, packed cw×ch
		out := make([]uint8, cw*ch)
		c0 := src.COffset(b.Min.X, b.Min.Y)
		for y := 0; y < ch; y++ {
			copy(out[y*cw:(y+1)*cw], p[c0+y*src.CStride:])
		}
		return out
	}
	cb := upsample(plane(src.Cb), cw, ch, hs, vs, w, h)
	cr := upsample(plane(src.Cr), cw, ch, hs, vs, w, h)
	out := image.NewRGBA(image.Rect(0, 0, w, h))
	t := jpegTables()
	for y := 0; y < h; y++ {
		yrow := src.Y[src.YOffset(b.Min.X, b.Min.Y+y):]
		o := out.Pix[y*out.Stride:]
		for x := 0; x < w; x++ {
			Y := int32(yrow[x])
			u, v := cb[y*w+x], cr[y*w+x]
			o[4*x] = clampU8(Y + t.crR[v])
			o[4*x+1] = clampU8(Y + ((t.cbG[u] + t.crG[v]) >> 16))
			o[4*x+2] = clampU8(Y + t.cbB[u])
			o[4*x+3] = 255
		}
	}
	return out
}

func clampU8(v int32) uint8 { return uint8(min(max(v, 0), 255)) }

type ycc struct{ crR, cbB, crG, cbG [256]int32 }

var yccTables *ycc

func jpegTables() *ycc {
	if yccTables != nil {
		return yccTables
	}
	const half = 1 << 15
	fix := func(x float64) int32 { return int32(x*65536 + 0.5) }
	t := new(ycc)
	for i := 0; i < 256; i++ {
		x := int32(i - 128)
		t.crR[i] = (fix(1.40200)*x + half) >> 16
		t.cbB[i] = (fix(1.77200)*x + half) >> 16
		t.crG[i] = -fix(0.71414) * x
		t.cbG[i] = -fix(0.34414)*x + half
	}
	yccTables = t
	return t
}

// fancyRow doubles the row s into line (2·len(s) samples) as libjpeg's
// h2v1 and h2v2 fancy upsampling do: each output sample is ¾ of its
// nearest input and ¼ of the next one, the edges replicated; sums get the
// rounding biases even (left output) and odd (right output), then are
// shifted right by shift (2 for plain samples, 4 for the ×4 vertical sums
// of h2v2).
func fancyRow(line []uint8, s []int32, even, odd int32, shift uint) {
	last := len(s) - 1
	for c := range s {
		left, right := s[max(c-1, 0)], s[min(c+1, last)]
		line[2*c] = uint8((s[c]*3 + left + even) >> shift)
		line[2*c+1] = uint8((s[c]*3 + right + odd) >> shift)
	}
}

// upsample expands a cw×ch chroma plane by hs×vs to w×h with libjpeg's
// fancy upsampling (edges replicate the nearest row/column).
func upsample(p []uint8, cw, ch, hs, vs, w, h int) []uint8 {
	// vertical: rows of int sums (×4 when vs = 2, ×1 otherwise)
	rows := ch * vs
	vsum := make([]int32, rows*cw)
	for r := 0; r < ch; r++ {
		cur := p[r*cw : (r+1)*cw]
		if vs == 1 {
			for c := 0; c < cw; c++ {
				vsum[r*cw+c] = int32(cur[c])
			}
			continue
		}
		above, below := p[max(r-1, 0)*cw:], p[min(r+1, ch-1)*cw:]
		for c := 0; c < cw; c++ {
			vsum[(2*r)*cw+c] = 3*int32(cur[c]) + int32(above[c])
			vsum[(2*r+1)*cw+c] = 3*int32(cur[c]) + int32(below[c])
		}
	}
	out := make([]uint8, w*h)
	for y := 0; y < h; y++ {
		s := vsum[y*cw : (y+1)*cw]
		o := out[y*w:]
		switch {
		case hs == 1 && vs == 1:
			for x := 0; x < w; x++ {
				o[x] = uint8(s[x])
			}
		case hs == 1: // h1v2
			bias := int32(1)
			if y%2 == 1 {
				bias = 2
			}
			for x := 0; x < w; x++ {
				o[x] = uint8((s[x] + bias) >> 2)
			}
		default:
			line := make([]uint8, 2*cw)
			if vs == 1 { // h2v1: plain samples
				fancyRow(line, s, 1, 2, 2)
			} else { // h2v2: the vertical sums are ×4
				fancyRow(line, s, 8, 7, 4)
			}
			copy(o[:w], line)
		}
	}
	return out
}
