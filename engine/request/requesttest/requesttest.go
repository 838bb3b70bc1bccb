// Package requesttest writes the input files a request names (keyframe and
// reference pictures, sounds and videos) for tests.
package requesttest

import (
	"bytes"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"testing"

	"h3studio/engine/media"
)

// Picture is a w×h test picture whose bytes count up by 7, so every
// channel differs from its neighbours.
func Picture(w, h int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = uint8(i * 7)
	}
	return img
}

// WritePNG writes img as a PNG file at path and returns path.
func WritePNG(t testing.TB, path string, img image.Image) string {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatalf("requesttest: encoding %s: %v", path, err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// WriteWAV writes a as a 16-bit PCM WAV file at path and returns path.
func WriteWAV(t testing.TB, path string, a media.Audio) string {
	t.Helper()
	if err := media.WriteWAVFile(path, a, media.PCM16); err != nil {
		t.Fatal(err)
	}
	return path
}

// WriteVideo writes a small MP4 with ffmpeg (a Linux test dependency, as
// in the media package's own tests): seconds of a 32×32 test pattern at
// 25 fps, with a stereo tone unless silent. Without ffmpeg the test is
// skipped.
func WriteVideo(t testing.TB, path string, seconds float64, silent bool) string {
	t.Helper()
	ff, err := exec.LookPath("ffmpeg")
	if err != nil {
		t.Skip("reference-video tests need Debian's ffmpeg (make deps)")
	}
	args := []string{"-v", "error", "-y", "-f", "lavfi", "-i", fmt.Sprintf("testsrc=size=32x32:rate=25:duration=%g", seconds)}
	if !silent {
		args = append(args, "-f", "lavfi", "-i", fmt.Sprintf("sine=frequency=330:sample_rate=44100:duration=%g", seconds), "-ac", "2", "-c:a", "aac")
	}
	args = append(args, "-c:v", "libx264", "-pix_fmt", "yuv420p", "-shortest", path)
	if out, err := exec.Command(ff, args...).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v: %s", err, out)
	}
	return path
}
