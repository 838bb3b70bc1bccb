//go:build linux

package sequence

import (
	"context"
	"encoding/json"
	"errors"
	"image"
	"math"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"h3studio/engine/media"
	"h3studio/ui/internal/uitest"
)

// writeSource writes an MP4 of n frames made by frame(i), with a sine of hz
// as its sound.
func writeSource(t *testing.T, path string, w, h, n int, hz float64, frame func(i int) *image.RGBA) {
	t.Helper()
	s, err := media.NewMP4Sink(path, media.MP4Options{Quality: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Begin(media.OutputFormat(w, h, n)); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if err := s.WriteFrame(frame(i)); err != nil {
			t.Fatal(err)
		}
	}
	k := media.AudioSamplesFor(n, media.SampleRate)
	a := media.Audio{Rate: media.SampleRate, Channels: 2, Samples: make([]float32, 2*k)}
	for i := 0; i < k; i++ {
		v := float32(0.5 * math.Sin(2*math.Pi*hz*float64(i)/media.SampleRate))
		a.Samples[2*i], a.Samples[2*i+1] = v, v
	}
	if err := s.WriteAudio(a); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// bars is a w×h frame whose left half is level a and right half level b,
// in one colour channel.
func bars(w, h, ch int, a, b uint8) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			o := img.PixOffset(x, y)
			v := a
			if x >= w/2 {
				v = b
			}
			img.Pix[o+ch] = v
			img.Pix[o+3] = 255
		}
	}
	return img
}

func decodeAll(t *testing.T, path string) []*image.RGBA {
	t.Helper()
	src, err := media.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var out []*image.RGBA
	err = src.Frames(context.Background(), 0, func(i int, f *image.RGBA) error {
		c := image.NewRGBA(f.Rect)
		copy(c.Pix, f.Pix)
		out = append(out, c)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// meanDiff is the mean absolute difference of two frames' RGB values.
func meanDiff(a, b *image.RGBA) float64 {
	var s float64
	n := 0
	for i := range a.Pix {
		if i%4 == 3 {
			continue
		}
		s += math.Abs(float64(a.Pix[i]) - float64(b.Pix[i]))
		n++
	}
	return s / float64(n)
}

type probedStream struct {
	CodecType  string `json:"codec_type"`
	CodecName  string `json:"codec_name"`
	SampleRate string `json:"sample_rate"`
	Channels   int    `json:"channels"`
	RFrameRate string `json:"r_frame_rate"`
	Duration   string `json:"duration"`
	Frames     string `json:"nb_read_frames"`
}

func probe(t *testing.T, path string) (v, a probedStream) {
	t.Helper()
	out, err := exec.Command("ffprobe", "-v", "error", "-count_frames", "-show_streams", "-of", "json", path).Output()
	if err != nil {
		t.Fatalf("ffprobe %s: %v", path, err)
	}
	var p struct{ Streams []probedStream }
	if err := json.Unmarshal(out, &p); err != nil {
		t.Fatal(err)
	}
	for _, s := range p.Streams {
		switch s.CodecType {
		case "video":
			v = s
		case "audio":
			a = s
		}
	}
	return v, a
}

func num(s string) float64 { f, _ := strconv.ParseFloat(s, 64); return f }

// TestExportMeasured exports two trimmed takes joined by a crossfade and
// measures the MP4 with ffprobe (an independent reader): its length is the
// trimmed lengths minus the crossfade within a frame, the sound lasts as
// long as the picture, and frames at known times equal the sources' frames
// (or, inside the crossfade, their blend) within codec error.
func TestExportMeasured(t *testing.T) {
	uitest.NeedTools(t, "ffmpeg", "ffprobe")
	dir := t.TempDir()
	const w, h, n = 64, 48, 36
	writeSource(t, filepath.Join(dir, "a.mp4"), w, h, n, 440, func(i int) *image.RGBA { return bars(w, h, 0, uint8(6*i), uint8(250-6*i)) })
	os.MkdirAll(filepath.Join(dir, "take-b"), 0o755) // a take folder
	writeSource(t, filepath.Join(dir, "take-b", TakeVideoFile), w, h, n, 660, func(i int) *image.RGBA { return bars(w, h, 1, uint8(250-6*i), uint8(6*i)) })
	seqPath := filepath.Join(dir, "Sequences", "Film", File)
	s := Sequence{Version: 1, Clips: []Clip{
		{Source: "../../a.mp4", In: 0.25, Out: 1.0, Transition: Transition{Kind: Crossfade, Seconds: 0.25}}, // frames 6…18, fade 6
		{Source: filepath.Join(dir, "take-b"), In: 0.5, Out: 1.5, Transition: Transition{Kind: Cut}},        // frames 12…36
	}}
	if err := Save(seqPath, s); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, "film.mp4")
	var last, total int
	err := Export(context.Background(), seqPath, s, dst, media.ExportOptions{Render: true, Progress: func(d, n int) { last, total = d, n }})
	if err != nil {
		t.Fatal(err)
	}
	want := 18 + 24 - 6
	if last != want || total != want {
		t.Errorf("progress ended at %d/%d, want %d", last, total, want)
	}
	v, a := probe(t, dst)
	if v.CodecName != "h264" || v.RFrameRate != "24/1" || a.CodecName != "aac" || a.SampleRate != "32000" || a.Channels != 2 {
		t.Errorf("streams: video %+v, audio %+v", v, a)
	}
	if got := int(num(v.Frames)); got != want {
		t.Errorf("%d frames, want %d", got, want)
	}
	if d := num(v.Duration); math.Abs(d-float64(want)/24) > 1.0/24 {
		t.Errorf("video lasts %.3f s, want %.3f s (0.75 + 1.0 − 0.25) within a frame", d, float64(want)/24)
	}
	if d := math.Abs(num(a.Duration) - num(v.Duration)); d > 1.0/24 {
		t.Errorf("audio lasts %s s, video %s s", a.Duration, v.Duration)
	}

	out := decodeAll(t, dst)
	srcA := decodeAll(t, filepath.Join(dir, "a.mp4"))
	srcB := decodeAll(t, filepath.Join(dir, "take-b", TakeVideoFile))
	// codec error: two H.264 generations of flat bars
	const tol = 3.0
	for _, c := range []struct {
		t    int
		want *image.RGBA
	}{
		{0, srcA[6]}, {5, srcA[11]}, {11, srcA[17]}, // before the fade
		{18, srcB[12+6]}, {35, srcB[12+23]}, // after it
	} {
		if d := meanDiff(out[c.t], c.want); d > tol {
			t.Errorf("frame %d differs from its source frame by %.2f on average (codec error ≤ %.0f)", c.t, d, tol)
		}
	}
	// inside the fade (frames 12…17): frame 14 is the 3rd of 6, B weighted 3/7
	mix := image.NewRGBA(out[0].Rect)
	blendFor(mix, srcA[6+14], srcB[12+2], 3, 7)
	if d := meanDiff(out[14], mix); d > tol {
		t.Errorf("crossfade frame 14 differs from the blend by %.2f", d)
	}
	if d := meanDiff(out[14], srcA[20]); d < 10 {
		t.Errorf("crossfade frame 14 is just clip A's frame (diff %.2f)", d)
	}
}

func blendFor(out, a, b *image.RGBA, n, d int) {
	for i := range out.Pix {
		out.Pix[i] = uint8((int(a.Pix[i])*(d-n) + int(b.Pix[i])*n + d/2) / d)
	}
}

// TestExportCancelAndMissing: a cancelled export and one with a missing
// clip leave nothing at the destination; an earlier file there is kept.
func TestExportCancelAndMissing(t *testing.T) {
	uitest.NeedTools(t, "ffmpeg", "ffprobe")
	dir := t.TempDir()
	writeSource(t, filepath.Join(dir, "a.mp4"), 32, 32, 24, 440, func(i int) *image.RGBA { return bars(32, 32, 2, uint8(i*10), 0) })
	seqPath := filepath.Join(dir, File)
	dst := filepath.Join(dir, "film.mp4")
	os.WriteFile(dst, []byte("an earlier export"), 0o644)
	s := Sequence{Version: 1, Clips: []Clip{clip("a.mp4", 0, 1), clip("a.mp4", 0, 1)}}
	ctx, cancel := context.WithCancel(context.Background())
	err := Export(ctx, seqPath, s, dst, media.ExportOptions{Render: true, Progress: func(d, n int) {
		if d == 30 {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled export: %v", err)
	}
	s.Clips[1].Source = "take9/missing.mp4"
	err = Export(context.Background(), seqPath, s, dst, media.ExportOptions{Render: true})
	if !errors.Is(err, ErrMissing) || !strings.Contains(err.Error(), "take9/missing.mp4") {
		t.Errorf("missing clip: %v", err)
	}
	if b, _ := os.ReadFile(dst); string(b) != "an earlier export" {
		t.Errorf("the earlier file was changed: %q", b)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 { // a.mp4 and film.mp4
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("left behind: %v", names)
	}
}

// TestExportFullDisk exports where writes start failing part-way (a full
// disk, simulated in a child process by RLIMIT_FSIZE, which also stops the
// ffmpeg it starts): the export fails naming the destination and leaves
// nothing in the output folder.
func TestExportFullDisk(t *testing.T) {
	if dir := os.Getenv("H3_SEQUENCE_FULLDISK"); dir != "" {
		const limit = 128 << 10
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: limit, Max: limit}); err != nil {
			t.Skipf("SKIP: cannot limit the file size here: %v", err)
		}
		s := Sequence{Version: 1, Clips: []Clip{
			{Source: "../src/noise.mp4", Out: 2, Transition: Transition{Kind: Crossfade, Seconds: 0.5}},
			{Source: "../src/noise.mp4", Out: 2},
		}}
		dst := filepath.Join(dir, "out", "film.mp4")
		err := Export(context.Background(), filepath.Join(dir, "out", File), s, dst, media.ExportOptions{Render: true, MP4: media.MP4Options{Quality: 1}})
		var me *media.Error
		if err == nil || !errors.As(err, &me) || !strings.Contains(err.Error(), "film.mp4") {
			t.Fatalf("export on a full disk: %v", err)
		}
		t.Logf("full disk: %v", err)
		return
	}
	uitest.NeedTools(t, "ffmpeg", "ffprobe")
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "src"), 0o755)
	os.MkdirAll(filepath.Join(dir, "out"), 0o755)
	r := rand.New(rand.NewSource(1))
	writeSource(t, filepath.Join(dir, "src", "noise.mp4"), 320, 240, 48, 440, func(int) *image.RGBA {
		img := image.NewRGBA(image.Rect(0, 0, 320, 240)) // incompressible
		r.Read(img.Pix)
		return img
	})
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^TestExportFullDisk$", "-test.v")
	cmd.Env = append(os.Environ(), "H3_SEQUENCE_FULLDISK="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("full-disk child failed: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "full disk:") {
		t.Fatalf("the child did not run the export:\n%s", out)
	}
	t.Logf("child:\n%s", out)
	if ents, _ := os.ReadDir(filepath.Join(dir, "out")); len(ents) != 0 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("left behind after a failed export: %v", names)
	}
}
