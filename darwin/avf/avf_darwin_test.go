//go:build darwin

package avf_test

// The AVFoundation media tests, for a Mac (`make parity`; there is none in
// this project's CI, where they are only type-checked). They hold the
// AVFoundation sink and readers to what the Linux ffmpeg ones are held to
// in engine/media (TestMP4SinkFFprobe, TestMP4SinkRoundTrip, TestBadInput).

import (
	"context"
	"errors"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"h3studio/darwin/avf"
	"h3studio/engine/media"
)

func flat(w, h int, c color.RGBA) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for i := 0; i < len(img.Pix); i += 4 {
		img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = c.R, c.G, c.B, 255
	}
	return img
}

func noTemps(t *testing.T, dir string) {
	t.Helper()
	if m, _ := filepath.Glob(filepath.Join(dir, ".*")); len(m) != 0 {
		t.Errorf("temporary files left behind: %v", m)
	}
}

// writeMP4 exports frames frames of w×h and the audio VAE's slightly
// longer sound (800·round(5F/3) samples, spec §11) through the AVFoundation
// sink, in the engine's order (every frame, then the sound).
func writeMP4(t *testing.T, path string, w, h, frames int, c color.RGBA) {
	t.Helper()
	s, err := avf.NewMP4Sink(path, media.MP4Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Begin(media.OutputFormat(w, h, frames)); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < frames; i++ {
		if err := s.WriteFrame(flat(w, h, c)); err != nil {
			t.Fatal(err)
		}
	}
	n := 800 * int(math.Round(5*float64(frames)/3))
	pcm := make([]float32, 2*n)
	for i := range pcm {
		pcm[i] = float32(0.25 * math.Sin(float64(i/2)*2*math.Pi*440/media.SampleRate))
	}
	if err := s.WriteAudio(media.Audio{Rate: media.SampleRate, Channels: 2, Samples: pcm}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestMP4RoundTrip: H.264 at 24 fps with exactly the frames written, AAC
// 32 kHz stereo as long as the video, read back with AVAssetReader (and
// with ffprobe when one is installed, e.g. from Homebrew).
func TestMP4RoundTrip(t *testing.T) {
	for _, c := range []struct{ w, h, frames int }{{256, 256, 39}, {96, 64, 22}, {64, 32, 5}} {
		dir := t.TempDir()
		p := filepath.Join(dir, "out.mp4")
		tint := color.RGBA{R: 200, G: 60, B: 30, A: 255}
		writeMP4(t, p, c.w, c.h, c.frames, tint)
		noTemps(t, dir)

		src, err := avf.OpenMedia(p, media.FormatMP4)
		if err != nil {
			t.Fatal(err)
		}
		info := src.Info()
		want := time.Duration(c.frames) * time.Second / 24
		if info.Kind != media.KindVideo || info.Width != c.w || info.Height != c.h || math.Abs(info.FPS-24) > 0.01 ||
			info.Frames != c.frames || !info.HasAudio || info.SampleRate != media.SampleRate || info.Channels != 2 {
			t.Errorf("%dx%d×%d: info %+v", c.w, c.h, c.frames, info)
		}
		if d := info.Duration - want; d < -time.Millisecond || d > time.Millisecond {
			t.Errorf("%dx%d×%d: duration %v, want %v", c.w, c.h, c.frames, info.Duration, want)
		}
		n := 0
		err = src.Frames(context.Background(), 0, func(i int, f *image.RGBA) error {
			if i == 0 {
				px := f.RGBAAt(c.w/2, c.h/2)
				for k, pair := range [][2]uint8{{px.R, tint.R}, {px.G, tint.G}, {px.B, tint.B}} {
					if d := int(pair[0]) - int(pair[1]); d < -3 || d > 3 {
						t.Errorf("%dx%d: channel %d reads back %d, wrote %d (BT.709 round trip)", c.w, c.h, k, pair[0], pair[1])
					}
				}
			}
			n++
			return nil
		})
		if err != nil || n != c.frames {
			t.Errorf("%dx%d×%d: decoded %d frames: %v", c.w, c.h, c.frames, n, err)
		}
		a, err := src.Audio(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		// The video's length to 1 ms (the Linux test's bound): AVAssetReader
		// applies the AAC priming and end trims the writer records.
		if wantN := media.AudioSamplesFor(c.frames, media.SampleRate); a.Rate != media.SampleRate || a.Channels != 2 || a.Frames() < wantN-32 || a.Frames() > wantN+32 {
			t.Errorf("%dx%d×%d: sound %d Hz × %d, %d samples, want %d (the video's length)", c.w, c.h, c.frames,
				a.Rate, a.Channels, a.Frames(), wantN)
		}
		src.Close()

		if fp, err := exec.LookPath("ffprobe"); err == nil {
			out, err := exec.Command(fp, "-v", "error", "-count_frames", "-show_entries",
				"stream=codec_name,r_frame_rate,nb_read_frames,sample_rate,channels,color_primaries", "-of", "compact", p).CombinedOutput()
			s := string(out)
			if err != nil || !strings.Contains(s, "codec_name=h264") || !strings.Contains(s, "r_frame_rate=24/1") ||
				!strings.Contains(s, "codec_name=aac") || !strings.Contains(s, "sample_rate=32000") || !strings.Contains(s, "channels=2") ||
				!strings.Contains(s, "color_primaries=bt709") {
				t.Errorf("ffprobe: %v\n%s", err, s)
			}
		}
	}
}

// TestMP4Errors: Abort and a refused frame leave nothing; odd sizes and a
// missing folder are refused naming the file.
func TestMP4Errors(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "x.mp4")
	s, err := avf.NewMP4Sink(p, media.MP4Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Begin(media.OutputFormat(64, 32, 5)); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteFrame(flat(64, 32, color.RGBA{A: 255})); err != nil {
		t.Fatal(err)
	}
	if err := s.Abort(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Errorf("Abort left %s", p)
	}
	noTemps(t, dir)

	s, _ = avf.NewMP4Sink(p, media.MP4Options{})
	s.Begin(media.OutputFormat(64, 32, 5))
	s.WriteFrame(flat(64, 32, color.RGBA{A: 255}))
	if err := s.WriteFrame(flat(32, 32, color.RGBA{A: 255})); err == nil {
		t.Error("a frame of the wrong size was accepted")
	}
	if err := s.Close(); err == nil {
		t.Error("Close saved the take after a refused frame")
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Errorf("Close after a refused frame left %s", p)
	}
	noTemps(t, dir)

	s, _ = avf.NewMP4Sink(p, media.MP4Options{})
	if err := s.Begin(media.OutputFormat(65, 32, 5)); err == nil {
		t.Error("odd width accepted")
	}
	noTemps(t, dir)

	_, err = avf.NewMP4Sink(filepath.Join(dir, "missing", "x.mp4"), media.MP4Options{})
	var me *media.Error
	if !errors.As(err, &me) || !strings.Contains(err.Error(), "missing") {
		t.Errorf("missing folder: %v", err)
	}
}

// TestOpenBroken: damaged files fail naming the file, without crashing.
func TestOpenBroken(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.mp4")
	writeMP4(t, good, 64, 64, 22, color.RGBA{G: 200, A: 255})
	b, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(dir, "cut.mp4")
	os.WriteFile(cut, b[:len(b)/3], 0o644)
	garbage := filepath.Join(dir, "garbage.m4a")
	os.WriteFile(garbage, append([]byte("\x00\x00\x00\x18ftypM4A \x00\x00\x00\x00"), make([]byte, 4000)...), 0o644)
	for _, p := range []string{cut, garbage} {
		src, err := avf.OpenMedia(p, media.FormatMP4)
		if err == nil {
			_, err = src.Audio(context.Background())
			if err == nil {
				err = src.Frames(context.Background(), 0, func(int, *image.RGBA) error { return nil })
			}
		}
		if err == nil || !strings.Contains(err.Error(), filepath.Base(p)) {
			t.Errorf("%s: %v", filepath.Base(p), err)
		}
	}
}

// TestImageIO: ImageIO decodes a PNG as the pure-Go decoder does (an
// untagged PNG is sRGB: the same bytes).
func TestImageIO(t *testing.T) {
	p := filepath.Join(t.TempDir(), "a.png")
	img := image.NewNRGBA(image.Rect(0, 0, 37, 21))
	for i := range img.Pix {
		img.Pix[i] = uint8(i * 7)
	}
	for i := 3; i < len(img.Pix); i += 4 {
		img.Pix[i] = 255
	}
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := png.Encode(f, img); err != nil {
		t.Fatal(err)
	}
	f.Close()
	want, err := media.ReadImageFile(p)
	if err != nil {
		t.Fatal(err)
	}
	src, err := avf.OpenImage(p, media.FormatPNG)
	if err != nil {
		t.Fatal(err)
	}
	got, err := src.Image(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got.Bounds() != want.Bounds() {
		t.Fatalf("ImageIO %v, pure Go %v", got.Bounds(), want.Bounds())
	}
	for i := range want.Pix {
		if d := int(got.Pix[i]) - int(want.Pix[i]); d < -1 || d > 1 {
			t.Fatalf("byte %d: ImageIO %d, pure Go %d", i, got.Pix[i], want.Pix[i])
		}
	}
}
