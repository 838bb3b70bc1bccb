// Package media defines how generated and reference media move in and out of
// the engine: a Sink receives a generation's frames and sound in presentation
// order, a Source decodes one reference input. Platform implementations are
// chosen at build time (AVFoundation under darwin/avf on macOS; pure Go plus,
// on Linux only, Debian's ffmpeg for MP4).
//
// Sinks and Sources are used from one goroutine at a time.
package media

import (
	"context"
	"image"
	"time"
)

// Generated media rates (fixed by the model).
const (
	FPS         = 24    // video frames per second
	SampleRate  = 32000 // audio samples per second per channel
	NumChannels = 2     // stereo
)

// Format describes a generation's output stream.
type Format struct {
	Width, Height int
	FPS           int // frames per second (24)
	Frames        int // total frames that will be written (0 if unknown)
	SampleRate    int // audio samples per second (32000)
	Channels      int // audio channels (2)
}

// Audio is interleaved float PCM in [-1, 1].
type Audio struct {
	Rate, Channels int
	Samples        []float32 // interleaved: frame i, channel c at i*Channels + c
}

// Frames is the number of sample frames (samples per channel).
func (a Audio) Frames() int {
	if a.Channels == 0 {
		return 0
	}
	return len(a.Samples) / a.Channels
}

// Duration is the audio's length.
func (a Audio) Duration() time.Duration {
	if a.Rate == 0 {
		return 0
	}
	return time.Duration(a.Frames()) * time.Second / time.Duration(a.Rate)
}

// Sink receives generated media in presentation order.
type Sink interface {
	// Begin is called once, before anything else.
	Begin(f Format) error
	// WriteFrame appends one video frame (Format size). The sink must not
	// retain img after returning.
	WriteFrame(img *image.RGBA) error
	// WriteAudio appends audio; it may be called any number of times.
	WriteAudio(a Audio) error
	// Close finalises the output and returns the first error. After an
	// error (or Abort), nothing partial is left at the destination.
	Close() error
	// Abort discards everything written so far (a cancelled generation).
	Abort() error
}

// Kind is the kind of a reference input.
type Kind uint8

// Reference kinds.
const (
	KindImage Kind = iota + 1
	KindVideo
	KindAudio
)

func (k Kind) String() string {
	switch k {
	case KindImage:
		return "image"
	case KindVideo:
		return "video"
	case KindAudio:
		return "audio"
	}
	return "unknown"
}

// Info describes a reference input.
type Info struct {
	Kind          Kind
	Width, Height int           // pixels (after orientation), 0 for audio
	FPS           float64       // video frame rate, 0 otherwise
	Frames        int           // video frames, 0 otherwise
	Duration      time.Duration // video or audio length
	HasAudio      bool          // audio file, or video with a sound track
	SampleRate    int           // native audio rate, 0 if no audio
	Channels      int           // native audio channels
	Format        string        // container (FormatPNG, FormatMP4, …)
	Codec         string        // video codec, or audio codec for audio files ("" if unknown)
}

// Source decodes one reference input. Open returns one for any supported
// file; Close releases it.
type Source interface {
	Info() Info
	// Image returns the (first) picture, orientation applied, as opaque
	// RGBA (images and videos).
	Image(ctx context.Context) (*image.RGBA, error)
	// Frames decodes the video's frames in order at their native rate,
	// orientation applied, calling each for every frame until it returns
	// an error or max frames were delivered (max ≤ 0: all). each must not
	// retain frame. Resample to 24 fps with Slots; see ReadVideo.
	Frames(ctx context.Context, max int, each func(i int, frame *image.RGBA) error) error
	// Audio decodes the sound (audio files, video sound tracks) at its
	// native rate and channel count, or fails with ErrNoAudio.
	Audio(ctx context.Context) (Audio, error)
	Close() error
}

// Opener opens a reference file by path.
type Opener func(path string) (Source, error)

func seconds(s float64) time.Duration {
	if !(s > 0) || s > 1e9 {
		return 0
	}
	return time.Duration(s * float64(time.Second))
}
