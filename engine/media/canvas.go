package media

import (
	"fmt"
	"math"
)

// Canvas and reference geometry (spec H3-ENCODERS-VAES §10.1–10.4,
// H3-DIT §5.3, §12.2–12.3, ERRATA §3 item 6). All functions are pure.

// Canvas constants of the released model.
const (
	CanvasMultiple  = 32         // both canvas axes are multiples of 32 (VAE ×16 × patch 2)
	CanvasShortEdge = 768        // adaptive canvas short edge before the area cap
	CanvasMaxPixels = 768 * 1344 // area cap
	MinAspect       = 1.0 / 4    // aspect ratio limits (width/height)
	MaxAspect       = 4.0
	RefImageShort   = 2048 // reference-image short edge (diffusers policy)
)

// roundTo32 is max(32, round(x/32)·32) with Python's round (ties to even),
// the rounding every canvas rule uses.
func roundTo32(x float64) int {
	return max(CanvasMultiple, roundHalfEven(x/CanvasMultiple)*CanvasMultiple)
}

// Canvas resolves an aspect ratio to the released canvas, mirroring the
// reference's resolve_canvas_size (h3.c h3_adapt_canvas): short edge 768,
// area capped at 768·1344 keeping the ratio, each side rounded to a
// multiple of 32. 16:9 → 1344×768, 1:1 → 768×768, 864:480 → 1376×768.
func Canvas(aspectW, aspectH float64) (w, h int, err error) {
	if !(aspectW > 0 && aspectH > 0) || math.IsInf(aspectW, 0) || math.IsInf(aspectH, 0) {
		return 0, 0, fmt.Errorf("media: aspect ratio %g:%g is not positive", aspectW, aspectH)
	}
	r := aspectW / aspectH
	if r < MinAspect || r > MaxAspect {
		return 0, 0, fmt.Errorf("media: aspect ratio %g:%g (%.3g) is outside 1:4 … 4:1", aspectW, aspectH, r)
	}
	fw, fh := CanvasShortEdge*r, float64(CanvasShortEdge)
	if r < 1 {
		fw, fh = CanvasShortEdge, CanvasShortEdge/r
	}
	if a := fw * fh; a > CanvasMaxPixels {
		s := math.Sqrt(CanvasMaxPixels / a)
		fw, fh = fw*s, fh*s
	}
	return roundTo32(fw), roundTo32(fh), nil
}

// KeyframePolicy chooses how FL2VA keyframes are put on the canvas.
type KeyframePolicy string

// Keyframe policies.
const (
	// KeyframesReference (default): the first keyframe in packed order is
	// stretched; the last is cover-cropped only when both are given, so a
	// last-frame-only request stretches it (diffusers MiniMaxH3ResizeStep).
	KeyframesReference KeyframePolicy = ""
	// KeyframesH3C: the first frame is stretched and the last frame is
	// always cover-cropped (h3.c).
	KeyframesH3C KeyframePolicy = "h3c"
)

// KeyframeFits returns how the first and last keyframe are fitted.
func KeyframeFits(p KeyframePolicy, hasFirst, hasLast bool) (first, last Fit) {
	first, last = FitStretch, FitStretch
	if p == KeyframesH3C || (hasFirst && hasLast) {
		last = FitCover
	}
	return first, last
}

// RefImagePolicy is how a Ref2VA image reference is sized.
type RefImagePolicy string

// Reference-image policies (spec §10.3).
const (
	// RefImageDiffusers (default, the reference): short edge 2048,
	// upscaling included, no area cap.
	RefImageDiffusers RefImagePolicy = ""
	// RefImageMatch: scale = min(1, √(canvas area / source area)) (h3.c default).
	RefImageMatch RefImagePolicy = "match"
	// RefImageMax: scale = min(1, 2048 / short edge).
	RefImageMax RefImagePolicy = "max"
)

// ParseRefImagePolicy accepts "diffusers" (or ""), "match" and "max".
func ParseRefImagePolicy(s string) (RefImagePolicy, error) {
	switch s {
	case "", "diffusers", "reference":
		return RefImageDiffusers, nil
	case "match", "max":
		return RefImagePolicy(s), nil
	}
	return "", fmt.Errorf("media: unknown reference-image size policy %q (want diffusers, match or max)", s)
}

// RefImageSize is the size a w×h reference image is resized to (each side
// rounded to a multiple of 32, ties to even, minimum 32). canvasW×canvasH
// is the generation canvas, used by RefImageMatch. Sources outside
// 1:4 … 4:1 are refused, as the reference does.
func RefImageSize(w, h int, p RefImagePolicy, canvasW, canvasH int) (int, int, error) {
	if w <= 0 || h <= 0 {
		return 0, 0, fmt.Errorf("media: reference image has no pixels (%d×%d)", w, h)
	}
	if w > 4*h || h > 4*w {
		return 0, 0, fmt.Errorf("media: reference image is %d×%d; its aspect ratio must be within 1:4 and 4:1", w, h)
	}
	short := float64(min(w, h))
	var s float64
	switch p {
	case RefImageDiffusers:
		s = RefImageShort / short
	case RefImageMax:
		s = math.Min(1, RefImageShort/short)
	case RefImageMatch:
		if canvasW <= 0 || canvasH <= 0 {
			return 0, 0, fmt.Errorf("media: reference image policy match needs the canvas size")
		}
		s = math.Min(1, math.Sqrt(float64(canvasW)*float64(canvasH)/(float64(w)*float64(h))))
	default:
		return 0, 0, fmt.Errorf("media: unknown reference-image size policy %q", p)
	}
	return roundTo32(float64(w) * s), roundTo32(float64(h) * s), nil
}

// RefVideoPolicy is how a reference video's canvas is chosen.
type RefVideoPolicy string

// Reference-video canvas policies (spec §10.4, ERRATA F8).
const (
	// RefVideoReference (default): Canvas of the decoded frames' own
	// (stored, rotation-applied) aspect ratio; may upscale.
	RefVideoReference RefVideoPolicy = ""
	// RefVideoH3C: the same, but a source with a smaller area than that
	// canvas is never enlarged: its own size rounded to multiples of 32.
	RefVideoH3C RefVideoPolicy = "h3c"
)

// RefVideoCanvas is the canvas a w×h reference video is resized to.
func RefVideoCanvas(w, h int, p RefVideoPolicy) (int, int, error) {
	if w <= 0 || h <= 0 {
		return 0, 0, fmt.Errorf("media: reference video has no pixels (%d×%d)", w, h)
	}
	cw, ch, err := Canvas(float64(w), float64(h))
	if err != nil {
		return 0, 0, fmt.Errorf("media: reference video is %d×%d; its aspect ratio must be within 1:4 and 4:1", w, h)
	}
	if p == RefVideoH3C && float64(w)*float64(h) < float64(cw)*float64(ch) {
		return roundTo32(float64(w)), roundTo32(float64(h)), nil
	}
	return cw, ch, nil
}

// Slots maps n frames at fps onto the 24 fps grid by dropping and
// duplicating whole frames, as the reference does: frame i starts at slot
// ⌊i·24/fps + 0.5⌋ and is held until the next frame's slot; the stream ends
// at slot ⌊n·24/fps + 0.5⌋. It returns, for each output frame, the index of
// the source frame shown (fps = 24 is the identity).
func Slots(n int, fps float64) []int {
	if n <= 0 {
		return nil
	}
	if fps == FPS || !(fps > 0) {
		out := make([]int, n)
		for i := range out {
			out[i] = i
		}
		return out
	}
	scale := FPS / fps
	slot := func(i int) int { return int(math.Floor(float64(i)*scale + 0.5)) }
	out := make([]int, 0, slot(n))
	for i := 0; i < n; i++ {
		for j := slot(i); j < slot(i+1); j++ {
			out = append(out, i)
		}
	}
	return out
}

// VAEFrames is how many of n normalised reference-video frames the video
// VAE encodes: the largest 17m+5 ≤ n (m ≥ 1); fewer than 22 frames are all
// kept (the reference pads the clip, ERRATA F7). Qwen's vision tower sees
// all n frames (ERRATA F1).
func VAEFrames(n int) int {
	return min(n, max(1, (n-5)/17)*17+5)
}

// MinRefVideoFrames is the fewest normalised frames a reference video may
// have: Qwen's 2 fps sampling needs at least 2 samples (ERRATA F7).
const MinRefVideoFrames = 13

// SoundtrackSamples is how many native-rate samples per channel the
// reference keeps of a reference soundtrack or audio clip for a generation
// of frames frames: int(frames/24·rate), computed in float64 as Python does.
func SoundtrackSamples(frames, rate int) int {
	return int(float64(frames) / FPS * float64(rate))
}
