//go:build linux

package media

// MP4 export and video/compressed-audio decoding through Debian's ffmpeg
// and ffprobe, on Linux only (H3 Studio never runs ffmpeg on macOS, where
// darwin/avf does this with AVFoundation). This is how the sink's timing is
// verified on the Linux CI, with ffprobe as an independent reader.

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

func init() {
	SetPlatform(Platform{Name: "ffmpeg", NewMP4Sink: newFFmpegMP4Sink, OpenMedia: openFFmpeg})
}

// tailBuffer keeps the last 4 KB written to it (ffmpeg's stderr).
type tailBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	t.b = append(t.b, p...)
	if len(t.b) > 4096 {
		t.b = t.b[len(t.b)-4096:]
	}
	t.mu.Unlock()
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := strings.TrimSpace(string(t.b))
	if i := strings.LastIndexByte(s, '\n'); i >= 0 && len(s)-i < 20 {
		// keep the last two lines when the last one is short
		if j := strings.LastIndexByte(s[:i], '\n'); j >= 0 {
			return s[j+1:]
		}
	}
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

func lookFFmpeg(path, tool string) (string, error) {
	p, err := exec.LookPath(tool)
	if err != nil {
		return "", fileErr(path, ErrNoPlatform, "%s is not installed (on Linux, H3 Studio uses Debian's ffmpeg package for MP4 and video)", tool)
	}
	return p, nil
}

// ffmpegMP4Sink encodes in two passes so that it never waits on audio
// while frames stream in: pass 1 pipes RGB frames into libx264 (video-only
// temporary MP4); Close muxes that video (copied, not re-encoded) with the
// audio (AAC) into a second temporary file and renames it over the
// destination.
type ffmpegMP4Sink struct {
	path, ffmpeg   string
	opts           MP4Options
	videoTmp, tmp  string
	cmd            *exec.Cmd
	stdin          io.WriteCloser
	stderr         tailBuffer
	state          sinkState
	row            []byte
	audio          []float32
	waited, failed bool
}

func newFFmpegMP4Sink(path string, o MP4Options) (Sink, error) {
	ff, err := lookFFmpeg(path, "ffmpeg")
	if err != nil {
		return nil, err
	}
	if o.Quality < 0 || o.Quality > 1 {
		return nil, fileErr(path, nil, "MP4 quality %g is outside 0…1", o.Quality)
	}
	dir := filepath.Dir(path)
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return nil, fileErr(path, nil, "destination is a folder")
	}
	s := &ffmpegMP4Sink{path: path, ffmpeg: ff, opts: o, state: sinkState{name: "MP4 " + path}}
	for _, p := range []*string{&s.videoTmp, &s.tmp} {
		f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.part")
		if err != nil {
			s.removeTemps()
			return nil, fileErr(path, err, "cannot write to the destination folder")
		}
		f.Close()
		*p = f.Name()
	}
	return s, nil
}

func (s *ffmpegMP4Sink) removeTemps() {
	for _, p := range []string{s.videoTmp, s.tmp} {
		if p != "" {
			os.Remove(p)
		}
	}
}

func (s *ffmpegMP4Sink) Begin(f Format) error {
	if err := s.state.begin(f); err != nil {
		s.removeTemps()
		return err
	}
	if err := ValidateMP4Format(f); err != nil {
		s.removeTemps()
		return fileErr(s.path, err, "cannot write MP4")
	}
	br := s.opts.VideoBitRate(f.Width, f.Height)
	args := []string{"-hide_banner", "-loglevel", "error", "-y",
		"-f", "rawvideo", "-pixel_format", "rgb24", "-video_size", fmt.Sprintf("%dx%d", f.Width, f.Height),
		"-framerate", strconv.Itoa(FPS), "-i", "pipe:0", "-an",
		"-vf", "scale=out_color_matrix=bt709:out_range=tv,format=yuv420p",
		"-c:v", "libx264", "-preset", "fast", "-profile:v", "high",
		"-b:v", strconv.Itoa(br), "-maxrate", strconv.Itoa(br * 3 / 2), "-bufsize", strconv.Itoa(br * 2),
		"-colorspace", "bt709", "-color_primaries", "bt709", "-color_trc", "bt709", "-color_range", "tv",
		"-f", "mp4", fileURL(s.videoTmp)}
	s.cmd = exec.Command(s.ffmpeg, args...)
	s.cmd.Stderr = &s.stderr
	in, err := s.cmd.StdinPipe()
	if err == nil {
		err = s.cmd.Start()
	}
	if err != nil {
		s.removeTemps()
		return fileErr(s.path, err, "cannot start ffmpeg")
	}
	s.stdin = in
	s.row = make([]byte, 3*f.Width*f.Height)
	return nil
}

func (s *ffmpegMP4Sink) fail(err error, what string) error {
	s.Abort()
	if msg := s.stderr.String(); msg != "" {
		return fileErr(s.path, nil, "%s: ffmpeg: %s", what, msg)
	}
	return fileErr(s.path, err, "%s", what)
}

func (s *ffmpegMP4Sink) WriteFrame(img *image.RGBA) error {
	if err := s.state.frame(img); err != nil {
		return err
	}
	w, h := s.state.f.Width, s.state.f.Height
	for y := 0; y < h; y++ {
		src := img.Pix[img.PixOffset(img.Rect.Min.X, img.Rect.Min.Y+y):]
		dst := s.row[3*w*y:]
		for x := 0; x < w; x++ {
			dst[3*x], dst[3*x+1], dst[3*x+2] = src[4*x], src[4*x+1], src[4*x+2]
		}
	}
	if _, err := s.stdin.Write(s.row); err != nil {
		return s.fail(err, fmt.Sprintf("cannot encode frame %d", s.state.frames))
	}
	return nil
}

func (s *ffmpegMP4Sink) WriteAudio(a Audio) error {
	if err := s.state.audio(a); err != nil {
		return err
	}
	s.audio = append(s.audio, a.Samples...)
	return nil
}

func (s *ffmpegMP4Sink) Close() error {
	if s.state.done {
		return nil
	}
	if s.cmd == nil {
		s.state.done = true
		s.removeTemps()
		return fileErr(s.path, nil, "closed before Begin")
	}
	if s.state.refused != nil {
		s.Abort()
		return s.state.refusedErr(s.path)
	}
	s.stdin.Close()
	err := s.cmd.Wait()
	s.waited = true
	// ffmpeg runs with -loglevel error and exits 0 even when it could not
	// write its file ("Error writing trailer …: No space left on device"),
	// so anything it printed is a failure.
	if err == nil && s.stderr.String() != "" {
		err = errors.New("ffmpeg reported an error")
	}
	if err != nil {
		return s.fail(err, "video encoding failed")
	}
	if s.state.frames == 0 {
		s.Abort()
		return fileErr(s.path, nil, "no frames were written")
	}
	f := s.state.f
	// The sound lasts exactly as long as the video: cut, or pad with silence.
	n := AudioSamplesFor(s.state.frames, f.SampleRate) * f.Channels
	pcm := s.audio
	if len(pcm) > n {
		pcm = pcm[:n]
	}
	raw := make([]byte, 4*n)
	for i, v := range pcm {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(v))
	}
	s.stderr = tailBuffer{}
	mux := exec.Command(s.ffmpeg, "-hide_banner", "-loglevel", "error", "-y",
		"-i", fileURL(s.videoTmp),
		"-f", "f32le", "-ar", strconv.Itoa(f.SampleRate), "-ac", strconv.Itoa(f.Channels), "-i", "pipe:0",
		"-map", "0:v:0", "-map", "1:a:0", "-c:v", "copy",
		"-c:a", "aac", "-b:a", strconv.Itoa(s.opts.AudioBitRateOrDefault()),
		"-movflags", "+faststart", "-f", "mp4", fileURL(s.tmp))
	mux.Stdin = bytes.NewReader(raw)
	mux.Stderr = &s.stderr
	if err := mux.Run(); err != nil || s.stderr.String() != "" {
		if err == nil {
			err = errors.New("ffmpeg reported an error")
		}
		return s.fail(err, "muxing video and sound failed (is the disk full?)")
	}
	s.state.done = true
	os.Remove(s.videoTmp)
	return installFile(s.tmp, s.path)
}

func (s *ffmpegMP4Sink) Abort() error {
	if s.state.done && !s.failed {
		// Abort after a finished Close keeps the file.
		if s.cmd == nil || s.waited {
			s.removeTempsIfLeft()
			return nil
		}
	}
	s.state.done, s.failed = true, true
	if s.cmd != nil && !s.waited {
		s.stdin.Close()
		s.cmd.Process.Kill()
		s.cmd.Wait()
		s.waited = true
	}
	s.removeTemps()
	return nil
}

func (s *ffmpegMP4Sink) removeTempsIfLeft() {
	for _, p := range []string{s.videoTmp, s.tmp} {
		if _, err := os.Stat(p); err == nil {
			os.Remove(p)
		}
	}
}

// probe is the part of ffprobe's JSON the sources use.
type probe struct {
	Streams []struct {
		CodecType    string            `json:"codec_type"`
		CodecName    string            `json:"codec_name"`
		Width        int               `json:"width"`
		Height       int               `json:"height"`
		AvgFrameRate string            `json:"avg_frame_rate"`
		RFrameRate   string            `json:"r_frame_rate"`
		NbFrames     string            `json:"nb_frames"`
		Duration     string            `json:"duration"`
		SampleRate   string            `json:"sample_rate"`
		Channels     int               `json:"channels"`
		Tags         map[string]string `json:"tags"`
		Disposition  map[string]int    `json:"disposition"`
		SideData     []struct {
			Rotation float64 `json:"rotation"`
		} `json:"side_data_list"`
	} `json:"streams"`
	Format struct {
		FormatName string `json:"format_name"`
		Duration   string `json:"duration"`
	} `json:"format"`
}

func parseRate(s string) float64 {
	n, d, ok := strings.Cut(s, "/")
	num, err1 := strconv.ParseFloat(n, 64)
	if !ok {
		if err1 != nil {
			return 0
		}
		return num
	}
	den, err2 := strconv.ParseFloat(d, 64)
	if err1 != nil || err2 != nil || den == 0 {
		return 0
	}
	return num / den
}

type ffmpegSource struct {
	path, ffmpeg string
	info         Info
	video, audio int // stream indexes among their type (-1: none)
	w, h         int // decoded (rotated) frame size
}

func openFFmpeg(path, format string) (Source, error) {
	fp, err := lookFFmpeg(path, "ffprobe")
	if err != nil {
		return nil, err
	}
	ff, err := lookFFmpeg(path, "ffmpeg")
	if err != nil {
		return nil, err
	}
	var errb tailBuffer
	cmd := exec.Command(fp, "-v", "error", "-print_format", "json", "-show_streams", "-show_format", fileURL(path))
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		msg := errb.String()
		if msg == "" {
			msg = err.Error()
		}
		return nil, fileErr(path, nil, "cannot read this %s file (damaged or truncated?): %s", format, trimPath(msg, path))
	}
	var p probe
	if err := json.Unmarshal(out, &p); err != nil {
		return nil, fileErr(path, err, "cannot read this %s file", format)
	}
	s := &ffmpegSource{path: path, ffmpeg: ff, video: -1, audio: -1}
	info := Info{Format: format}
	nv, na := 0, 0
	for _, st := range p.Streams {
		switch st.CodecType {
		case "video":
			if st.Disposition["attached_pic"] == 1 { // cover art of an audio file
				nv++
				continue
			}
			if s.video < 0 {
				s.video = nv
				info.Kind, info.Codec = KindVideo, st.CodecName
				info.FPS = parseRate(st.AvgFrameRate)
				if info.FPS <= 0 {
					info.FPS = parseRate(st.RFrameRate)
				}
				rot := 0.0
				for _, sd := range st.SideData {
					if sd.Rotation != 0 {
						rot = sd.Rotation
					}
				}
				if r, err := strconv.ParseFloat(st.Tags["rotate"], 64); err == nil && rot == 0 {
					rot = r
				}
				s.w, s.h = st.Width, st.Height
				if q := int(math.Round(rot/90)) & 1; q == 1 {
					s.w, s.h = s.h, s.w
				}
				info.Width, info.Height = s.w, s.h
				d, _ := strconv.ParseFloat(st.Duration, 64)
				if d <= 0 {
					d, _ = strconv.ParseFloat(p.Format.Duration, 64)
				}
				info.Duration = seconds(d)
				if n, err := strconv.Atoi(st.NbFrames); err == nil && n > 0 {
					info.Frames = n
				} else {
					info.Frames = int(math.Round(d * info.FPS))
				}
			}
			nv++
		case "audio":
			if s.audio < 0 {
				s.audio = na
				info.HasAudio = true
				info.SampleRate, _ = strconv.Atoi(st.SampleRate)
				info.Channels = st.Channels
				if info.Kind == 0 {
					info.Kind, info.Codec = KindAudio, st.CodecName
					d, _ := strconv.ParseFloat(st.Duration, 64)
					if d <= 0 {
						d, _ = strconv.ParseFloat(p.Format.Duration, 64)
					}
					info.Duration = seconds(d)
				}
			}
			na++
		}
	}
	if s.video >= 0 {
		info.Kind = KindVideo
	}
	switch {
	case info.Kind == 0:
		return nil, fileErr(path, nil, "has no video or sound stream")
	case info.Kind == KindVideo && (s.w <= 0 || s.h <= 0):
		return nil, fileErr(path, nil, "video stream has no picture size")
	case info.Kind == KindVideo && int64(s.w)*int64(s.h) > MaxImagePixels:
		return nil, fileErr(path, ErrTooLarge, "video frames are %d×%d; the limit is %d megapixels", s.w, s.h, MaxImagePixels/1_000_000)
	case info.HasAudio && (info.SampleRate <= 0 || info.Channels <= 0 || info.Channels > MaxAudioChannels):
		return nil, fileErr(path, ErrUnsupported, "sound stream with %d Hz × %d channels", info.SampleRate, info.Channels)
	case info.Duration.Seconds() > MaxAudioSeconds:
		return nil, fileErr(path, ErrTooLarge, "is %.0f s long; the limit is %d s", info.Duration.Seconds(), MaxAudioSeconds)
	}
	s.info = info
	return s, nil
}

func trimPath(msg, path string) string {
	msg = strings.TrimSpace(msg)
	msg = strings.TrimPrefix(msg, fileURL(path)+":")
	return strings.TrimSpace(strings.TrimPrefix(msg, path+":"))
}

// fileURL names a file for ffmpeg and ffprobe unambiguously: a bare name
// with a colon ("take:1.mp4") would be read as a protocol ("Protocol not
// found").
func fileURL(path string) string { return "file:" + path }

func (s *ffmpegSource) Info() Info { return s.info }

func (s *ffmpegSource) Image(ctx context.Context) (*image.RGBA, error) {
	var first *image.RGBA
	err := s.Frames(ctx, 1, func(_ int, f *image.RGBA) error { first = f; return nil })
	if err != nil {
		return nil, err
	}
	return first, nil
}

func (s *ffmpegSource) Frames(ctx context.Context, max int, each func(int, *image.RGBA) error) error {
	if s.video < 0 {
		return fileErr(s.path, nil, "has no video stream")
	}
	args := []string{"-hide_banner", "-v", "error", "-nostdin", "-i", fileURL(s.path),
		"-map", "0:v:" + strconv.Itoa(s.video), "-an", "-sn", "-dn", "-fps_mode", "passthrough"}
	if max > 0 {
		args = append(args, "-frames:v", strconv.Itoa(max))
	}
	args = append(args, "-f", "rawvideo", "-pix_fmt", "rgba", "pipe:1")
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.ffmpeg, args...)
	var errb tailBuffer
	cmd.Stderr = &errb
	out, err := cmd.StdoutPipe()
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		return fileErr(s.path, err, "cannot start ffmpeg")
	}
	n := 0
	var cbErr error
	for max <= 0 || n < max {
		img := image.NewRGBA(image.Rect(0, 0, s.w, s.h))
		if _, err := io.ReadFull(out, img.Pix); err != nil {
			break
		}
		if cbErr = each(n, img); cbErr != nil {
			break
		}
		n++
	}
	cancel()
	werr := cmd.Wait()
	switch {
	case cbErr != nil:
		return cbErr
	case ctx.Err() != nil && n < max:
		return ctx.Err()
	case n == 0:
		msg := errb.String()
		if msg == "" && werr != nil {
			msg = werr.Error()
		}
		if msg == "" {
			msg = "no frames"
		}
		return fileErr(s.path, nil, "cannot decode the video (%s): %s", s.info.Codec, trimPath(msg, s.path))
	}
	return nil
}

func (s *ffmpegSource) Audio(ctx context.Context) (Audio, error) {
	if s.audio < 0 {
		return Audio{}, fileErr(s.path, ErrNoAudio, "has no sound track")
	}
	ch := s.info.Channels
	cmd := exec.CommandContext(ctx, s.ffmpeg, "-hide_banner", "-v", "error", "-nostdin", "-i", fileURL(s.path),
		"-map", "0:a:"+strconv.Itoa(s.audio), "-vn", "-sn", "-dn", "-ac", strconv.Itoa(ch),
		"-ar", strconv.Itoa(s.info.SampleRate), "-f", "f32le", "-acodec", "pcm_f32le", "pipe:1")
	var errb tailBuffer
	cmd.Stderr = &errb
	raw, err := cmd.Output()
	if ctx.Err() != nil {
		return Audio{}, ctx.Err()
	}
	frames := len(raw) / 4 / ch
	if err != nil && frames == 0 {
		return Audio{}, fileErr(s.path, nil, "cannot decode the sound: %s", trimPath(errb.String(), s.path))
	}
	if frames == 0 {
		return Audio{}, fileErr(s.path, nil, "has no audio samples (zero length)")
	}
	a := Audio{Rate: s.info.SampleRate, Channels: ch, Samples: make([]float32, frames*ch)}
	for i := range a.Samples {
		v := math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		if v != v {
			v = 0
		}
		a.Samples[i] = v
	}
	return a, nil
}

func (s *ffmpegSource) Close() error { return nil }
