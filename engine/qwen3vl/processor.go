package qwen3vl

import (
	"fmt"
	"image"
	"image/draw"
	"math"
)

// This file implements the Qwen3-VL image and video processors as H3 runs
// them (transformers 5.17 Qwen2VLImageProcessor with the torchvision
// backend, Qwen3VLVideoProcessor with do_sample_frames=False and the
// uncapped pixel budget): smart_resize, the antialiased bicubic resize,
// normalization and patchify (H3-ENCODERS-VAES.md §7.2–§7.3, ERRATA F9).

// RGB is an 8-bit RGB image, rows top to bottom, pixels interleaved (H, W, 3)
// — the layout of the oracle's uint8 fixtures.
type RGB struct {
	W, H int
	Pix  []uint8 // len 3·W·H
}

// NewRGB returns a black w×h image.
func NewRGB(w, h int) *RGB { return &RGB{W: w, H: h, Pix: make([]uint8, 3*w*h)} }

// RGBFromImage converts any image to RGB (alpha is dropped, as the
// processor's convert_to_rgb does for opaque images).
func RGBFromImage(img image.Image) *RGB {
	b := img.Bounds()
	nrgba := image.NewNRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	draw.Draw(nrgba, nrgba.Bounds(), img, b.Min, draw.Src)
	out := NewRGB(b.Dx(), b.Dy())
	for i := 0; i < b.Dx()*b.Dy(); i++ {
		copy(out.Pix[3*i:3*i+3], nrgba.Pix[4*i:4*i+3])
	}
	return out
}

func (m *RGB) valid() error {
	if m == nil || m.W <= 0 || m.H <= 0 || len(m.Pix) != 3*m.W*m.H {
		return fmt.Errorf("qwen3vl: invalid RGB image")
	}
	return nil
}

// SmartResizeImage returns the processor's target size for an H×W image:
// both sides multiples of factor (round half to even), the pixel count
// brought into [minPixels, maxPixels] preserving the aspect ratio
// (transformers' qwen2_vl smart_resize).
func SmartResizeImage(height, width, factor int, lim PixelLimits) (int, int, error) {
	if height < factor || width < factor {
		return 0, 0, fmt.Errorf("qwen3vl: image %d×%d: both sides must be at least %d pixels", width, height, factor)
	}
	if r := float64(max(height, width)) / float64(min(height, width)); r > 200 {
		return 0, 0, fmt.Errorf("qwen3vl: image %d×%d: aspect ratio %.1f exceeds 200", width, height, r)
	}
	f := float64(factor)
	hb := int(math.RoundToEven(float64(height)/f)) * factor
	wb := int(math.RoundToEven(float64(width)/f)) * factor
	if hb*wb > lim.MaxPixels {
		beta := math.Sqrt(float64(height*width) / float64(lim.MaxPixels))
		hb = max(factor, int(math.Floor(float64(height)/beta/f))*factor)
		wb = max(factor, int(math.Floor(float64(width)/beta/f))*factor)
	} else if hb*wb < lim.MinPixels {
		beta := math.Sqrt(float64(lim.MinPixels) / float64(height*width))
		hb = int(math.Ceil(float64(height)*beta/f)) * factor
		wb = int(math.Ceil(float64(width)*beta/f)) * factor
	}
	return hb, wb, nil
}

// SmartResizeVideo returns the video processor's target frame size for n
// frames of H×W (transformers' qwen3_vl video smart_resize): the budget test
// is on round(n/temporal)·temporal frames, the scale-down uses n·H·W. With
// capPerFrame the pixel budget is the per-frame-capped one transformers
// announces as default from v5.22 (not what H3 was released with).
func SmartResizeVideo(frames, height, width, temporal, factor int, lim PixelLimits, capPerFrame bool) (int, int, error) {
	if frames < temporal {
		return 0, 0, fmt.Errorf("qwen3vl: video of %d frames: at least %d are needed", frames, temporal)
	}
	if height <= 0 || width <= 0 {
		return 0, 0, fmt.Errorf("qwen3vl: video frames of %d×%d pixels", width, height)
	}
	maxPixels := lim.MaxPixels
	if capPerFrame {
		perFrame := max(min(768*factor*factor, lim.MaxPixels/frames), int(float64(lim.MinPixels)*1.05))
		maxPixels = perFrame * frames
	}
	if height < factor || width < factor {
		s := math.Max(float64(factor)/float64(height), float64(factor)/float64(width))
		height, width = int(float64(height)*s), int(float64(width)*s)
	}
	if r := float64(max(height, width)) / float64(min(height, width)); r > 200 {
		return 0, 0, fmt.Errorf("qwen3vl: video %d×%d: aspect ratio %.1f exceeds 200", width, height, r)
	}
	f := float64(factor)
	hb := int(math.RoundToEven(float64(height)/f)) * factor
	wb := int(math.RoundToEven(float64(width)/f)) * factor
	tb := int(math.RoundToEven(float64(frames)/float64(temporal))) * temporal
	if tb*hb*wb > maxPixels {
		beta := math.Sqrt(float64(frames*height*width) / float64(maxPixels))
		hb = max(factor, int(math.Floor(float64(height)/beta/f))*factor)
		wb = max(factor, int(math.Floor(float64(width)/beta/f))*factor)
	} else if tb*hb*wb < lim.MinPixels {
		beta := math.Sqrt(float64(lim.MinPixels) / float64(frames*height*width))
		hb = int(math.Ceil(float64(height)*beta/f)) * factor
		wb = int(math.Ceil(float64(width)*beta/f)) * factor
	}
	return hb, wb, nil
}

// ResizeBicubic resizes src to w×h as torchvision's resize does for a
// uint8 image with BICUBIC and antialias=True on the CPU (ATen's uint8
// antialiased path, after Pillow-SIMD): per axis, the Keys cubic filter
// (a = −0.5, support widened by the scale when shrinking) gives float64
// weights, normalized and rounded to int16 fixed point at the largest
// precision that fits; the width is resampled first into a uint8
// intermediate, then the height, each output rounded (half up) and
// saturated to [0, 255]. An unchanged size returns a copy.
func ResizeBicubic(src *RGB, w, h int) *RGB {
	cur := &RGB{W: src.W, H: src.H, Pix: append([]uint8(nil), src.Pix...)}
	if w != src.W {
		lo, wts, prec := aaWeightsInt16(src.W, w)
		out := NewRGB(w, cur.H)
		for y := 0; y < cur.H; y++ {
			for x := 0; x < w; x++ {
				for c := 0; c < 3; c++ {
					s := int32(1) << (prec - 1)
					for j, k := range wts[x] {
						s += int32(cur.Pix[(y*cur.W+lo[x]+j)*3+c]) * int32(k)
					}
					out.Pix[(y*w+x)*3+c] = sat8(s >> prec)
				}
			}
		}
		cur = out
	}
	if h != src.H {
		lo, wts, prec := aaWeightsInt16(src.H, h)
		out := NewRGB(cur.W, h)
		for y := 0; y < h; y++ {
			for x := 0; x < cur.W; x++ {
				for c := 0; c < 3; c++ {
					s := int32(1) << (prec - 1)
					for j, k := range wts[y] {
						s += int32(cur.Pix[((lo[y]+j)*cur.W+x)*3+c]) * int32(k)
					}
					out.Pix[(y*cur.W+x)*3+c] = sat8(s >> prec)
				}
			}
		}
		cur = out
	}
	return cur
}

func sat8(v int32) uint8 { return uint8(min(max(v, 0), 255)) }

// aaWeightsInt16 computes, for every output index of a 1-D antialiased
// bicubic resample from in to out samples, the first input index and the
// int16 fixed-point weights, with their precision in bits (ATen's
// _compute_index_ranges_int16_weights).
func aaWeightsInt16(in, out int) (lo []int, wts [][]int16, prec uint) {
	scale := float64(in) / float64(out)
	support, invscale := 2.0, 1.0
	if scale >= 1 {
		support, invscale = 2*scale, 1/scale
	}
	lo = make([]int, out)
	fw := make([][]float64, out)
	wmax := 0.0
	for i := 0; i < out; i++ {
		center := scale * (float64(i) + 0.5)
		xmin := max(int(center-support+0.5), 0)
		xsize := min(int(center+support+0.5), in) - xmin
		w := make([]float64, max(xsize, 0))
		total := 0.0
		for j := range w {
			w[j] = cubicAA((float64(j+xmin) - center + 0.5) * invscale)
			total += w[j]
		}
		if total != 0 {
			for j := range w {
				w[j] /= total
			}
		}
		for _, v := range w {
			wmax = math.Max(wmax, v)
		}
		lo[i], fw[i] = xmin, w
	}
	for prec = 0; prec < 22; prec++ {
		if int(0.5+wmax*float64(int(1)<<(prec+1))) >= 1<<15 {
			break
		}
	}
	wts = make([][]int16, out)
	for i, w := range fw {
		wts[i] = make([]int16, len(w))
		for j, v := range w {
			if v < 0 {
				wts[i][j] = int16(int(-0.5 + v*float64(int(1)<<prec)))
			} else {
				wts[i][j] = int16(int(0.5 + v*float64(int(1)<<prec)))
			}
		}
	}
	return lo, wts, prec
}

// cubicAA is the Keys cubic convolution kernel with a = −0.5 (the
// antialiasing bicubic filter of ATen and Pillow).
func cubicAA(x float64) float64 {
	const a = -0.5
	x = math.Abs(x)
	switch {
	case x < 1:
		return ((a+2)*x-(a+3))*x*x + 1
	case x < 2:
		return ((a*x-5*a)*x+8*a)*x - 4*a
	}
	return 0
}

// Processor prepares images and videos for the vision tower.
type Processor struct {
	cfg *Config
	pc  ProcessorConfig
	// CapPixelsPerFrame selects the capped video budget of transformers ≥
	// 5.22 (false, the released behaviour, by default).
	CapPixelsPerFrame bool
}

// NewProcessor returns the processor for a model config and its
// preprocessor settings.
func NewProcessor(c *Config, pc ProcessorConfig) *Processor { return &Processor{cfg: c, pc: pc} }

// Factor is the resize granularity (patch · merge pixels: 32).
func (p *Processor) Factor() int { return p.cfg.Vision.PatchSize * p.cfg.Vision.SpatialMergeSize }

// Image preprocesses one image: smart_resize, bicubic resize when the size
// changes (the identity for any 32-aligned canvas within the limits),
// normalization and patchify with the frame repeated over the temporal
// patch. It also returns the resized image.
func (p *Processor) Image(img *RGB) (VisionInput, *RGB, error) {
	if err := img.valid(); err != nil {
		return VisionInput{}, nil, err
	}
	h, w, err := SmartResizeImage(img.H, img.W, p.Factor(), p.pc.Image)
	if err != nil {
		return VisionInput{}, nil, err
	}
	r := ResizeBicubic(img, w, h)
	px, g := p.patchify([]*RGB{r})
	return VisionInput{Pixels: px, Grid: g}, r, nil
}

// Video preprocesses the sampled frames of one reference video (all the
// same size): video smart_resize over the whole stack, bicubic resize of
// every frame, normalization, padding to a whole temporal patch by
// repeating the last frame, and patchify.
func (p *Processor) Video(frames []*RGB) (VisionInput, error) {
	if len(frames) == 0 {
		return VisionInput{}, fmt.Errorf("qwen3vl: video with no frames")
	}
	for i, f := range frames {
		if err := f.valid(); err != nil {
			return VisionInput{}, fmt.Errorf("qwen3vl: video frame %d: %w", i, err)
		}
		if f.W != frames[0].W || f.H != frames[0].H {
			return VisionInput{}, fmt.Errorf("qwen3vl: video frame %d is %d×%d, frame 0 is %d×%d", i, f.W, f.H, frames[0].W, frames[0].H)
		}
	}
	v := p.cfg.Vision
	h, w, err := SmartResizeVideo(len(frames), frames[0].H, frames[0].W, v.TemporalPatchSize, p.Factor(), p.pc.Video, p.CapPixelsPerFrame)
	if err != nil {
		return VisionInput{}, err
	}
	rs := make([]*RGB, len(frames))
	for i, f := range frames {
		rs[i] = ResizeBicubic(f, w, h)
	}
	px, g := p.patchify(rs)
	return VisionInput{Pixels: px, Grid: g}, nil
}

// Patchify normalizes and patchifies frames that are already at their
// processor size (a multiple of 32 px, within the limits), without
// resizing: one image, or a video's sampled frames (padded to a whole
// temporal patch by repeating the last).
func (p *Processor) Patchify(frames []*RGB) (VisionInput, error) {
	if len(frames) == 0 {
		return VisionInput{}, fmt.Errorf("qwen3vl: no frames")
	}
	f := p.Factor()
	for i, fr := range frames {
		if err := fr.valid(); err != nil {
			return VisionInput{}, err
		}
		if fr.W != frames[0].W || fr.H != frames[0].H || fr.W%f != 0 || fr.H%f != 0 {
			return VisionInput{}, fmt.Errorf("qwen3vl: frame %d is %d×%d: frames must share one size, a multiple of %d px", i, fr.W, fr.H, f)
		}
	}
	px, g := p.patchify(frames)
	return VisionInput{Pixels: px, Grid: g}, nil
}

// patchify normalizes frames ((u8 − 255·mean)/(255·std) in float32: with the
// released mean = std = 0.5 this is (u8 − 127.5)/127.5, bit-exact with the
// processor's fused rescale-normalize) and cuts them into patch rows: pad
// to a multiple of the temporal patch with the last frame, then rows in
// (temporal patch, merge block row, merge block col, inner row, inner col)
// order, each row (channel, frame, y, x) with x fastest.
func (p *Processor) patchify(frames []*RGB) ([]float32, Grid) {
	v := p.cfg.Vision
	tp, ps, m := v.TemporalPatchSize, v.PatchSize, v.SpatialMergeSize
	for len(frames)%tp != 0 {
		frames = append(frames, frames[len(frames)-1])
	}
	H, W := frames[0].H, frames[0].W
	g := Grid{T: len(frames) / tp, H: H / ps, W: W / ps}
	var mean, std [3]float32
	for c := 0; c < 3; c++ {
		mean[c] = float32(255 * p.pc.Mean[c])
		std[c] = float32(255 * p.pc.Std[c])
	}
	row := 3 * tp * ps * ps
	out := make([]float32, g.Patches()*row)
	rows, cols := mergeBlockCoords(g.H, g.W, m)
	for t := 0; t < g.T; t++ {
		for i := range rows {
			o := out[(t*g.H*g.W+i)*row : (t*g.H*g.W+i+1)*row]
			for c := 0; c < 3; c++ {
				for f := 0; f < tp; f++ {
					fr := frames[t*tp+f]
					for y := 0; y < ps; y++ {
						py := rows[i]*ps + y
						for x := 0; x < ps; x++ {
							px := cols[i]*ps + x
							u := float32(fr.Pix[(py*W+px)*3+c])
							o[((c*tp+f)*ps+y)*ps+x] = (u - mean[c]) / std[c]
						}
					}
				}
			}
		}
	}
	return out, g
}
