package media

import "image"

// Fit is how a picture is put onto a canvas of another size.
type Fit uint8

// Fits.
const (
	// FitStretch resizes to the canvas, ignoring the aspect ratio (the
	// reference's first keyframe).
	FitStretch Fit = iota
	// FitCover scales to cover the canvas, keeping the aspect ratio, and
	// crops the centre (the reference's second keyframe).
	FitCover
)

func (f Fit) String() string {
	if f == FitCover {
		return "cover"
	}
	return "stretch"
}

// CoverGeometry is the reference's cover-crop arithmetic for a w×h source
// on a W×H canvas: scale s = max(W/w, H/h), resized size (max(W, round(w·s)),
// max(H, round(h·s))) with Python's round (half to even), crop offset
// ((rw−W)//2, (rh−H)//2).
func CoverGeometry(w, h, W, H int) (rw, rh, left, top int) {
	s := max(float64(W)/float64(w), float64(H)/float64(h))
	rw = max(W, roundHalfEven(float64(w)*s))
	rh = max(H, roundHalfEven(float64(h)*s))
	return rw, rh, (rw - W) / 2, (rh - H) / 2
}

// FitImage puts img onto a w×h canvas with PIL-exact LANCZOS. An image already
// at w×h is returned unchanged (copied), as the reference does.
func FitImage(img *image.RGBA, w, h int, fit Fit) *image.RGBA {
	b := img.Bounds()
	if b.Dx() == w && b.Dy() == h {
		return Resize(img, w, h, Lanczos)
	}
	if fit == FitStretch {
		return Resize(img, w, h, Lanczos)
	}
	rw, rh, left, top := CoverGeometry(b.Dx(), b.Dy(), w, h)
	r := Resize(img, rw, rh, Lanczos)
	out := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		copy(out.Pix[y*out.Stride:y*out.Stride+4*w], r.Pix[(y+top)*r.Stride+4*left:])
	}
	return out
}
