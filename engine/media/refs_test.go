package media

import (
	"context"
	"errors"
	"image"
	"strings"
	"testing"
	"time"
)

func img(w, h int) Info { return Info{Kind: KindImage, Width: w, Height: h} }
func vid(s float64) Info {
	return Info{Kind: KindVideo, Width: 1280, Height: 720, FPS: 24, Duration: time.Duration(s * float64(time.Second)), HasAudio: true}
}
func snd(s float64) Info {
	return Info{Kind: KindAudio, Duration: time.Duration(s * float64(time.Second)), HasAudio: true, SampleRate: 44100, Channels: 2}
}
func silent(i Info) Info { i.HasAudio = false; return i }

func TestCheckReferences(t *testing.T) {
	many := func(n int, r Ref) []Ref {
		out := make([]Ref, n)
		for i := range out {
			out[i] = r
		}
		return out
	}
	pic := Ref{Kind: KindImage, Path: "a.png", Info: img(800, 600)}
	for _, c := range []struct {
		name     string
		refs     []Ref
		keyframe bool
		want     []string // substrings of the problems, in order; nil = valid
	}{
		{"ok", []Ref{pic, {Kind: KindVideo, Path: "v.mp4", Info: vid(5), Soundtrack: true}, {Kind: KindAudio, Path: "s.wav", Info: snd(4)}}, false, nil},
		{"keyframes", []Ref{pic}, true, []string{"cannot be combined with a first or last frame"}},
		{"10 images", many(10, pic), false, []string{"at most 9 picture references, got 10"}},
		{"4 videos", many(4, Ref{Kind: KindVideo, Path: "v.mp4", Info: vid(3)}), false, []string{"at most 3 video references, got 4"}},
		{"video too short", []Ref{{Kind: KindVideo, Path: "short.mp4", Info: vid(1.5)}}, false, []string{"reference 1 (short.mp4): reference videos must be 2.0 s–15.0 s long; this one is 1.5 s"}},
		{"video too long", []Ref{{Kind: KindVideo, Path: "long.mov", Info: vid(16)}}, false, []string{"(long.mov): reference videos must be 2.0 s–15.0 s long; this one is 16.0 s"}},
		{"videos total", many(2, Ref{Kind: KindVideo, Path: "v.mp4", Info: vid(8)}), false, []string{"reference videos may last 15.0 s in total; these last 16.0 s"}},
		{"audio only", []Ref{{Kind: KindAudio, Path: "s.wav", Info: snd(3)}}, false, []string{"needs at least one picture or video"}},
		{"4 clips", append([]Ref{pic}, many(4, Ref{Kind: KindAudio, Path: "s.wav", Info: snd(3)})...), false, []string{"at most 3 audio clips, got 4"}},
		{"audio total", append([]Ref{pic}, many(2, Ref{Kind: KindAudio, Path: "s.wav", Info: snd(9)})...), false, []string{"audio clips may last 15.0 s in total; these last 18.0 s"}},
		{"clip short", []Ref{pic, {Kind: KindAudio, Path: "blip.wav", Info: snd(0.5)}}, false, []string{"(blip.wav): audio clips must be 2.0 s–15.0 s"}},
		{"wrong kind", []Ref{{Kind: KindImage, Path: "song.wav", Info: snd(3)}}, false, []string{"(song.wav): is a sound file, but was given as picture reference"}},
		{"no soundtrack", []Ref{{Kind: KindVideo, Path: "mute.mp4", Info: silent(vid(3)), Soundtrack: true}}, false, []string{"(mute.mp4): has no sound track"}},
		{"video+audio pair", []Ref{{Kind: KindVideo, Path: "v.mp4", Info: vid(3), AudioPath: "voice.m4a", AudioInfo: snd(1)}}, false, []string{"(voice.m4a): audio clips must be 2.0 s–15.0 s"}},
		{"13 files", append(many(9, pic), many(3, Ref{Kind: KindVideo, Path: "v.mp4", Info: vid(3), AudioPath: "a.wav", AudioInfo: snd(2)})...), false, []string{"at most 12 reference files in all, got 15"}},
		{"wide picture", []Ref{{Kind: KindImage, Path: "pano.jpg", Info: img(5000, 1000)}}, false, []string{"(pano.jpg): pictures must be between 1:4 and 4:1; this one is 5000×1000"}},
	} {
		err := CheckReferences(c.refs, c.keyframe, DefaultLimits)
		if c.want == nil {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
			continue
		}
		var re *RefError
		if !errors.As(err, &re) {
			t.Errorf("%s: got %v, want a RefError", c.name, err)
			continue
		}
		msg := err.Error()
		for _, w := range c.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: %q lacks %q", c.name, msg, w)
			}
		}
		// Every rule a user can break through the app comes with its fix
		// (the studio shows it beside the problem).
		for _, p := range re.Problems {
			if p.Fix == "" && !strings.Contains(p.Rule, "but was given as") && !strings.Contains(p.Rule, "unknown reference kind") {
				t.Errorf("%s: rule %q has no fix", c.name, p.Rule)
			}
		}
	}
}

// fakeVideo is a Source of n solid frames at fps; frame i has red = i.
type fakeVideo struct {
	n, w, h int
	fps     float64
	decoded int
}

func (f *fakeVideo) Info() Info {
	return Info{Kind: KindVideo, Width: f.w, Height: f.h, FPS: f.fps, Frames: f.n}
}
func (f *fakeVideo) Image(ctx context.Context) (*image.RGBA, error) { return nil, nil }
func (f *fakeVideo) Audio(context.Context) (Audio, error)           { return Audio{}, ErrNoAudio }
func (f *fakeVideo) Close() error                                   { return nil }
func (f *fakeVideo) Frames(ctx context.Context, max int, each func(int, *image.RGBA) error) error {
	for i := 0; i < f.n && (max <= 0 || i < max); i++ {
		m := image.NewRGBA(image.Rect(0, 0, f.w, f.h))
		for k := 0; k < len(m.Pix); k += 4 {
			m.Pix[k], m.Pix[k+3] = uint8(i), 255
		}
		f.decoded++
		if err := each(i, m); err != nil {
			return err
		}
	}
	return nil
}

func TestNormalizeVideo(t *testing.T) {
	// 30 fps, 40 frames → 32 frames at 24 fps; target 22 truncates.
	src := &fakeVideo{n: 40, w: 64, h: 36, fps: 30}
	frames, rv, err := CollectVideo(context.Background(), src, 22, RefVideoReference)
	if err != nil {
		t.Fatal(err)
	}
	if rv.Width != 1344 || rv.Height != 768 || rv.Frames != 22 || rv.VAEFrames != 22 || len(frames) != 22 {
		t.Fatalf("RefVideo = %+v, %d frames", rv, len(frames))
	}
	want := Slots(40, 30)[:22]
	for i, f := range frames {
		if got := int(f.Pix[0]); got != want[i] {
			t.Errorf("frame %d shows source %d, want %d", i, got, want[i])
		}
	}
	if src.decoded > 30 {
		t.Errorf("decoded %d source frames for 22 outputs (should stop early)", src.decoded)
	}
	// Short video: all frames kept, VAE prefix 17m+5.
	frames, rv, err = CollectVideo(context.Background(), &fakeVideo{n: 100, w: 64, h: 36, fps: 24}, 124, RefVideoH3C)
	if err != nil || rv.Frames != 100 || rv.VAEFrames != 90 || rv.Width != 64 || rv.Height != 32 || len(frames) != 100 {
		t.Errorf("short video: %+v, %v", rv, err)
	}
}
