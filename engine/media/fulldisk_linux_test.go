//go:build linux

package media

import (
	"errors"
	"fmt"
	"image"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"h3studio/engine/testkit"
)

// TestFullDisk runs every file sink where writes start failing part-way
// (a full disk, simulated in a child process by RLIMIT_FSIZE: a write past
// 128 KB fails with EFBIG, and the ffmpeg it starts is stopped the same
// way). Each sink must fail with an error naming its destination and leave
// nothing behind: no output, no temporary file, no folder it created.
func TestFullDisk(t *testing.T) {
	if dir := os.Getenv("H3_MEDIA_FULLDISK"); dir != "" {
		fullDiskChild(t, dir)
		return
	}
	dir := t.TempDir()
	out := testkit.RunChild(t, "TestFullDisk", "H3_MEDIA_FULLDISK", dir)
	t.Logf("child:\n%s", out)
	if names := testkit.Names(dir); len(names) != 0 {
		t.Errorf("left behind after failed writes: %v", names)
	}
}

func fullDiskChild(t *testing.T, dir string) {
	const limit = 128 << 10
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: limit, Max: limit}); err != nil {
		t.Skipf("SKIP: cannot limit the file size here: %v", err)
	}
	noise := func(w, h int, seed int64) *image.RGBA { // incompressible frames
		r := rand.New(rand.NewSource(seed))
		img := image.NewRGBA(image.Rect(0, 0, w, h))
		r.Read(img.Pix)
		for i := 3; i < len(img.Pix); i += 4 {
			img.Pix[i] = 255
		}
		return img
	}
	// run writes frames and 10 s of sound into s, then closes it; it
	// returns the first error (the sink has already cleaned up after it).
	run := func(s Sink, w, h, frames int) error {
		if err := s.Begin(OutputFormat(w, h, frames)); err != nil {
			return err
		}
		for i := 0; i < frames; i++ {
			if err := s.WriteFrame(noise(w, h, int64(i))); err != nil {
				return err
			}
		}
		sec := make([]float32, 2*SampleRate)
		for i := range sec {
			sec[i] = float32(i%97)/97 - 0.5
		}
		for i := 0; i < 10; i++ {
			if err := s.WriteAudio(Audio{Rate: SampleRate, Channels: 2, Samples: sec}); err != nil {
				return err
			}
		}
		return s.Close()
	}
	check := func(what, dest string, err error) {
		t.Helper()
		var me *Error
		switch {
		case err == nil:
			t.Errorf("%s: no error although writes failed", what)
		case !errors.As(err, &me) || !strings.Contains(err.Error(), filepath.Base(dest)):
			t.Errorf("%s: error does not name %s: %v", what, dest, err)
		default:
			t.Logf("%s: %v", what, err)
		}
	}

	wav := filepath.Join(dir, "take.wav")
	s, err := NewWAVSink(wav, PCM16)
	if err != nil {
		t.Fatal(err)
	}
	check("WAV", wav, run(s, 64, 64, 1))

	frames := filepath.Join(dir, "frames")
	s, err = NewFrameSink(frames)
	if err != nil {
		t.Fatal(err)
	}
	check("PNG frames", frames, run(s, 320, 240, 3))

	// The MP4 checks need ffmpeg (without it the child skips here, after the
	// other sinks' checks).
	testkit.Tool(t, "ffmpeg")
	// 4 s of 320×240 noise overflow the video pass (≈ 276 KB at its bit
	// rate); 10 s of 64×64 (≈ 37 KB) fit there and overflow when the 10 s
	// of sound (AAC, ≈ 240 KB) are muxed in.
	for _, c := range []struct{ w, h, n int }{{320, 240, 96}, {64, 64, 240}} {
		mp4 := filepath.Join(dir, "take.mp4")
		s, err = NewMP4Sink(mp4, MP4Options{Quality: 1})
		if err != nil {
			t.Fatal(err)
		}
		check(fmt.Sprintf("MP4, %d×%d × %d frames", c.w, c.h, c.n), mp4, run(s, c.w, c.h, c.n))
	}
}
