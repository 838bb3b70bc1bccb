//go:build linux

package media

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"image"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"h3studio/engine/testkit"
)

type probed struct {
	VCodec, ACodec        string
	FrameRate             string
	Frames, W, H          int
	VDur, ADur            float64
	SampleRate, Channels  int
	ColorSpace, Primaries string
}

// ffprobeMP4 reads an MP4 with ffprobe (an independent reader), counting
// decoded frames.
func ffprobeMP4(t testing.TB, path string) probed {
	t.Helper()
	out := testkit.Output(t, "ffprobe", "-v", "error", "-count_frames", "-show_streams", "-of", "json", path)
	var j struct {
		Streams []map[string]any `json:"streams"`
	}
	if err := json.Unmarshal(out, &j); err != nil {
		t.Fatal(err)
	}
	var p probed
	str := func(m map[string]any, k string) string { s, _ := m[k].(string); return s }
	num := func(m map[string]any, k string) float64 {
		switch v := m[k].(type) {
		case string:
			f, _ := strconv.ParseFloat(v, 64)
			return f
		case float64:
			return v
		}
		return 0
	}
	for _, s := range j.Streams {
		switch s["codec_type"] {
		case "video":
			p.VCodec, p.FrameRate = str(s, "codec_name"), str(s, "r_frame_rate")
			p.Frames, p.W, p.H = int(num(s, "nb_read_frames")), int(num(s, "width")), int(num(s, "height"))
			p.VDur = num(s, "duration")
			p.ColorSpace, p.Primaries = str(s, "color_space"), str(s, "color_primaries")
		case "audio":
			p.ACodec, p.ADur = str(s, "codec_name"), num(s, "duration")
			p.SampleRate, p.Channels = int(num(s, "sample_rate")), int(num(s, "channels"))
		}
	}
	return p
}

func testFrame(w, h, i int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			o := img.PixOffset(x, y)
			img.Pix[o], img.Pix[o+1], img.Pix[o+2], img.Pix[o+3] = uint8(x+i*7), uint8(y), uint8(128+i), 255
		}
	}
	return img
}

// modelAudio is what the audio VAE produces for frames frames: 800·A
// samples per channel, A = round(5F/3) (spec §11), a little longer than the
// video for most F.
func modelAudio(frames int) Audio {
	n := 800 * int(math.Round(5*float64(frames)/3))
	a := Audio{Rate: SampleRate, Channels: 2, Samples: make([]float32, 2*n)}
	for i := 0; i < n; i++ {
		v := float32(0.3 * math.Sin(2*math.Pi*440*float64(i)/SampleRate))
		a.Samples[2*i], a.Samples[2*i+1] = v, -v
	}
	return a
}

func writeMP4(t *testing.T, path string, w, h, frames int, a Audio) {
	t.Helper()
	s, err := NewMP4Sink(path, MP4Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Begin(OutputFormat(w, h, frames)); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < frames; i++ {
		if err := s.WriteFrame(testFrame(w, h, i)); err != nil {
			t.Fatal(err)
		}
	}
	// audio in two pieces, as a streaming decoder would deliver it
	half := a.Frames() / 2 * a.Channels
	for _, part := range [][]float32{a.Samples[:half], a.Samples[half:]} {
		if err := s.WriteAudio(Audio{Rate: a.Rate, Channels: a.Channels, Samples: part}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

func noTemps(t *testing.T, dir string) {
	t.Helper()
	if m, _ := filepath.Glob(filepath.Join(dir, ".*part")); len(m) != 0 {
		t.Errorf("temporary files left behind: %v", m)
	}
}

func TestMP4SinkFFprobe(t *testing.T) {
	testkit.Tool(t, "ffmpeg")
	testkit.Tool(t, "ffprobe")
	for _, c := range []struct{ w, h, frames int }{{256, 256, 39}, {96, 64, 22}, {64, 32, 5}} {
		dir := t.TempDir()
		p := filepath.Join(dir, "out.mp4")
		writeMP4(t, p, c.w, c.h, c.frames, modelAudio(c.frames))
		noTemps(t, dir)
		g := ffprobeMP4(t, p)
		want := float64(c.frames) / FPS
		t.Logf("%d×%d %d frames: %+v", c.w, c.h, c.frames, g)
		if g.VCodec != "h264" || g.FrameRate != "24/1" || g.Frames != c.frames || g.W != c.w || g.H != c.h {
			t.Errorf("video stream %+v, want h264 24/1 %d frames %d×%d", g, c.frames, c.w, c.h)
		}
		if g.ACodec != "aac" || g.SampleRate != SampleRate || g.Channels != 2 {
			t.Errorf("audio stream %+v, want aac 32000 Hz 2 ch", g)
		}
		if math.Abs(g.VDur-want) > 1e-3 {
			t.Errorf("video lasts %.4f s, want %.4f", g.VDur, want)
		}
		// AAC works in 1024-sample frames; the muxer's edit list trims the
		// priming, so the sound must end within one frame of the video.
		if math.Abs(g.ADur-g.VDur) > 1024.0/SampleRate {
			t.Errorf("audio lasts %.4f s, video %.4f s", g.ADur, g.VDur)
		}
		if g.ColorSpace != "bt709" || g.Primaries != "bt709" {
			t.Errorf("colour tags %q/%q, want bt709", g.ColorSpace, g.Primaries)
		}
	}
}

func TestMP4SinkRoundTrip(t *testing.T) {
	testkit.Tool(t, "ffmpeg")
	testkit.Tool(t, "ffprobe")
	dir := t.TempDir()
	p := filepath.Join(dir, "clip.mp4")
	// A flat colour survives H.264 closely when the BT.709 matrix is used both ways.
	const w, h, n = 64, 48, 22
	s, err := NewMP4Sink(p, MP4Options{Quality: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Begin(OutputFormat(w, h, n)); err != nil {
		t.Fatal(err)
	}
	flat := image.NewRGBA(image.Rect(0, 0, w, h))
	for i := 0; i < len(flat.Pix); i += 4 {
		flat.Pix[i], flat.Pix[i+1], flat.Pix[i+2], flat.Pix[i+3] = 200, 60, 110, 255
	}
	for i := 0; i < n; i++ {
		if err := s.WriteFrame(flat); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.WriteAudio(modelAudio(n)); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	src, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	info := src.Info()
	if info.Kind != KindVideo || info.Width != w || info.Height != h || info.FPS != 24 || info.Frames != n || !info.HasAudio || info.SampleRate != SampleRate || info.Channels != 2 {
		t.Errorf("Info = %+v", info)
	}
	got := 0
	err = src.Frames(context.Background(), 0, func(i int, f *image.RGBA) error {
		if i == n/2 {
			c := f.Pix[f.PixOffset(w/2, h/2):]
			for k, want := range []uint8{200, 60, 110} {
				if d := int(c[k]) - int(want); d < -3 || d > 3 {
					t.Errorf("decoded colour %v, want ≈ (200, 60, 110)", c[:3])
					break
				}
			}
		}
		got++
		return nil
	})
	if err != nil || got != n {
		t.Errorf("decoded %d frames, %v; want %d", got, err, n)
	}
	a, err := src.Audio(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if a.Rate != SampleRate || a.Channels != 2 || math.Abs(a.Duration().Seconds()-float64(n)/FPS) > 1024.0/SampleRate {
		t.Errorf("audio %d Hz %d ch %v", a.Rate, a.Channels, a.Duration())
	}
}

// beginMP4 opens an MP4 sink on p, begins a 64×32 video of frames frames
// and writes its first frame.
func beginMP4(t *testing.T, p string, frames int) Sink {
	t.Helper()
	s, err := NewMP4Sink(p, MP4Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Begin(OutputFormat(64, 32, frames)); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteFrame(testFrame(64, 32, 0)); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestMP4SinkAbortAndErrors(t *testing.T) {
	testkit.Tool(t, "ffmpeg")
	dir := t.TempDir()
	p := filepath.Join(dir, "x.mp4")
	s := beginMP4(t, p, 5)
	if err := s.WriteFrame(testFrame(32, 32, 0)); err == nil {
		t.Error("a frame of the wrong size was accepted")
	}
	if err := s.Abort(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Errorf("Abort left %s", p)
	}
	noTemps(t, dir)

	// Odd sizes cannot be H.264 4:2:0.
	s, _ = NewMP4Sink(p, MP4Options{})
	if err := s.Begin(OutputFormat(65, 32, 5)); err == nil {
		t.Error("odd width accepted")
	}
	noTemps(t, dir)

	// A destination that cannot be written names the file.
	_, err := NewMP4Sink(filepath.Join(dir, "missing", "x.mp4"), MP4Options{})
	var me *Error
	if !errors.As(err, &me) || me.Path != filepath.Join(dir, "missing", "x.mp4") {
		t.Errorf("missing folder: %v", err)
	}
	if os.Geteuid() != 0 { // root ignores permissions
		ro := filepath.Join(dir, "ro")
		os.Mkdir(ro, 0o555)
		if _, err := NewMP4Sink(filepath.Join(ro, "x.mp4"), MP4Options{}); err == nil {
			t.Error("read-only folder accepted")
		}
	}
}

// TestMP4SinkFFmpegErrorsWithExitZero: ffmpeg exits 0 when it cannot write
// its file on a full disk ("Error writing trailer …: No space left on
// device"); the sink must still fail and leave nothing. A stand-in ffmpeg
// on PATH does exactly that (a real full disk left a truncated, unreadable
// MP4 reported as written).
func TestMP4SinkFFmpegErrorsWithExitZero(t *testing.T) {
	bin := t.TempDir()
	script := "#!/bin/sh\ncat >/dev/null\nfor a; do last=${a#file:}; done\n: > \"$last\"\n" +
		"echo \"Error writing trailer of $last: No space left on device\" >&2\nexit 0\n"
	if err := os.WriteFile(filepath.Join(bin, "ffmpeg"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	dir := t.TempDir()
	p := filepath.Join(dir, "x.mp4")
	s := beginMP4(t, p, 1)
	s.WriteAudio(Audio{Rate: SampleRate, Channels: 2, Samples: make([]float32, 2*1000)})
	if err := s.Close(); err == nil || !strings.Contains(err.Error(), "No space left on device") {
		t.Errorf("Close: %v, want the ffmpeg error", err)
	}
	if names := testkit.Names(dir); len(names) != 0 {
		t.Errorf("a failed MP4 left %v", names)
	}
}

func ffmpegMake(t *testing.T, out string, args ...string) {
	t.Helper()
	testkit.Output(t, "ffmpeg", append(append([]string{"-hide_banner", "-loglevel", "error", "-y"}, args...), out)...)
}

// rotate90 writes a 90° display matrix into the first track header (the
// video track) of an MP4, as a phone does for a portrait recording.
// (Debian's ffmpeg 5.1 no longer writes one from -metadata rotate.)
func rotate90(t *testing.T, path string) {
	b := testkit.ReadFile(t, path)
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
	testkit.Tool(t, "ffmpeg")
	testkit.Tool(t, "ffprobe")
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
	testkit.Tool(t, "ffmpeg")
	testkit.Tool(t, "ffprobe")
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
	testkit.Tool(t, "ffmpeg")
	testkit.Tool(t, "ffprobe")
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
