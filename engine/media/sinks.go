package media

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Validate checks a generation's output format: positive size, frame rate,
// sample rate and channel count.
func (f Format) Validate() error {
	switch {
	case f.Width <= 0 || f.Height <= 0:
		return fmt.Errorf("media: frame size %d×%d", f.Width, f.Height)
	case f.Width > MaxImageSide || f.Height > MaxImageSide:
		return fmt.Errorf("media: frame size %d×%d is too large", f.Width, f.Height)
	case f.FPS <= 0:
		return fmt.Errorf("media: frame rate %d", f.FPS)
	case f.SampleRate <= 0 || f.Channels <= 0 || f.Channels > MaxAudioChannels:
		return fmt.Errorf("media: audio %d Hz × %d channels", f.SampleRate, f.Channels)
	case f.Frames < 0:
		return fmt.Errorf("media: frame count %d", f.Frames)
	}
	return nil
}

// OutputFormat is the model's output format for a w×h canvas and frames
// frames: 24 fps, 32 kHz stereo.
func OutputFormat(w, h, frames int) Format {
	return Format{Width: w, Height: h, FPS: FPS, Frames: frames, SampleRate: SampleRate, Channels: NumChannels}
}

// sinkState enforces the Sink call order and the frame/audio format.
type sinkState struct {
	name   string
	f      Format
	begun  bool
	done   bool
	frames int
	// refused is the first frame or sound buffer refused for its size or
	// format: a file sink then saves nothing, even when closed (Sink).
	refused error
}

func (s *sinkState) refuse(err error) error {
	if s.refused == nil {
		s.refused = err
	}
	return err
}

// refusedErr is Close's error after a refused write, naming dest.
func (s *sinkState) refusedErr(dest string) error {
	return fileErr(dest, s.refused, "not saved: a frame or sound buffer was refused earlier")
}

func (s *sinkState) begin(f Format) error {
	if s.begun {
		return fmt.Errorf("media: %s: Begin called twice", s.name)
	}
	if err := f.Validate(); err != nil {
		return fmt.Errorf("media: %s: %w", s.name, err)
	}
	s.f, s.begun = f, true
	return nil
}

func (s *sinkState) frame(img *image.RGBA) error {
	if !s.begun || s.done {
		return fmt.Errorf("media: %s: WriteFrame outside Begin…Close", s.name)
	}
	if b := img.Bounds(); b.Dx() != s.f.Width || b.Dy() != s.f.Height {
		return s.refuse(fmt.Errorf("media: %s: frame %d is %d×%d, the output is %d×%d", s.name, s.frames, b.Dx(), b.Dy(), s.f.Width, s.f.Height))
	}
	s.frames++
	return nil
}

func (s *sinkState) audio(a Audio) error {
	if !s.begun || s.done {
		return fmt.Errorf("media: %s: WriteAudio outside Begin…Close", s.name)
	}
	if a.Rate != s.f.SampleRate || a.Channels != s.f.Channels || len(a.Samples)%max(a.Channels, 1) != 0 {
		return s.refuse(fmt.Errorf("media: %s: audio is %d Hz × %d channels (%d samples), the output is %d Hz × %d", s.name, a.Rate, a.Channels, len(a.Samples), s.f.SampleRate, s.f.Channels))
	}
	return nil
}

// MemorySink keeps everything in memory (tests, previews, the GUI's take
// before it is saved). Frames are copies.
type MemorySink struct {
	Format Format
	Frames []*image.RGBA
	Audio  Audio
	Closed bool
	state  sinkState
}

// Begin implements Sink.
func (m *MemorySink) Begin(f Format) error {
	m.state.name = "memory sink"
	if err := m.state.begin(f); err != nil {
		return err
	}
	m.Format = f
	m.Audio = Audio{Rate: f.SampleRate, Channels: f.Channels}
	return nil
}

// WriteFrame implements Sink.
func (m *MemorySink) WriteFrame(img *image.RGBA) error {
	if err := m.state.frame(img); err != nil {
		return err
	}
	c := image.NewRGBA(image.Rect(0, 0, img.Bounds().Dx(), img.Bounds().Dy()))
	for y := 0; y < c.Rect.Dy(); y++ {
		copy(c.Pix[y*c.Stride:(y+1)*c.Stride], img.Pix[img.PixOffset(img.Rect.Min.X, img.Rect.Min.Y+y):])
	}
	m.Frames = append(m.Frames, c)
	return nil
}

// WriteAudio implements Sink.
func (m *MemorySink) WriteAudio(a Audio) error {
	if err := m.state.audio(a); err != nil {
		return err
	}
	m.Audio.Samples = append(m.Audio.Samples, a.Samples...)
	return nil
}

// Close implements Sink.
func (m *MemorySink) Close() error { m.state.done, m.Closed = true, true; return nil }

// Abort implements Sink: it drops everything.
func (m *MemorySink) Abort() error {
	m.state.done = true
	m.Frames, m.Audio.Samples = nil, nil
	return nil
}

// FrameName is the file name of frame i (0-based) in a PNG sequence:
// frame-00001.png for the first frame.
func FrameName(i int) string { return fmt.Sprintf("frame-%05d.png", i+1) }

// frameSink writes a PNG sequence; it ignores audio.
type frameSink struct {
	dir, tmp string
	created  bool
	state    sinkState
	enc      png.Encoder
	buf      bytes.Buffer
}

// NewFrameSink returns a sink that writes every frame as dir/frame-NNNNN.png
// (FrameName). The folder is created if missing. Frames are written into a
// hidden temporary folder and moved into dir by Close; Abort or a failure
// leaves dir as it was. Close also removes the frames of an earlier, longer
// sequence beyond the new last frame, so the folder never mixes two takes.
// Audio is ignored (pair it with a WAV sink through MultiSink).
func NewFrameSink(dir string) (Sink, error) {
	s := &frameSink{dir: dir, state: sinkState{name: "PNG frames " + dir}}
	s.enc.CompressionLevel = png.BestSpeed
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		return nil, fileErr(dir, nil, "exists and is not a folder")
	} else if err != nil {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fileErr(dir, err, "cannot create the folder")
		}
		s.created = true
	}
	tmp, err := os.MkdirTemp(dir, ".frames-*.part")
	if err != nil {
		s.cleanup()
		return nil, fileErr(dir, err, "cannot write to the folder")
	}
	s.tmp = tmp
	return s, nil
}

func (s *frameSink) Begin(f Format) error {
	if err := s.state.begin(f); err != nil {
		s.cleanup()
		return err
	}
	return nil
}

func (s *frameSink) WriteFrame(img *image.RGBA) error {
	i := s.state.frames
	if err := s.state.frame(img); err != nil {
		return err
	}
	s.buf.Reset()
	if err := s.enc.Encode(&s.buf, opaqueView(img)); err != nil {
		return fileErr(s.dir, err, "cannot encode frame %d", i+1)
	}
	p := filepath.Join(s.tmp, FrameName(i))
	if err := os.WriteFile(p, s.buf.Bytes(), 0o644); err != nil {
		s.cleanup()
		return fileErr(filepath.Join(s.dir, FrameName(i)), err, "cannot write the frame (is the disk full?)")
	}
	return nil
}

func (s *frameSink) WriteAudio(a Audio) error { return s.state.audio(a) }

func (s *frameSink) Close() error {
	if s.state.done {
		return nil
	}
	s.state.done = true
	if s.state.refused != nil {
		s.cleanup()
		return s.state.refusedErr(s.dir)
	}
	for i := 0; i < s.state.frames; i++ {
		if err := os.Rename(filepath.Join(s.tmp, FrameName(i)), filepath.Join(s.dir, FrameName(i))); err != nil {
			for j := 0; j < i; j++ { // take back what was moved
				os.Remove(filepath.Join(s.dir, FrameName(j)))
			}
			s.cleanup()
			return fileErr(filepath.Join(s.dir, FrameName(i)), err, "cannot move the frame into place")
		}
	}
	os.RemoveAll(s.tmp)
	s.removeStale()
	return nil
}

// removeStale removes the frame files of an earlier sequence numbered past
// this one's last frame (a 22-frame take written over a 39-frame one would
// otherwise leave frames 23..39 of the old take beside it). Only names
// FrameName makes are touched.
func (s *frameSink) removeStale() {
	ents, err := os.ReadDir(s.dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		num, ok1 := strings.CutPrefix(e.Name(), "frame-")
		num, ok2 := strings.CutSuffix(num, ".png")
		if !ok1 || !ok2 || e.IsDir() {
			continue
		}
		n, err := strconv.Atoi(num)
		if err != nil || n <= s.state.frames || FrameName(n-1) != e.Name() {
			continue
		}
		os.Remove(filepath.Join(s.dir, e.Name()))
	}
}

func (s *frameSink) Abort() error {
	s.state.done = true
	s.cleanup()
	return nil
}

func (s *frameSink) cleanup() {
	if s.tmp != "" {
		os.RemoveAll(s.tmp)
	}
	if s.created {
		os.Remove(s.dir) // only if still empty
	}
}

// opaqueView lets the PNG encoder write RGB (no alpha channel) for an
// opaque frame.
func opaqueView(img *image.RGBA) image.Image {
	if img.Opaque() {
		return opaqueRGBA{img}
	}
	return img
}

type opaqueRGBA struct{ *image.RGBA }

func (opaqueRGBA) Opaque() bool { return true }

// wavSink streams the generation's sound into a WAV file; it ignores frames.
type wavSink struct {
	path  string
	form  SampleFormat
	af    *atomicFile
	w     *wavWriter
	state sinkState
}

// NewWAVSink returns a sink that writes the sound to path as WAV (written
// under a temporary name, renamed by Close). Frames are ignored.
func NewWAVSink(path string, f SampleFormat) (Sink, error) {
	af, err := createAtomic(path)
	if err != nil {
		return nil, err
	}
	return &wavSink{path: path, form: f, af: af, state: sinkState{name: "WAV " + path}}, nil
}

func (s *wavSink) Begin(f Format) error {
	if err := s.state.begin(f); err != nil {
		s.af.abort()
		return err
	}
	w, err := newWAVWriter(s.af.f, f.SampleRate, f.Channels, s.form)
	if err != nil {
		s.af.abort()
		return fileErr(s.path, err, "cannot write (is the disk full?)")
	}
	s.w = w
	return nil
}

func (s *wavSink) WriteFrame(img *image.RGBA) error { return s.state.frame(img) }

func (s *wavSink) WriteAudio(a Audio) error {
	if err := s.state.audio(a); err != nil {
		return err
	}
	if err := s.w.write(a.Samples); err != nil {
		s.af.abort()
		return fileErr(s.path, err, "cannot write (is the disk full?)")
	}
	return nil
}

func (s *wavSink) Close() error {
	if s.state.done {
		return nil
	}
	s.state.done = true
	if s.w == nil {
		s.af.abort()
		return fileErr(s.path, nil, "closed before Begin")
	}
	if s.state.refused != nil {
		s.af.abort()
		return s.state.refusedErr(s.path)
	}
	if err := s.w.finish(); err != nil {
		s.af.abort()
		return fileErr(s.path, err, "cannot finish writing (is the disk full?)")
	}
	return s.af.commit()
}

func (s *wavSink) Abort() error {
	s.state.done = true
	s.af.abort()
	return nil
}

// MultiSink fans a generation out to several sinks (e.g. MP4 + PNG frames
// + WAV). Every call goes to every sink in order; the first error aborts
// all of them. Close closes every sink and returns the first error; a sink
// that fails to close leaves nothing, the others keep their output.
func MultiSink(sinks ...Sink) Sink { return multiSink(sinks) }

type multiSink []Sink

func (m multiSink) each(f func(Sink) error) error {
	for _, s := range m {
		if err := f(s); err != nil {
			m.Abort()
			return err
		}
	}
	return nil
}

func (m multiSink) Begin(f Format) error { return m.each(func(s Sink) error { return s.Begin(f) }) }
func (m multiSink) WriteFrame(img *image.RGBA) error {
	return m.each(func(s Sink) error { return s.WriteFrame(img) })
}
func (m multiSink) WriteAudio(a Audio) error {
	return m.each(func(s Sink) error { return s.WriteAudio(a) })
}

func (m multiSink) Close() error { return m.all(Sink.Close) }
func (m multiSink) Abort() error { return m.all(Sink.Abort) }

// all calls f on every sink, whatever the others return, and joins the
// errors.
func (m multiSink) all(f func(Sink) error) error {
	var errs []error
	for _, s := range m {
		if err := f(s); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
