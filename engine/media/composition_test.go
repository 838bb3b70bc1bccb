package media

import (
	"math"
	"testing"
)

func constSound(frames int, v float32) Audio {
	n := AudioSamplesFor(frames, SampleRate)
	a := Audio{Rate: SampleRate, Channels: 2, Samples: make([]float32, 2*n)}
	for i := range a.Samples {
		a.Samples[i] = v
	}
	return a
}

// TestCompositionMix: a crossfade's ramps sum to 1 on every sample (two
// equal constant sounds mix to that constant throughout), a muted clip is
// silent, the extra track is added at its gain, and the sound lasts
// exactly as long as the frames.
func TestCompositionMix(t *testing.T) {
	c := Composition{Clips: []CompClip{
		{Path: "a", In: 6, Len: 30, Fade: 12},
		{Path: "b", In: 0, Len: 30, Fade: 100}, // clamped: the next clip lasts 10
		{Path: "c", In: 3, Len: 10, Mute: true},
	}}
	if f := c.Fades(); f[0] != 12 || f[1] != 10 || f[2] != 0 {
		t.Fatalf("fades %v", f)
	}
	if n := c.Frames(); n != 30+30+10-12-10 {
		t.Fatalf("frames %d", n)
	}
	m := c.Mix([]Audio{constSound(48, 0.5), constSound(48, 0.5), constSound(48, 0.9)}, Audio{})
	if m.Frames() != AudioSamplesFor(c.Frames(), SampleRate) {
		t.Fatalf("mix lasts %d samples, frames %d", m.Frames(), c.Frames())
	}
	starts, _ := c.Starts()
	bEnd := AudioSamplesFor(starts[2], SampleRate) // where the fade into the muted clip starts
	for s := 0; s < bEnd; s++ {
		if v := m.Samples[2*s]; math.Abs(float64(v)-0.5) > 1e-5 {
			t.Fatalf("sample %d = %v, want 0.5 (ramps must sum to 1)", s, v)
		}
	}
	// into the muted clip: b fades out to (almost) silence on the last sample
	last := m.Samples[2*(m.Frames()-1)]
	if last > 1e-3 || last <= 0 {
		t.Errorf("the muted clip sounds: %v", last)
	}
	c.Sound = &CompSound{Path: "x", Gain: 0.5}
	m2 := c.Mix([]Audio{constSound(48, 0.5), constSound(48, 0.5), {}}, constSound(200, 0.8))
	if v := m2.Samples[0]; math.Abs(float64(v)-0.9) > 1e-5 {
		t.Errorf("with the extra track at gain 0.5: %v, want 0.9", v)
	}
	c.Sound.Gain = 4
	if v := c.Mix([]Audio{constSound(48, 0.5)}, constSound(200, 0.8)).Samples[0]; v != 1 {
		t.Errorf("the mix is not clipped: %v", v)
	}
}

func TestCompositionFrameAt(t *testing.T) {
	c := Composition{Clips: []CompClip{{Path: "a", In: 6, Len: 30, Fade: 12}, {Path: "b", In: 2, Len: 30}}}
	cases := []struct {
		t    int
		want FrameMix
	}{
		{0, FrameMix{A: 0, FA: 6, B: -1}},
		{17, FrameMix{A: 0, FA: 23, B: -1}},
		{18, FrameMix{A: 0, FA: 24, B: 1, FB: 2, Num: 1, Den: 13}},
		{29, FrameMix{A: 0, FA: 35, B: 1, FB: 13, Num: 12, Den: 13}},
		{30, FrameMix{A: 1, FA: 14, B: -1}},
		{47, FrameMix{A: 1, FA: 31, B: -1}},
	}
	for _, k := range cases {
		if m, ok := c.FrameAt(k.t); !ok || m != k.want {
			t.Errorf("FrameAt(%d) = %+v %v, want %+v", k.t, m, ok, k.want)
		}
	}
	if _, ok := c.FrameAt(48); ok {
		t.Error("FrameAt(48) is inside")
	}
}
