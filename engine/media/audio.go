package media

import (
	"fmt"
	"math"
)

// Resample converts a to rate with the band-limited sinc interpolation of
// torchaudio's Resample in its default configuration (the reference's one
// resampling pass, spec §10.5, ERRATA F8): Hann-windowed sinc, 6 zero
// crossings (lowpass_filter_width), rolloff 0.99, rates reduced by their
// gcd, kernel computed in float64 (the phase p/new in float32, as torch
// does) and stored as float32, output length
// ⌈new·n/orig⌉. Accumulation is in float64 (torchaudio's conv1d uses
// float32), so results agree to rounding (docs/media.md gives the measured
// difference). Channels are resampled independently.
func Resample(a Audio, rate int) Audio {
	if a.Rate == rate || a.Channels == 0 || a.Frames() == 0 {
		return a
	}
	g := gcd(a.Rate, rate)
	orig, nw := a.Rate/g, rate/g
	const lpw = 6.0
	const rolloff = 0.99
	base := float64(min(orig, nw)) * rolloff
	width := int(math.Ceil(lpw * float64(orig) / base))
	taps := 2*width + orig
	kernel := make([]float32, nw*taps)
	scale := base / float64(orig)
	for p := 0; p < nw; p++ {
		// torchaudio divides the integer phase by new in float32 (torch's
		// default dtype) before adding the float64 tap offsets.
		phase := float64(-float32(p) / float32(nw))
		for k := 0; k < taps; k++ {
			t := (phase + float64(k-width)/float64(orig)) * base
			t = math.Max(-lpw, math.Min(lpw, t))
			win := math.Cos(t * math.Pi / lpw / 2)
			win *= win
			t *= math.Pi
			v := 1.0
			if t != 0 {
				v = math.Sin(t) / t
			}
			kernel[p*taps+k] = float32(v * (win * scale))
		}
	}
	n := a.Frames()
	outN := int((int64(nw)*int64(n) + int64(orig) - 1) / int64(orig))
	ch := a.Channels
	out := Audio{Rate: rate, Channels: ch, Samples: make([]float32, outN*ch)}
	for c := 0; c < ch; c++ {
		for o := 0; o < outN; o++ {
			j, p := o/nw, o%nw
			start := j*orig - width // input index of tap 0
			kr := kernel[p*taps : (p+1)*taps]
			k0, k1 := max(0, -start), min(taps, n-start)
			s := 0.0
			for k := k0; k < k1; k++ {
				s += float64(a.Samples[(start+k)*ch+c]) * float64(kr[k])
			}
			out.Samples[o*ch+c] = float32(s)
		}
	}
	return out
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// Truncate keeps the first frames sample frames of a (all of it when it is
// shorter).
func (a Audio) Truncate(frames int) Audio {
	if frames < a.Frames() {
		a.Samples = a.Samples[:frames*a.Channels]
	}
	return a
}

// Stereo returns a as two channels: mono is duplicated (as the reference
// does), stereo is returned as is, and more channels keep their first two
// (front left and right in WAV, AIFF and AAC channel order). The reference
// refuses more than two channels; H3 Studio takes the front pair instead.
func (a Audio) Stereo() Audio {
	switch a.Channels {
	case 2, 0:
		return a
	}
	n := a.Frames()
	out := Audio{Rate: a.Rate, Channels: 2, Samples: make([]float32, 2*n)}
	for i := 0; i < n; i++ {
		l := a.Samples[i*a.Channels]
		r := l
		if a.Channels > 1 {
			r = a.Samples[i*a.Channels+1]
		}
		out.Samples[2*i], out.Samples[2*i+1] = l, r
	}
	return out
}

// PrepareAudio normalises a reference audio clip or soundtrack for a
// generation of frames frames, in the reference's order (ERRATA F8):
// truncate at the native rate to int(frames/24·rate) samples, make stereo,
// resample once to 32 kHz. frames ≤ 0 keeps the whole clip.
func PrepareAudio(a Audio, frames int) (Audio, error) {
	if a.Rate <= 0 || a.Channels <= 0 {
		return Audio{}, fmt.Errorf("media: audio has no rate or channels (%d Hz, %d ch)", a.Rate, a.Channels)
	}
	if frames > 0 {
		a = a.Truncate(SoundtrackSamples(frames, a.Rate))
	}
	if a.Frames() == 0 {
		return Audio{}, fmt.Errorf("media: audio has no samples")
	}
	return Resample(a.Stereo(), SampleRate), nil
}
