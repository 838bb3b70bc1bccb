package studio

import (
	"bufio"
	"errors"
	"fmt"
	"image"
	"io"
	"path/filepath"
	"sync"

	"h3studio/engine/media"
)

// takeSink receives a generation and writes a take's files into its staging
// folder: the MP4 through the build's video sink (when there is one), the
// sound as audio.wav, the viewer proxy, the middle frame as thumbnail and the
// last frame at full size. It keeps the viewer frames and the sound in
// memory so the finished take plays at once. Calls come from the engine's
// goroutine, one at a time; finish may be called after the engine returned,
// whether or not it closed or aborted the sink.
type takeSink struct {
	dir   string
	video media.Sink // nil: no MP4 in this build

	format  media.Format
	begun   bool
	done    bool // closed or aborted
	err     error
	closeMu sync.Mutex

	viewer    io.WriteCloser
	viewerBuf *bufio.Writer
	frames    [][]byte
	thumb     *image.RGBA
	last      *image.RGBA
	nFrames   int
	audio     media.Audio
	onFrame   func(i int) // progress hook (frames written)
}

func newTakeSink(dir string, video media.Sink) *takeSink {
	return &takeSink{dir: dir, video: video}
}

func (s *takeSink) fail(err error) error {
	if s.err == nil && err != nil {
		s.err = err
	}
	return err
}

func (s *takeSink) Begin(f media.Format) error {
	if s.begun {
		return errors.New("studio: take sink: Begin called twice")
	}
	s.begun = true
	s.format = f
	if f.Width <= 0 || f.Height <= 0 {
		return s.fail(fmt.Errorf("studio: take sink: bad canvas %d×%d", f.Width, f.Height))
	}
	if s.video != nil {
		if err := s.video.Begin(f); err != nil {
			return s.fail(fmt.Errorf("studio: MP4: %w", err))
		}
	}
	v, err := createFile(filepath.Join(s.dir, ViewerFile))
	if err != nil {
		return s.fail(describeWriteError(ViewerFile, err))
	}
	s.viewer = v
	s.viewerBuf = bufio.NewWriterSize(s.viewer, 1<<20)
	s.audio = media.Audio{Rate: f.SampleRate, Channels: f.Channels}
	if s.audio.Rate == 0 {
		s.audio.Rate = media.SampleRate
	}
	if s.audio.Channels == 0 {
		s.audio.Channels = media.NumChannels
	}
	return nil
}

func (s *takeSink) WriteFrame(img *image.RGBA) error {
	if s.err != nil {
		return s.err
	}
	if !s.begun {
		return s.fail(errors.New("studio: take sink: frame before Begin"))
	}
	if s.video != nil {
		if err := s.video.WriteFrame(img); err != nil {
			return s.fail(fmt.Errorf("studio: MP4: %w", err))
		}
	}
	jp, err := viewerFrame(img)
	if err != nil {
		return s.fail(err)
	}
	if _, err := s.viewerBuf.Write(jp); err != nil {
		return s.fail(describeWriteError(ViewerFile, err))
	}
	s.frames = append(s.frames, jp)
	mid := s.format.Frames / 2
	if s.nFrames == mid || s.thumb == nil {
		s.thumb = Scale(img, thumbEdge, thumbEdge)
	}
	if s.last == nil || s.last.Rect != img.Rect {
		s.last = image.NewRGBA(img.Rect)
	}
	copy(s.last.Pix, img.Pix)
	s.nFrames++
	if s.onFrame != nil {
		s.onFrame(s.nFrames)
	}
	return nil
}

func (s *takeSink) WriteAudio(a media.Audio) error {
	if s.err != nil {
		return s.err
	}
	if !s.begun {
		return s.fail(errors.New("studio: take sink: sound before Begin"))
	}
	if a.Channels != s.audio.Channels || a.Rate != s.audio.Rate {
		return s.fail(fmt.Errorf("studio: take sink: sound is %d Hz × %d, the stream was announced as %d Hz × %d", a.Rate, a.Channels, s.audio.Rate, s.audio.Channels))
	}
	if s.video != nil {
		if err := s.video.WriteAudio(a); err != nil {
			return s.fail(fmt.Errorf("studio: MP4: %w", err))
		}
	}
	s.audio.Samples = append(s.audio.Samples, a.Samples...)
	return nil
}

// Close finalises every file of the take.
func (s *takeSink) Close() error {
	s.closeMu.Lock()
	defer s.closeMu.Unlock()
	if s.done {
		return s.err
	}
	s.done = true
	if s.err != nil {
		s.abortFiles()
		return s.err
	}
	if !s.begun || s.nFrames == 0 {
		s.abortFiles()
		return s.fail(errors.New("studio: the engine wrote no frames"))
	}
	var errs []error
	if s.video != nil {
		if err := s.video.Close(); err != nil {
			errs = append(errs, fmt.Errorf("studio: MP4: %w", err))
		}
	}
	if err := s.viewerBuf.Flush(); err != nil {
		errs = append(errs, describeWriteError(ViewerFile, err))
	}
	if f, ok := s.viewer.(interface{ Sync() error }); ok {
		if err := f.Sync(); err != nil {
			errs = append(errs, describeWriteError(ViewerFile, err))
		}
	}
	if err := s.viewer.Close(); err != nil {
		errs = append(errs, describeWriteError(ViewerFile, err))
	}
	if len(s.audio.Samples) > 0 {
		errs = append(errs, diskError(AudioFile, media.WriteWAVFile(filepath.Join(s.dir, AudioFile), s.audio, media.PCM16)))
	}
	errs = append(errs, writePNGAtomic(filepath.Join(s.dir, ThumbFile), s.thumb))
	errs = append(errs, writePNGAtomic(filepath.Join(s.dir, LastFile), s.last))
	if err := errors.Join(errs...); err != nil {
		s.abortFiles()
		return s.fail(err)
	}
	return nil
}

// Abort discards the take.
func (s *takeSink) Abort() error {
	s.closeMu.Lock()
	defer s.closeMu.Unlock()
	if s.done {
		return nil
	}
	s.done = true
	s.abortFiles()
	return nil
}

func (s *takeSink) abortFiles() {
	if s.video != nil && s.begun {
		s.video.Abort()
	}
	if s.viewer != nil {
		s.viewer.Close()
	}
	// The staging folder itself is removed by the caller.
}

// finish settles the sink after Generate returned: it closes it when the
// engine succeeded without closing, aborts it on failure. It returns the
// first error of the take's files.
func (s *takeSink) finish(genErr error) error {
	if genErr != nil {
		s.Abort()
		return genErr
	}
	return s.Close()
}

// clip is the finished take as the viewer plays it.
func (s *takeSink) clip() *Clip {
	return NewClip(s.format.Width, s.format.Height, s.frames, s.audio)
}
