package layout

import (
	"fmt"
	"math"
)

// Released spatial constants (spec H3-DIT.md §5.3, H3-ENCODERS-VAES.md §10.1).
const (
	// SpatialCompression is the video VAE's spatial factor: latent = pixels/16.
	SpatialCompression = 16
	// CanvasMultiple is what canvas sides must be multiples of: the VAE's 16
	// times the DiT's 2×2 patch, so one token covers 32×32 pixels.
	CanvasMultiple = 32
	// MaxPixels is the released pixel budget, 768·1344.
	MaxPixels = 768 * 1344
	// CanvasShortEdge is the short edge the reference's canvas rule aims for.
	CanvasShortEdge = 768
	// ReferenceImageShortEdge is the short edge Ref2VA image references are
	// encoded at (upscaling included, no area cap).
	ReferenceImageShortEdge = 2048
	// MinAspect and MaxAspect bound the aspect ratios the model was trained
	// on (1:4 … 4:1) where the reference checks them.
	MinAspect = 0.25
	MaxAspect = 4.0
)

// Canvas is a frame size in pixels.
type Canvas struct{ Width, Height int }

func (c Canvas) String() string { return fmt.Sprintf("%d×%d", c.Width, c.Height) }

// Validate checks the rules every generated canvas obeys (h3.c's, which
// accept any aspect): both sides multiples of 32 and at least 32, and at most
// 768·1344 pixels.
func (c Canvas) Validate() error {
	if c.Width < CanvasMultiple || c.Height < CanvasMultiple || c.Width%CanvasMultiple != 0 || c.Height%CanvasMultiple != 0 {
		return fmt.Errorf("layout: canvas %v: width and height must be multiples of %d and at least %d", c, CanvasMultiple, CanvasMultiple)
	}
	if int64(c.Width)*int64(c.Height) > MaxPixels {
		return fmt.Errorf("layout: canvas %v: %d pixels exceed the released 768×1344 = %d pixel limit", c, int64(c.Width)*int64(c.Height), MaxPixels)
	}
	return nil
}

// Latent is the latent grid of one frame: height/16 × width/16.
func (c Canvas) Latent() (height, width int) {
	return c.Height / SpatialCompression, c.Width / SpatialCompression
}

// RowsPerFrame is the number of packed rows one latent frame occupies:
// (height/32)·(width/32).
func (c Canvas) RowsPerFrame() int {
	return (c.Height / CanvasMultiple) * (c.Width / CanvasMultiple)
}

// roundMultiple rounds v to the nearest multiple of 32 (ties to even, as
// Python's round and C's nearbyint do), at least 32.
func roundMultiple(v float64) int {
	n := int(math.RoundToEven(v/CanvasMultiple)) * CanvasMultiple
	if n < CanvasMultiple {
		n = CanvasMultiple
	}
	return n
}

// ResolveCanvas turns an aspect ratio (or a source size) into the reference's
// canvas (resolve_canvas_size): the short edge starts at 768; when the area
// exceeds 768·1344 both sides are scaled by √(768·1344/area); each side is
// rounded to the nearest multiple of 32 (ties to even), at least 32. The
// ratio must lie within 1:4 … 4:1. 16:9 → 1344×768, 9:16 → 768×1344,
// 864:480 → 1376×768, 1:1 → 768×768.
//
// The reference takes the square root as (max/area)**0.5; this uses the
// correctly rounded math.Sqrt (as h3.c's h3_adapt_canvas does), which can only
// differ in the last ulp, far from a rounding boundary of 32.
func ResolveCanvas(aspectWidth, aspectHeight float64) (Canvas, error) {
	if !(aspectWidth > 0) || !(aspectHeight > 0) || math.IsInf(aspectWidth, 0) || math.IsInf(aspectHeight, 0) {
		return Canvas{}, fmt.Errorf("layout: aspect ratio %v:%v must be positive", aspectWidth, aspectHeight)
	}
	ratio := aspectWidth / aspectHeight
	if ratio < MinAspect || ratio > MaxAspect {
		return Canvas{}, fmt.Errorf("layout: aspect ratio %v:%v (%.4g) is outside the supported 1:4 … 4:1", aspectWidth, aspectHeight, ratio)
	}
	var w, h float64
	if ratio >= 1 {
		w, h = CanvasShortEdge*ratio, CanvasShortEdge
	} else {
		w, h = CanvasShortEdge, CanvasShortEdge/ratio
	}
	if area := w * h; area > MaxPixels {
		scale := math.Sqrt(MaxPixels / area)
		w, h = w*scale, h*scale
	}
	return Canvas{Width: roundMultiple(w), Height: roundMultiple(h)}, nil
}

// ValidateRender checks a render canvas (the smaller canvas the DiT and VAE
// run at before upscaling, h3.c's --render-width/--render-height) against the
// output canvas: a valid canvas, no larger than the output on either side,
// with exactly the same aspect ratio.
func ValidateRender(render, output Canvas) error {
	if render.Width > output.Width || render.Height > output.Height {
		return fmt.Errorf("layout: render canvas %v is larger than the output canvas %v", render, output)
	}
	if err := render.Validate(); err != nil {
		return fmt.Errorf("layout: render %w", trimPrefix(err))
	}
	if int64(render.Width)*int64(output.Height) != int64(render.Height)*int64(output.Width) {
		return fmt.Errorf("layout: render canvas %v does not have the aspect ratio of the output canvas %v", render, output)
	}
	return nil
}

// ReferenceImageCanvas is the size a Ref2VA image reference of w×h pixels is
// resized to before encoding (the reference's policy, ERRATA §3.6): scaled so
// the short edge is 2048 (upscaling included, no area cap), each side rounded
// to the nearest multiple of 32 (ties to even), at least 32. Aspect ratios
// beyond 1:4 … 4:1 are refused.
func ReferenceImageCanvas(w, h int) (Canvas, error) {
	if w <= 0 || h <= 0 {
		return Canvas{}, fmt.Errorf("layout: reference image %d×%d must have a positive size", w, h)
	}
	if w > 4*h || h > 4*w {
		return Canvas{}, fmt.Errorf("layout: reference image %d×%d is outside the supported 1:4 … 4:1", w, h)
	}
	scale := float64(ReferenceImageShortEdge) / float64(min(w, h))
	return Canvas{Width: roundMultiple(float64(w) * scale), Height: roundMultiple(float64(h) * scale)}, nil
}

func trimPrefix(err error) error {
	const p = "layout: "
	if s := err.Error(); len(s) > len(p) && s[:len(p)] == p {
		return fmt.Errorf("%s", s[len(p):])
	}
	return err
}

// FitCanvas brings a canvas of multiples of 32 within the 768·1344 pixel
// budget by taking 32 pixels at a time off its longer side (the reference's
// rounding can overshoot: 864:480 resolves to 1376×768, which fits as
// 1344×768). Sides are kept at least 32; a canvas within budget is returned
// unchanged.
func FitCanvas(c Canvas) Canvas {
	for int64(c.Width)*int64(c.Height) > MaxPixels {
		switch {
		case c.Width >= c.Height && c.Width > CanvasMultiple:
			c.Width -= CanvasMultiple
		case c.Height > CanvasMultiple:
			c.Height -= CanvasMultiple
		default:
			return c
		}
	}
	return c
}
