package studio

import (
	"image"
	"image/draw"
	"sync"

	"h3studio/engine/media"
)

// Playback is the whole sequence as the player plays it: frame i of the
// timeline from the clips' viewer frames (blended inside crossfades, black
// in the gaps of missing clips) and the mixed sound, both by the
// definitions the export uses (media.Composition's FrameAt and Mix), so
// what plays is what exports. It implements the player's Frames.
type Playback struct {
	comp  media.Composition
	clips []*Clip
	w, h  int
	Audio media.Audio // 32 kHz stereo, as long as the frames

	mu       sync.Mutex
	lastI    int
	lastImg  *image.RGBA
	haveLast bool
	black    *image.RGBA
}

// Playback builds the sequence's playback from the view (extra is the
// extra track's sound at 32 kHz stereo, empty for none).
func (v TimelineView) Playback(extra media.Audio) *Playback {
	p := &Playback{clips: make([]*Clip, len(v.Items))}
	sounds := make([]media.Audio, len(v.Items))
	for i, c := range v.Seq.Clips {
		p.comp.Clips = append(p.comp.Clips, media.CompClip{Path: c.Source, In: c.InFrame(), Len: v.Spans[i].Frames, Fade: c.FadeFrames(), Mute: c.Mute})
		if cl := v.Items[i].Clip; cl != nil {
			p.clips[i] = cl
			sounds[i] = cl.Audio.Stereo()
			if p.w == 0 {
				if f := cl.Frame(0); f != nil {
					p.w, p.h = f.Bounds().Dx(), f.Bounds().Dy()
				}
			}
		}
	}
	if p.w == 0 {
		p.w, p.h = 320, 180
	}
	if v.Seq.Audio != nil {
		p.comp.Sound = &media.CompSound{Path: v.Seq.Audio.Source, Gain: v.Seq.Audio.Gain()}
	}
	p.Audio = p.comp.Mix(sounds, extra)
	p.black = image.NewRGBA(image.Rect(0, 0, p.w, p.h))
	draw.Draw(p.black, p.black.Rect, image.Black, image.Point{}, draw.Src)
	return p
}

// Len is the sequence's length in frames.
func (p *Playback) Len() int { return p.comp.Frames() }

// Frame is timeline frame i.
func (p *Playback) Frame(i int) image.Image {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.haveLast && p.lastI == i {
		return p.lastImg
	}
	m, ok := p.comp.FrameAt(i)
	if !ok {
		return nil
	}
	a := p.clipFrame(m.A, m.FA)
	img := a
	if m.B >= 0 {
		b := p.clipFrame(m.B, m.FB)
		img = image.NewRGBA(a.Rect)
		media.Blend(img, a, b, m.Num, m.Den)
	}
	p.lastI, p.lastImg, p.haveLast = i, img, true
	return img
}

// clipFrame is clip k's source frame f at the playback size (black when
// the clip is missing or still loading).
func (p *Playback) clipFrame(k, f int) *image.RGBA {
	c := p.clips[k]
	if c == nil {
		return p.black
	}
	img := c.Frame(f)
	if img == nil {
		return p.black
	}
	r := toRGBA(img)
	if r.Rect.Dx() == p.w && r.Rect.Dy() == p.h && r.Rect.Min == (image.Point{}) {
		return r
	}
	s := Scale(r, p.w, p.h)
	out := image.NewRGBA(image.Rect(0, 0, p.w, p.h))
	draw.Draw(out, out.Rect, image.Black, image.Point{}, draw.Src)
	off := image.Pt((p.w-s.Rect.Dx())/2, (p.h-s.Rect.Dy())/2)
	draw.Draw(out, s.Rect.Add(off), s, image.Point{}, draw.Src)
	return out
}
