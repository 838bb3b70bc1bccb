package studio

import "h3studio/engine/media"

// RefSize is a choice of how Ref2VA references are sized, with what it
// costs.
type RefSize struct {
	Name, Cost string
	Image      media.RefImagePolicy
	Video      media.RefVideoPolicy
}

// RefSizes are the reference-size choices, largest first. The reference
// sizes are the released workflow's; on a small canvas (the demo
// checkpoint) they make the references far larger than the video.
var RefSizes = []RefSize{
	{Name: "Reference size", Cost: "pictures at 2048 px, videos on a 768-class canvas: the released workflow; slowest",
		Image: media.RefImageDiffusers, Video: media.RefVideoReference},
	{Name: "Match the canvas", Cost: "pictures as large as the canvas, videos never enlarged: much faster on small canvases",
		Image: media.RefImageMatch, Video: media.RefVideoH3C},
}

// RefSizeOf returns the choice the settings hold (the first whose policies
// match; the reference size otherwise).
func RefSizeOf(s Settings) RefSize {
	for _, r := range RefSizes {
		if r.Image == s.RefImageSize && r.Video == s.RefVideoCanvas {
			return r
		}
	}
	return RefSizes[0]
}

// SetRefSize selects how references are sized.
func (c Compose) SetRefSize(r RefSize) {
	c.s.editDraft(func(d *Draft) { d.Settings.RefImageSize, d.Settings.RefVideoCanvas = r.Image, r.Video })
}
