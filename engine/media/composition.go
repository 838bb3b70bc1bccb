package media

import (
	"context"
	"errors"
	"fmt"
	"image"
	"math"
)

// Composition is an edit rendered as one MP4: video clips laid end to end on
// the 24 fps grid, each trimmed to whole frames, joined by cuts or
// crossfades (video and sound), with an optional extra sound track mixed
// under them. It is what a studio sequence becomes once its sources are
// found; the platform renders it (ExportComposition).
type Composition struct {
	// Width and Height of the output; zero: the first clip's size, rounded
	// down to even.
	Width, Height int
	Clips         []CompClip
	Sound         *CompSound // nil: none
}

// CompClip is one clip of a Composition.
type CompClip struct {
	Path string // a video file
	// SoundPath, if set, is the clip's sound when the video file has none
	// (a take folder's audio.wav beside a silent MP4).
	SoundPath string
	In, Len   int // first frame and length, in frames at 24 fps
	// Fade is the crossfade into the next clip in frames (0: a cut). The
	// next clip starts Fade frames before this one ends.
	Fade int
	Mute bool // the clip's sound is left out
}

// CompSound is a Composition's extra sound track, from time 0.
type CompSound struct {
	Path string
	Gain float64 // linear amplitude factor (1: unchanged)
}

// Fades returns each clip's crossfade into the next, clamped so that at
// most two clips overlap at any frame: a fade is at most the next clip's
// length and at most what is left of this clip after the fade into it.
// The last clip's fade is 0.
func (c Composition) Fades() []int {
	f := make([]int, len(c.Clips))
	prev := 0
	for i, cl := range c.Clips {
		if i == len(c.Clips)-1 {
			break
		}
		v := max(cl.Fade, 0)
		v = min(v, cl.Len-prev, c.Clips[i+1].Len)
		v = max(v, 0)
		f[i], prev = v, v
	}
	return f
}

// Starts returns each clip's first output frame and the total frame count:
// clip i+1 starts where clip i ends minus their crossfade.
func (c Composition) Starts() (starts []int, total int) {
	fades := c.Fades()
	starts = make([]int, len(c.Clips))
	t := 0
	for i, cl := range c.Clips {
		starts[i] = t
		t += cl.Len - fades[i]
	}
	if n := len(c.Clips); n > 0 {
		total = starts[n-1] + c.Clips[n-1].Len
	}
	return starts, total
}

// FrameMix is what one output frame shows: clip A's source frame FA, and
// inside a crossfade also clip B's frame FB, weighted Num/Den (B is −1
// outside crossfades).
type FrameMix struct {
	A, FA    int
	B, FB    int
	Num, Den int
}

// FrameAt says what output frame t shows (ok is false outside 0…Frames−1).
// In a crossfade of F frames the incoming clip's weight on its k-th frame
// is (k+1)/(F+1).
func (c Composition) FrameAt(t int) (m FrameMix, ok bool) {
	starts, total := c.Starts()
	if t < 0 || t >= total {
		return FrameMix{}, false
	}
	fades := c.Fades()
	m = FrameMix{A: -1, B: -1}
	for i, cl := range c.Clips {
		if t < starts[i] || t >= starts[i]+cl.Len {
			continue
		}
		if m.A < 0 {
			m.A, m.FA = i, cl.In+t-starts[i]
			continue
		}
		m.B, m.FB = i, cl.In+t-starts[i]
		m.Num, m.Den = t-starts[i]+1, fades[m.A]+1
		break
	}
	return m, m.A >= 0
}

// Frames is the composition's length in frames.
func (c Composition) Frames() int {
	_, n := c.Starts()
	return n
}

// Validate checks the composition's numbers (not its files).
func (c Composition) Validate() error {
	if len(c.Clips) == 0 {
		return errors.New("media: the composition has no clips")
	}
	for i, cl := range c.Clips {
		switch {
		case cl.Path == "":
			return fmt.Errorf("media: composition clip %d has no file", i+1)
		case cl.In < 0 || cl.Len <= 0:
			return fmt.Errorf("media: composition clip %d (%s): frames %d…%d are empty", i+1, cl.Path, cl.In, cl.In+cl.Len)
		}
	}
	if c.Width < 0 || c.Height < 0 || c.Width%2 != 0 || c.Height%2 != 0 {
		return fmt.Errorf("media: composition size %d×%d must be even", c.Width, c.Height)
	}
	if c.Sound != nil && (c.Sound.Path == "" || !(c.Sound.Gain >= 0) || math.IsInf(c.Sound.Gain, 0)) {
		return fmt.Errorf("media: composition sound track %q, gain %g", c.Sound.Path, c.Sound.Gain)
	}
	return nil
}

// ExportOptions tune ExportComposition.
type ExportOptions struct {
	MP4 MP4Options
	// Progress, if set, is called with the frames rendered so far and the
	// total (from the exporting goroutine).
	Progress func(done, total int)
	// Render forces RenderComposition even where the platform composes
	// natively (the oracle path of ExportComposition).
	Render bool
	// Open and NewSink replace Open and NewMP4Sink (tests).
	Open    Opener
	NewSink func(path string, o MP4Options) (Sink, error)
}

// ExportComposition writes c to dst as one MP4 (H.264 24 fps, AAC 32 kHz
// stereo): with the platform's native composition when it has one
// (AVFoundation on macOS) and o.Render is false, otherwise by rendering
// every frame through the MP4 sink (RenderComposition). Every source is
// opened before anything is written: a missing or unreadable one fails
// naming it. A cancelled or failed export leaves nothing at dst (an earlier
// file there is kept).
func ExportComposition(ctx context.Context, c Composition, dst string, o ExportOptions) error {
	if err := c.Validate(); err != nil {
		return err
	}
	if p := CurrentPlatform(); p.ExportComposition != nil && !o.Render && o.Open == nil && o.NewSink == nil {
		return p.ExportComposition(ctx, c, dst, o)
	}
	return RenderComposition(ctx, c, dst, o)
}

// RenderComposition is ExportComposition's portable path: every source is
// decoded, each output frame is the clip's frame (or, in a crossfade, the
// two clips' frames blended linearly: the incoming clip's weight is
// (k+1)/(F+1) on the k-th of F overlapping frames), the sound is mixed at
// 32 kHz stereo with complementary linear ramps over each crossfade plus
// the extra track, clipped to [-1, 1], and everything goes through the MP4
// sink, which writes under a temporary name and renames when done.
func RenderComposition(ctx context.Context, c Composition, dst string, o ExportOptions) error {
	if err := c.Validate(); err != nil {
		return err
	}
	open := o.Open
	if open == nil {
		open = Open
	}
	newSink := o.NewSink
	if newSink == nil {
		newSink = NewMP4Sink
	}
	srcs := make([]Source, len(c.Clips))
	defer func() {
		for _, s := range srcs {
			if s != nil {
				s.Close()
			}
		}
	}()
	for i, cl := range c.Clips {
		s, err := open(cl.Path)
		if err != nil {
			return err
		}
		srcs[i] = s
		if k := s.Info().Kind; k != KindVideo {
			return fileErr(cl.Path, nil, "is %s, not a video", k)
		}
	}
	var extra Source
	if c.Sound != nil {
		s, err := open(c.Sound.Path)
		if err != nil {
			return err
		}
		defer s.Close()
		if !s.Info().HasAudio {
			return fileErr(c.Sound.Path, ErrNoAudio, "has no sound")
		}
		extra = s
	}
	w, h := c.Width, c.Height
	if w == 0 || h == 0 {
		inf := srcs[0].Info()
		w, h = inf.Width&^1, inf.Height&^1
	}
	total := c.Frames()

	sound, err := mixSound(ctx, c, srcs, extra, open)
	if err != nil {
		return err
	}
	sink, err := newSink(dst, o.MP4)
	if err != nil {
		return err
	}
	ok := false
	defer func() {
		if !ok {
			sink.Abort()
		}
	}()
	if err := sink.Begin(OutputFormat(w, h, total)); err != nil {
		return err
	}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	readers := make([]*frameReader, len(c.Clips))
	defer func() {
		for _, r := range readers {
			if r != nil {
				r.stop()
			}
		}
	}()
	next := func(i int) (*image.RGBA, error) {
		if readers[i] == nil {
			readers[i] = startReader(rctx, srcs[i], c.Clips[i], w, h)
		}
		return readers[i].next()
	}
	out := image.NewRGBA(image.Rect(0, 0, w, h))
	for t := 0; t < total; t++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		m, _ := c.FrameAt(t)
		for i := range c.Clips {
			if readers[i] != nil && i < m.A {
				readers[i].stop() // the clip is over
				readers[i] = nil
			}
		}
		fa, err := next(m.A)
		if err != nil {
			return err
		}
		if m.B < 0 {
			copy(out.Pix, fa.Pix)
		} else {
			fb, err := next(m.B)
			if err != nil {
				return err
			}
			Blend(out, fa, fb, m.Num, m.Den)
		}
		if err := sink.WriteFrame(out); err != nil {
			return err
		}
		if o.Progress != nil {
			o.Progress(t+1, total)
		}
	}
	if err := FinishSink(ctx, sink, sound); err != nil {
		return err
	}
	ok = true
	return nil
}

// FinishSink writes sound into sink (in one-second pieces) and closes it,
// unless ctx was cancelled first (the caller then aborts the sink).
func FinishSink(ctx context.Context, sink Sink, sound Audio) error {
	const chunk = SampleRate
	for i := 0; i < sound.Frames(); i += chunk {
		j := min(i+chunk, sound.Frames())
		if err := sink.WriteAudio(Audio{Rate: sound.Rate, Channels: sound.Channels, Samples: sound.Samples[sound.Channels*i : sound.Channels*j]}); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return sink.Close()
}

// Blend writes a·(d−n)/d + b·n/d into out, rounded (a crossfade frame;
// the three pictures have the same size).
func Blend(out, a, b *image.RGBA, n, d int) {
	for i := range out.Pix {
		out.Pix[i] = uint8((int(a.Pix[i])*(d-n) + int(b.Pix[i])*n + d/2) / d)
	}
}

// mixSound decodes the clips' sounds (muted ones are skipped) and the
// extra track, and mixes them (Mix).
func mixSound(ctx context.Context, c Composition, srcs []Source, extra Source, open Opener) (Audio, error) {
	sounds := make([]Audio, len(c.Clips))
	for i, cl := range c.Clips {
		if cl.Mute {
			continue
		}
		a, err := clipSound(ctx, srcs[i], cl, open)
		if err != nil {
			return Audio{}, err
		}
		sounds[i] = a
	}
	var ex Audio
	if extra != nil {
		a, err := extra.Audio(ctx)
		if err != nil {
			return Audio{}, err
		}
		ex = Resample(a.Stereo(), SampleRate)
	}
	return c.Mix(sounds, ex), nil
}

// Mix is the composition's sound, 32 kHz stereo, exactly as long as its
// frames (AudioSamplesFor): sounds[i] is clip i's whole source sound at
// 32 kHz stereo (empty: silent; Mute clips are silent whatever it holds),
// trimmed to the clip and placed at its start; over a crossfade the
// outgoing clip ramps down and the incoming one up, linearly and
// complementarily (their gains sum to 1 on every sample); extra (the extra
// track, 32 kHz stereo) is added from time 0 at c.Sound's gain; the sum is
// clipped to [-1, 1].
func (c Composition) Mix(sounds []Audio, extra Audio) Audio {
	starts, total := c.Starts()
	fades := c.Fades()
	n := AudioSamplesFor(total, SampleRate)
	mix := Audio{Rate: SampleRate, Channels: NumChannels, Samples: make([]float32, 2*n)}
	for i, cl := range c.Clips {
		if cl.Mute || i >= len(sounds) {
			continue
		}
		a := sounds[i]
		if a.Frames() == 0 || a.Channels != 2 {
			continue
		}
		// Sample positions come from the output frame grid, so that the
		// ramps of two crossfading clips cover exactly the same samples.
		a0 := AudioSamplesFor(cl.In, SampleRate)
		at := AudioSamplesFor(starts[i], SampleRate)
		end := AudioSamplesFor(starts[i]+cl.Len, SampleRate)
		length := end - at
		fadeIn, fadeOut := 0, 0
		if i > 0 && fades[i-1] > 0 {
			fadeIn = AudioSamplesFor(starts[i-1]+c.Clips[i-1].Len, SampleRate) - at
		}
		if i+1 < len(c.Clips) && fades[i] > 0 {
			fadeOut = end - AudioSamplesFor(starts[i+1], SampleRate)
		}
		for s := 0; s < length && at+s < n; s++ {
			if a0+s >= a.Frames() {
				break
			}
			g := float32(1)
			if s < fadeIn {
				g = float32(s+1) / float32(fadeIn+1)
			}
			if r := length - s; r <= fadeOut {
				g *= float32(r) / float32(fadeOut+1)
			}
			mix.Samples[2*(at+s)] += g * a.Samples[2*(a0+s)]
			mix.Samples[2*(at+s)+1] += g * a.Samples[2*(a0+s)+1]
		}
	}
	return c.AddSound(mix, extra)
}

// AddSound adds the extra track (32 kHz stereo) to mix in place at the
// composition's gain from time 0, clips the sum to [-1, 1] and returns mix
// (the last step of Mix; the AVFoundation path, whose audio mix does the
// clips, uses it too).
func (c Composition) AddSound(mix, extra Audio) Audio {
	if c.Sound != nil && extra.Channels == 2 {
		g := float32(c.Sound.Gain)
		for i := 0; i < len(mix.Samples) && i < len(extra.Samples); i++ {
			mix.Samples[i] += g * extra.Samples[i]
		}
	}
	for i, v := range mix.Samples {
		mix.Samples[i] = max(-1, min(1, v))
	}
	return mix
}

// clipSound decodes a clip's sound at 32 kHz stereo: the video's own track,
// or its SoundPath when the video has none; no sound at all is silence.
func clipSound(ctx context.Context, src Source, cl CompClip, open Opener) (Audio, error) {
	if src.Info().HasAudio {
		a, err := src.Audio(ctx)
		if err == nil {
			return Resample(a.Stereo(), SampleRate), nil
		}
		if !errors.Is(err, ErrNoAudio) {
			return Audio{}, err
		}
	}
	if cl.SoundPath == "" {
		return Audio{}, nil
	}
	s, err := open(cl.SoundPath)
	if err != nil {
		return Audio{}, err
	}
	defer s.Close()
	a, err := s.Audio(ctx)
	if err != nil {
		return Audio{}, err
	}
	return Resample(a.Stereo(), SampleRate), nil
}

// frameReader delivers a clip's frames on the 24 fps grid, fitted to the
// output size, from a decoding goroutine.
type frameReader struct {
	ch     chan *image.RGBA
	errc   chan error
	cancel context.CancelFunc
	last   *image.RGBA
	done   bool
	path   string
}

var errEnough = errors.New("enough frames")

func startReader(ctx context.Context, src Source, cl CompClip, w, h int) *frameReader {
	ctx, cancel := context.WithCancel(ctx)
	r := &frameReader{ch: make(chan *image.RGBA, 2), errc: make(chan error, 1), cancel: cancel, path: cl.Path}
	inf := src.Info()
	fps := inf.FPS
	if !(fps > 0) {
		fps = FPS
	}
	slot := func(i int) int { return int(math.Floor(float64(i)*FPS/fps + 0.5)) }
	end := cl.In + cl.Len
	go func() {
		defer close(r.ch)
		err := src.Frames(ctx, 0, func(i int, f *image.RGBA) error {
			s0, s1 := max(slot(i), cl.In), min(slot(i+1), end)
			if s0 >= s1 {
				if slot(i) >= end {
					return errEnough
				}
				return nil
			}
			var img *image.RGBA
			if b := f.Bounds(); b.Dx() == w && b.Dy() == h && b.Min == (image.Point{}) && f.Stride == 4*w {
				img = image.NewRGBA(b)
				copy(img.Pix, f.Pix)
			} else {
				img = FitImage(f, w, h, FitCover)
			}
			for j := s0; j < s1; j++ {
				select {
				case r.ch <- img:
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			if s1 >= end {
				return errEnough
			}
			return nil
		})
		if errors.Is(err, errEnough) {
			err = nil
		}
		r.errc <- err
	}()
	return r
}

// next returns the clip's next frame; a source that ends early holds its
// last frame (a container's frame count may be off by one).
func (r *frameReader) next() (*image.RGBA, error) {
	if !r.done {
		if f, ok := <-r.ch; ok {
			r.last = f
			return f, nil
		}
		r.done = true
		if err := <-r.errc; err != nil {
			return nil, err
		}
	}
	if r.last == nil {
		return nil, fileErr(r.path, nil, "has no frames in the trimmed range")
	}
	return r.last, nil
}

func (r *frameReader) stop() {
	r.cancel()
	if !r.done {
		for range r.ch {
		}
		r.done = true
	}
}
