//go:build linux

package media

import (
	"bytes"
	"context"
	"encoding/binary"
	"image"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func ffmpegMake(t *testing.T, out string, args ...string) {
	t.Helper()
	cmd := exec.Command("ffmpeg", append(append([]string{"-hide_banner", "-loglevel", "error", "-y"}, args...), out)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v: %s", err, b)
	}
}

// rotate90 writes a 90° display matrix into the first track header (the
// video track) of an MP4, as a phone does for a portrait recording.
// (Debian's ffmpeg 5.1 no longer writes one from -metadata rotate.)
func rotate90(t *testing.T, path string) {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(b, []byte("tkhd"))
	if i < 0 || b[i+4] != 0 {
		t.Fatal("no version-0 tkhd box")
	}
	m := b[i+4+40:] // matrix: after version/flags, times, track ID, duration, layer, group, volume
	for k, v := range []uint32{0, 0x00010000, 0, 0xffff0000, 0, 0, 0, 0, 0x40000000} {
		binary.BigEndian.PutUint32(m[4*k:], v)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestFFmpegSources(t *testing.T) {
	needTool(t, "ffmpeg")
	needTool(t, "ffprobe")
	dir := t.TempDir()
	ctx := context.Background()

	// A 30 fps phone-style clip stored landscape with a 90° display rotation, and a sound track.
	vid := filepath.Join(dir, "phone.mp4")
	ffmpegMake(t, vid, "-f", "lavfi", "-i", "testsrc2=size=160x96:rate=30", "-f", "lavfi", "-i", "sine=frequency=300:sample_rate=44100",
		"-t", "1", "-map", "0:v", "-map", "1:a", "-c:v", "libx264", "-pix_fmt", "yuv420p", "-c:a", "aac")
	rotate90(t, vid)
	src, err := Open(vid)
	if err != nil {
		t.Fatal(err)
	}
	info := src.Info()
	if info.Kind != KindVideo || info.Width != 96 || info.Height != 160 || info.FPS != 30 || info.Frames != 30 || !info.HasAudio || info.SampleRate != 44100 {
		t.Errorf("Info = %+v", info)
	}
	frames, rv, err := CollectVideo(ctx, src, 5, RefVideoReference)
	if err != nil {
		t.Fatal(err)
	}
	if len(frames) != 5 || rv.Width != 768 || rv.Height != 1280 || rv.VAEFrames != 5 {
		t.Errorf("normalised %d frames, %+v", len(frames), rv)
	}
	a, err := src.Audio(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p, err := PrepareAudio(a, 22)
	if err != nil || p.Rate != SampleRate || p.Channels != 2 || p.Frames() != (SoundtrackSamples(22, 44100)*320+440)/441 {
		t.Errorf("soundtrack %d Hz %d ch %d frames, %v", p.Rate, p.Channels, p.Frames(), err)
	}

	// An audio-only M4A: kind audio, native rate and channels.
	m4a := filepath.Join(dir, "voice.m4a")
	ffmpegMake(t, m4a, "-f", "lavfi", "-i", "sine=frequency=500:sample_rate=22050", "-t", "2.5", "-c:a", "aac")
	src, err = Open(m4a)
	if err != nil {
		t.Fatal(err)
	}
	if info := src.Info(); info.Kind != KindAudio || info.SampleRate != 22050 || info.Channels != 1 || info.Duration.Seconds() < 2.4 {
		t.Errorf("m4a Info = %+v", info)
	}
	if a, err := src.Audio(ctx); err != nil || a.Rate != 22050 || a.Channels != 1 || a.Duration().Seconds() < 2.4 {
		t.Errorf("m4a audio %d Hz %d ch %v, %v", a.Rate, a.Channels, a.Duration(), err)
	}
	if err := src.Frames(ctx, 0, func(int, *image.RGBA) error { return nil }); err == nil {
		t.Error("frames from a sound file")
	}

	// A truncated MP4 (no moov) names the file and says what is wrong.
	b, _ := os.ReadFile(vid)
	cut := filepath.Join(dir, "cut.mp4")
	os.WriteFile(cut, b[:len(b)/3], 0o644)
	_, err = Open(cut)
	if err == nil {
		src, _ := Open(cut)
		_, err = src.Image(ctx)
	}
	if err == nil || !strings.Contains(err.Error(), "cut.mp4") {
		t.Errorf("truncated MP4: %v", err)
	}
}

// TestFFmpegAudioFiles: the sound files the issue names (AIFF, MP3, M4A/AAC)
// and FLAC/Ogg open by content whatever their name, decode at their native
// rate and channel count and become 32 kHz stereo through PrepareAudio;
// garbage, truncated and empty sound files fail naming the file.
func TestFFmpegAudioFiles(t *testing.T) {
	needTool(t, "ffmpeg")
	needTool(t, "ffprobe")
	dir := t.TempDir()
	ctx := context.Background()
	for _, c := range []struct {
		name, format string
		args         []string
		rate, ch     int
	}{
		{"tone.aiff", FormatAIFF, []string{"-c:a", "pcm_s16be", "-f", "aiff"}, 44100, 2},
		{"tone.mp3", FormatMP3, []string{"-c:a", "libmp3lame", "-b:a", "128k", "-f", "mp3"}, 44100, 2},
		{"tone.m4a", FormatM4A, []string{"-c:a", "aac", "-f", "ipod"}, 48000, 1},
		{"tone.flac", FormatFLAC, []string{"-c:a", "flac", "-f", "flac"}, 16000, 1},
		{"tone.ogg", FormatOgg, []string{"-c:a", "libvorbis", "-f", "ogg"}, 22050, 2},
		{"mislabelled.wav", FormatMP3, []string{"-c:a", "libmp3lame", "-f", "mp3"}, 32000, 1}, // content wins
	} {
		p := filepath.Join(dir, c.name)
		args := append([]string{"-f", "lavfi", "-i", "sine=frequency=440:sample_rate=" + itoa(c.rate), "-t", "3", "-ac", itoa(c.ch)}, c.args...)
		ffmpegMake(t, p, args...)
		src, err := Open(p)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		info := src.Info()
		if info.Kind != KindAudio || info.Format != c.format || info.SampleRate != c.rate || info.Channels != c.ch || info.Duration.Seconds() < 2.9 || info.Duration.Seconds() > 3.2 {
			t.Errorf("%s: info %+v", c.name, info)
		}
		a, err := src.Audio(ctx)
		if err != nil || a.Rate != c.rate || a.Channels != c.ch || a.Duration().Seconds() < 2.9 || a.Duration().Seconds() > 3.2 {
			t.Errorf("%s: audio %d Hz × %d, %v: %v", c.name, a.Rate, a.Channels, a.Duration(), err)
			continue
		}
		// The reference truncates to int(F/24·sr) native samples, then
		// resamples: ceil(n·32000/sr) samples.
		n := 22 * c.rate / 24
		want := (n*SampleRate + c.rate - 1) / c.rate
		out, err := PrepareAudio(a, 22)
		if err != nil || out.Rate != SampleRate || out.Channels != 2 || out.Frames() != want {
			t.Errorf("%s: prepared %d Hz × %d, %d frames (want %d): %v", c.name, out.Rate, out.Channels, out.Frames(), want, err)
		}
		src.Close()
	}

	// Broken sound files: each fails (at Open or when decoded) naming it.
	good, _ := os.ReadFile(filepath.Join(dir, "tone.m4a"))
	empty := filepath.Join(dir, "empty.m4a")
	ffmpegMake(t, empty, "-f", "lavfi", "-i", "anullsrc=r=32000:cl=stereo", "-t", "0", "-c:a", "aac", "-f", "ipod")
	for name, data := range map[string][]byte{
		"garbage.mp3": append([]byte("ID3\x04\x00\x00\x00\x00\x00\x10"), bytes.Repeat([]byte{0x5a, 0xa5, 0x13}, 3000)...),
		"cut.m4a":     good[:len(good)/4],
		"empty.m4a":   nil, // written by ffmpeg above
	} {
		p := filepath.Join(dir, name)
		if data != nil {
			os.WriteFile(p, data, 0o644)
		}
		src, err := Open(p)
		if err == nil {
			_, err = src.Audio(ctx)
		}
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: %v", name, err)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestFFmpegColonNames: a file or folder name with a colon, given as a
// relative path, is a file to ffmpeg, not a protocol ("take:1.mp4" failed
// with "Protocol not found").
func TestFFmpegColonNames(t *testing.T) {
	needTool(t, "ffmpeg")
	needTool(t, "ffprobe")
	dir := t.TempDir()
	wd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	if err := os.Mkdir("takes:2", 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join("takes:2", "take:1.mp4")
	s, err := NewMP4Sink(out, MP4Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Begin(OutputFormat(64, 32, 5)); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		if err := s.WriteFrame(testFrame(64, 32, i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatalf("MP4 into a folder named takes:2: %v", err)
	}
	src, err := Open(out)
	if err != nil {
		t.Fatalf("opening %s: %v", out, err)
	}
	n := 0
	if err := src.Frames(context.Background(), 0, func(int, *image.RGBA) error { n++; return nil }); err != nil || n != 5 {
		t.Errorf("%s: %d frames: %v", out, n, err)
	}
	if _, err := src.Audio(context.Background()); err != nil {
		t.Errorf("%s: sound: %v", out, err)
	}
}
