package layout

import (
	"fmt"
	"math"
)

// Released temporal constants (spec H3-DIT.md §5.1–5.2).
const (
	// FPS is the fixed video frame rate.
	FPS = 24
	// AudioLatentRate is the audio VAE's latent rate: 32 kHz / hop 800.
	AudioLatentRate = 40
	// AudioChannels is the number of stereo channels packed channel-major.
	AudioChannels = 2
	// FramesPerChunk and LatentsPerChunk are the video VAE's temporal
	// chunking: 17 pixel frames per clip, 5 latents kept per clip, so legal
	// frame counts are 17n+5 and latent counts 5n+2.
	FramesPerChunk  = 17
	LatentsPerChunk = 5

	// MinFrames and MaxFrames bound aligned frame counts (5 … 362, i.e. up
	// to 15.1 s); MinGenerateFrames is the smallest count that fills one
	// trained decoder chunk (h3.c refuses to generate below it).
	MinFrames         = 5
	MinGenerateFrames = 22
	MaxFrames         = 362
)

// AlignFrames rounds a requested frame count up to the next legal count
// 17n+5 (n ≥ 0), as the reference's align_num_frames does; counts below 5
// become 5. It fails for counts below 1.
func AlignFrames(requested int) (int, error) {
	if requested < 1 {
		return 0, fmt.Errorf("layout: frame count %d: must be at least 1", requested)
	}
	if requested < MinFrames {
		return MinFrames, nil
	}
	r := (requested - LatentsPerChunk) % FramesPerChunk
	if r == 0 {
		return requested, nil
	}
	return requested + FramesPerChunk - r, nil
}

// IsAligned reports whether f is a legal frame count 17n+5.
func IsAligned(f int) bool { return f >= MinFrames && (f-LatentsPerChunk)%FramesPerChunk == 0 }

// FramesFromSeconds converts a duration to an aligned frame count the way
// h3.c's --seconds does: round(24·s) with halves away from zero, then
// AlignFrames (10 s → 240 → 243 frames).
func FramesFromSeconds(seconds float64) (int, error) {
	if math.IsNaN(seconds) || math.IsInf(seconds, 0) || seconds <= 0 {
		return 0, fmt.Errorf("layout: duration %v s: must be a positive number of seconds", seconds)
	}
	f := seconds * FPS
	if f > float64(MaxFrames)*1000 {
		return 0, fmt.Errorf("layout: duration %v s: far beyond the %d-frame limit", seconds, MaxFrames)
	}
	n := int(math.Round(f))
	if n < 1 {
		return 0, fmt.Errorf("layout: duration %v s: shorter than one frame at %d fps", seconds, FPS)
	}
	return AlignFrames(n)
}

// Seconds is the duration of f frames at 24 fps.
func Seconds(f int) float64 { return float64(f) / FPS }

// LatentFrames is the number of video latent frames of an aligned frame count:
// 5n+2 for 17n+5 (2 for 5 frames). It fails on an unaligned count.
func LatentFrames(f int) (int, error) {
	if !IsAligned(f) {
		return 0, fmt.Errorf("layout: frame count %d is not of the form 17n+5", f)
	}
	return (f-LatentsPerChunk)/FramesPerChunk*LatentsPerChunk + 2, nil
}

// AudioLatents is the number of audio latents per stereo channel covering f
// frames: round(f/24·40) with Python's rounding (halves to even), as the
// reference's audio_latent_num_frames computes it. For legal f it equals
// h3.c's llround(40f/24) (5f/3 is never a half).
func AudioLatents(f int) int {
	return int(math.RoundToEven(float64(f) / FPS * AudioLatentRate))
}

// AudioSamples is the waveform length per channel of a audio latents at the
// released hop of 800 samples.
func AudioSamples(a int) int { return a * 800 }

// Temporal is the temporal geometry of a request.
type Temporal struct {
	Frames       int // aligned pixel frames, 17n+5
	LatentFrames int // 5n+2
	AudioLatents int // per stereo channel
}

// TemporalFor aligns a requested frame count and derives the latent counts.
// It fails when the aligned count exceeds MaxFrames.
func TemporalFor(requested int) (Temporal, error) {
	f, err := AlignFrames(requested)
	if err != nil {
		return Temporal{}, err
	}
	if f > MaxFrames {
		return Temporal{}, fmt.Errorf("layout: %d frames align to %d, beyond the released maximum of %d (%.1f s)", requested, f, MaxFrames, Seconds(MaxFrames))
	}
	t, _ := LatentFrames(f)
	return Temporal{Frames: f, LatentFrames: t, AudioLatents: AudioLatents(f)}, nil
}

// ReferenceVideoFrames is how many leading frames of an f-frame reference
// video (already resampled to 24 fps and cut to the target length) the
// reference hands to the video VAE: max(1, (f−5)/17)·17 + 5, which keeps all
// f frames when f < 22 (the VAE then pads with the last frame; ERRATA F7).
func ReferenceVideoFrames(f int) int {
	m := (f - LatentsPerChunk) / FramesPerChunk
	if m < 1 {
		m = 1
	}
	if n := m*FramesPerChunk + LatentsPerChunk; n < f {
		return n
	}
	return f
}
