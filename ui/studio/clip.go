package studio

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"io"
	"math"
	"sync"

	"golang.org/x/image/draw"

	"h3studio/engine/media"
)

// Clip is a take as the viewer plays it: its frames, kept as JPEG at viewer
// resolution (at most ViewerEdge pixels on the long side) and decoded on
// demand, and its sound. A Clip is immutable and safe for concurrent use.
type Clip struct {
	Width, Height int // output canvas of the take
	FPS           int
	Audio         media.Audio // may be empty (silent, or sound not loaded)
	Peaks         []float32   // waveform envelope, PeakBuckets values in 0..1

	frames [][]byte

	mu    sync.Mutex
	cache map[int]*image.RGBA // a few decoded frames
	order []int
	strip []image.Image
}

// StripLen is the number of frame-strip thumbnails of a clip.
const StripLen = 16

// Strip returns StripLen thumbnails (≤ 120 px wide) spread evenly over the
// clip, for the scrub bar. The first call decodes them; studio makes that
// call in the background before it publishes a clip.
func (c *Clip) Strip() []image.Image {
	if c.Len() == 0 {
		return nil
	}
	c.mu.Lock()
	s := c.strip
	c.mu.Unlock()
	if s != nil {
		return s
	}
	n := min(StripLen, c.Len())
	s = make([]image.Image, n)
	for k := range s {
		i := (2*k + 1) * c.Len() / (2 * n)
		if img, err := decodeJPEG(c.frames[i]); err == nil {
			s[k] = Scale(img, 120, 120)
		}
	}
	c.mu.Lock()
	c.strip = s
	c.mu.Unlock()
	return s
}

// ViewerEdge is the long side of viewer frames; PeakBuckets the resolution
// of waveforms.
const (
	ViewerEdge  = 960
	PeakBuckets = 1024
	viewerJPEGQ = 88
	clipCache   = 6
)

// NewClip makes a clip from JPEG frames.
func NewClip(w, h int, frames [][]byte, a media.Audio) *Clip {
	c := &Clip{Width: w, Height: h, FPS: media.FPS, Audio: a, Peaks: Peaks(a, PeakBuckets), frames: frames, cache: map[int]*image.RGBA{}}
	c.Strip()
	return c
}

// Len is the number of frames.
func (c *Clip) Len() int {
	if c == nil {
		return 0
	}
	return len(c.frames)
}

// Duration is the clip's length at its frame rate.
func (c *Clip) Duration() float64 {
	if c == nil || c.FPS == 0 {
		return 0
	}
	return float64(len(c.frames)) / float64(c.FPS)
}

// Frame decodes frame i (clamped into range); nil for an empty clip or an
// undecodable frame.
func (c *Clip) Frame(i int) image.Image {
	if c.Len() == 0 {
		return nil
	}
	i = max(0, min(i, len(c.frames)-1))
	c.mu.Lock()
	if img, ok := c.cache[i]; ok {
		c.mu.Unlock()
		return img
	}
	c.mu.Unlock()
	img, err := decodeJPEG(c.frames[i])
	if err != nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.order) >= clipCache {
		delete(c.cache, c.order[0])
		c.order = c.order[1:]
	}
	c.cache[i] = img
	c.order = append(c.order, i)
	return img
}

// JPEG returns frame i's encoded bytes.
func (c *Clip) JPEG(i int) []byte { return c.frames[i] }

func decodeJPEG(b []byte) (*image.RGBA, error) {
	img, err := jpeg.Decode(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	return toRGBA(img), nil
}

func toRGBA(img image.Image) *image.RGBA {
	if r, ok := img.(*image.RGBA); ok {
		return r
	}
	b := img.Bounds()
	r := image.NewRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	draw.Draw(r, r.Bounds(), img, b.Min, draw.Src)
	return r
}

// Scale fits img into maxW×maxH keeping its aspect (never enlarging).
func Scale(img image.Image, maxW, maxH int) *image.RGBA {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	if w <= maxW && h <= maxH {
		return toRGBA(img)
	}
	f := math.Min(float64(maxW)/float64(w), float64(maxH)/float64(h))
	nw, nh := max(1, int(math.Round(float64(w)*f))), max(1, int(math.Round(float64(h)*f)))
	dst := image.NewRGBA(image.Rect(0, 0, nw, nh))
	draw.ApproxBiLinear.Scale(dst, dst.Bounds(), img, b, draw.Src, nil)
	return dst
}

// viewerFrame encodes a frame for the viewer proxy.
func viewerFrame(img image.Image) ([]byte, error) {
	small := Scale(img, ViewerEdge, ViewerEdge)
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, small, &jpeg.Options{Quality: viewerJPEGQ}); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// SplitMJPEG cuts a motion-JPEG stream (concatenated baseline JPEG files,
// as viewer.mjpeg holds) into its frames by walking the JPEG markers.
func SplitMJPEG(b []byte) ([][]byte, error) {
	var frames [][]byte
	for pos := 0; pos < len(b); {
		end, err := jpegEnd(b, pos)
		if err != nil {
			return frames, fmt.Errorf("studio: motion JPEG frame %d at byte %d: %w", len(frames)+1, pos, err)
		}
		frames = append(frames, b[pos:end])
		pos = end
	}
	return frames, nil
}

var errJPEG = errors.New("not a JPEG frame")

// jpegEnd returns the offset just past the EOI of the JPEG starting at pos.
func jpegEnd(b []byte, pos int) (int, error) {
	if pos+2 > len(b) || b[pos] != 0xFF || b[pos+1] != 0xD8 {
		return 0, errJPEG
	}
	i := pos + 2
	for {
		if i+2 > len(b) {
			return 0, io.ErrUnexpectedEOF
		}
		if b[i] != 0xFF {
			return 0, fmt.Errorf("%w: no marker at byte %d", errJPEG, i)
		}
		m := b[i+1]
		switch {
		case m == 0xFF: // fill byte
			i++
			continue
		case m == 0xD9: // EOI
			return i + 2, nil
		case m == 0x01 || (m >= 0xD0 && m <= 0xD7):
			i += 2
			continue
		}
		if i+4 > len(b) {
			return 0, io.ErrUnexpectedEOF
		}
		n := int(binary.BigEndian.Uint16(b[i+2:]))
		i += 2 + n
		if m != 0xDA { // not SOS
			continue
		}
		// Entropy-coded data: ends at a marker other than a stuffed 0xFF00
		// or a restart marker.
		for {
			if i+1 >= len(b) {
				return 0, io.ErrUnexpectedEOF
			}
			if b[i] == 0xFF && b[i+1] != 0x00 && !(b[i+1] >= 0xD0 && b[i+1] <= 0xD7) {
				break
			}
			i++
		}
	}
}

// Peaks is the envelope of a sound in n buckets: the largest absolute
// sample of every channel in each, 0..1. It is nil for no sound.
func Peaks(a media.Audio, n int) []float32 {
	frames := a.Frames()
	if frames == 0 || n <= 0 {
		return nil
	}
	p := make([]float32, n)
	for i := 0; i < frames; i++ {
		bkt := int(int64(i) * int64(n) / int64(frames))
		for c := 0; c < a.Channels; c++ {
			v := a.Samples[i*a.Channels+c]
			if v < 0 {
				v = -v
			}
			if v > p[bkt] {
				p[bkt] = min(v, 1)
			}
		}
	}
	return p
}

// ReadWAVFile decodes a WAV file (any PCM or float layout) with the media
// layer's reader.
func ReadWAVFile(path string) (media.Audio, error) { return media.ReadWAVFile(path) }
