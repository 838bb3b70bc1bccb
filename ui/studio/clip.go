package studio

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"io"
	"math"
	"os"
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

// WAV files: audio.wav in a take (16-bit PCM), and reference sound files
// (PCM 8/16/24/32-bit or 32/64-bit float, any rate and channel count).

// WriteWAV writes 16-bit PCM WAV (samples clipped to [-1, 1]).
func WriteWAV(w io.Writer, a media.Audio) error {
	ww := &wavWriter{w: bufio.NewWriter(w), rate: a.Rate, channels: a.Channels}
	if err := ww.header(uint32(len(a.Samples) * 2)); err != nil {
		return err
	}
	if err := ww.write(a.Samples); err != nil {
		return err
	}
	return ww.w.Flush()
}

type wavWriter struct {
	w              *bufio.Writer
	rate, channels int
	buf            []byte
}

func (ww *wavWriter) header(dataBytes uint32) error {
	h := make([]byte, 44)
	copy(h[0:], "RIFF")
	binary.LittleEndian.PutUint32(h[4:], 36+dataBytes)
	copy(h[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(h[16:], 16)
	binary.LittleEndian.PutUint16(h[20:], 1) // PCM
	binary.LittleEndian.PutUint16(h[22:], uint16(ww.channels))
	binary.LittleEndian.PutUint32(h[24:], uint32(ww.rate))
	binary.LittleEndian.PutUint32(h[28:], uint32(ww.rate*ww.channels*2))
	binary.LittleEndian.PutUint16(h[32:], uint16(ww.channels*2))
	binary.LittleEndian.PutUint16(h[34:], 16)
	copy(h[36:], "data")
	binary.LittleEndian.PutUint32(h[40:], dataBytes)
	_, err := ww.w.Write(h)
	return err
}

func (ww *wavWriter) write(s []float32) error {
	ww.buf = ww.buf[:0]
	for _, v := range s {
		v = max(-1, min(1, v))
		ww.buf = binary.LittleEndian.AppendUint16(ww.buf, uint16(int16(math.Round(float64(v)*32767))))
	}
	_, err := ww.w.Write(ww.buf)
	return err
}

// ReadWAV decodes a RIFF/WAVE file into float samples.
func ReadWAV(r io.Reader) (media.Audio, error) {
	b, err := io.ReadAll(io.LimitReader(r, 1<<30))
	if err != nil {
		return media.Audio{}, err
	}
	return parseWAV(b)
}

// ReadWAVFile decodes a WAV file.
func ReadWAVFile(path string) (media.Audio, error) {
	f, err := os.Open(path)
	if err != nil {
		return media.Audio{}, err
	}
	defer f.Close()
	a, err := ReadWAV(f)
	if err != nil {
		return a, fmt.Errorf("%s: %w", path, err)
	}
	return a, nil
}

func parseWAV(b []byte) (media.Audio, error) {
	if len(b) < 12 || string(b[0:4]) != "RIFF" || string(b[8:12]) != "WAVE" {
		return media.Audio{}, errors.New("not a WAV file (no RIFF/WAVE header)")
	}
	var (
		format, channels, bits uint16
		rate                   uint32
		haveFmt                bool
		data                   []byte
	)
	for i := 12; i+8 <= len(b); {
		id := string(b[i : i+4])
		n := int(binary.LittleEndian.Uint32(b[i+4:]))
		body := b[i+8 : min(len(b), i+8+n)]
		switch id {
		case "fmt ":
			if len(body) < 16 {
				return media.Audio{}, errors.New("WAV format chunk is too short")
			}
			format = binary.LittleEndian.Uint16(body[0:])
			channels = binary.LittleEndian.Uint16(body[2:])
			rate = binary.LittleEndian.Uint32(body[4:])
			bits = binary.LittleEndian.Uint16(body[14:])
			if format == 0xFFFE && len(body) >= 26 { // WAVE_FORMAT_EXTENSIBLE
				format = binary.LittleEndian.Uint16(body[24:])
			}
			haveFmt = true
		case "data":
			data = body
		}
		i += 8 + n + n%2
	}
	if !haveFmt {
		return media.Audio{}, errors.New("WAV file has no format chunk")
	}
	if channels == 0 || rate == 0 {
		return media.Audio{}, fmt.Errorf("WAV file declares %d channels at %d Hz", channels, rate)
	}
	if data == nil {
		return media.Audio{}, errors.New("WAV file has no data chunk")
	}
	bytesPer := int(bits) / 8
	if bytesPer == 0 {
		return media.Audio{}, fmt.Errorf("WAV sample size %d bits is not supported", bits)
	}
	n := len(data) / bytesPer
	n -= n % int(channels)
	a := media.Audio{Rate: int(rate), Channels: int(channels), Samples: make([]float32, n)}
	switch {
	case format == 1 && bits == 8:
		for i := range a.Samples {
			a.Samples[i] = (float32(data[i]) - 128) / 128
		}
	case format == 1 && bits == 16:
		for i := range a.Samples {
			a.Samples[i] = float32(int16(binary.LittleEndian.Uint16(data[2*i:]))) / 32768
		}
	case format == 1 && bits == 24:
		for i := range a.Samples {
			v := int32(data[3*i]) | int32(data[3*i+1])<<8 | int32(int8(data[3*i+2]))<<16
			a.Samples[i] = float32(v) / (1 << 23)
		}
	case format == 1 && bits == 32:
		for i := range a.Samples {
			a.Samples[i] = float32(int32(binary.LittleEndian.Uint32(data[4*i:]))) / (1 << 31)
		}
	case format == 3 && bits == 32:
		for i := range a.Samples {
			a.Samples[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
		}
	case format == 3 && bits == 64:
		for i := range a.Samples {
			a.Samples[i] = float32(math.Float64frombits(binary.LittleEndian.Uint64(data[8*i:])))
		}
	default:
		return media.Audio{}, fmt.Errorf("WAV encoding %d with %d-bit samples is not supported", format, bits)
	}
	return a, nil
}
