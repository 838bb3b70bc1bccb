//go:build darwin

package avf

import (
	"context"
	"fmt"
	"image"
	"math"
	"time"
	"unsafe"

	"github.com/progrium/darwinkit/macos/avfoundation"
	"github.com/progrium/darwinkit/macos/foundation"

	"h3studio/darwin/objcpool"

	"h3studio/engine/media"
)

// source decodes a video or audio file with AVAssetReader.
type source struct {
	path        string
	info        media.Info
	orientation int // EXIF-style orientation undoing the track's transform
}

// OpenMedia opens a video or audio file (MP4/MOV/M4V with H.264/HEVC/ProRes,
// WAV, AIFF, M4A/AAC, MP3, …: whatever AVFoundation reads).
func OpenMedia(path, format string) (media.Source, error) {
	s := &source{path: path, orientation: 1}
	var err error
	objcpool.With(func() { err = s.probe(format) })
	if err != nil {
		return nil, err
	}
	return s, nil
}

// asset is the file as an autoreleased AVURLAsset. Called inside a pool.
func (s *source) asset() avfoundation.URLAsset {
	return avfoundation.URLAsset_URLAssetWithURLOptions(foundation.URL_FileURLWithPath(s.path), nil)
}

func tracks(a avfoundation.URLAsset) (video, audio avfoundation.AssetTrack) {
	for _, t := range a.Tracks() {
		switch t.MediaType() {
		case avfoundation.MediaTypeVideo:
			if video.IsNil() {
				video = t
			}
		case avfoundation.MediaTypeAudio:
			if audio.IsNil() {
				audio = t
			}
		}
	}
	return video, audio
}

func (s *source) probe(format string) error {
	a := s.asset()
	if !a.IsReadable() {
		return &media.Error{Path: s.path, Problem: fmt.Sprintf("cannot read this %s file (damaged, truncated or an unsupported codec)", format)}
	}
	v, au := tracks(a)
	info := media.Info{Format: format, Duration: time.Duration(seconds(a.Duration()) * float64(time.Second))}
	if !v.IsNil() {
		info.Kind = media.KindVideo
		sz := v.NaturalSize()
		w, h := int(math.Round(sz.Width)), int(math.Round(sz.Height))
		tr := v.PreferredTransform()
		// Quarter turns of the display matrix, as EXIF orientations.
		switch q := int(math.Round(math.Atan2(tr.M12, tr.M11)/(math.Pi/2))) & 3; q {
		case 1:
			s.orientation = 6 // 90° clockwise
		case 2:
			s.orientation = 3
		case 3:
			s.orientation = 8
		}
		info.Width, info.Height = media.OrientedSize(w, h, s.orientation)
		info.FPS = float64(v.NominalFrameRate())
		info.Frames = int(math.Round(info.Duration.Seconds() * info.FPS))
		if !v.IsDecodable() {
			return &media.Error{Path: s.path, Problem: "the video codec is not supported on this Mac", Err: media.ErrUnsupported}
		}
	}
	if !au.IsNil() {
		info.HasAudio = true
		if fds := au.FormatDescriptions(); len(fds) > 0 {
			info.SampleRate, info.Channels, _ = audioFormat(unsafe.Pointer(fds[0].Ptr()))
		}
		if info.Kind == 0 {
			info.Kind = media.KindAudio
		}
	}
	switch {
	case info.Kind == 0:
		return &media.Error{Path: s.path, Problem: "has no video or sound track"}
	case info.Kind == media.KindVideo && int64(info.Width)*int64(info.Height) > media.MaxImagePixels:
		return &media.Error{Path: s.path, Problem: fmt.Sprintf("video frames are %d×%d, too large", info.Width, info.Height), Err: media.ErrTooLarge}
	case info.Duration.Seconds() > media.MaxAudioSeconds:
		return &media.Error{Path: s.path, Problem: fmt.Sprintf("is %.0f s long; the limit is %d s", info.Duration.Seconds(), media.MaxAudioSeconds), Err: media.ErrTooLarge}
	}
	s.info = info
	return nil
}

func (s *source) Info() media.Info { return s.info }

func (s *source) Image(ctx context.Context) (*image.RGBA, error) {
	var first *image.RGBA
	if err := s.Frames(ctx, 1, func(_ int, f *image.RGBA) error { first = f; return nil }); err != nil {
		return nil, err
	}
	return first, nil
}

// reader starts an AVAssetReader on one track with the shim's settings.
// The reader is autoreleased (use it inside the caller's pool); the output
// is owned by the caller, who releases it.
// Called inside a pool.
func (s *source) reader(video bool) (avfoundation.AssetReader, avfoundation.AssetReaderTrackOutput, error) {
	a := s.asset()
	v, au := tracks(a)
	t, set := v, settings(C_videoReaderSettings())
	if !video {
		t, set = au, settings(C_audioReaderSettings())
	}
	var e foundation.Error
	r := avfoundation.NewAssetReaderWithAssetError(a, unsafe.Pointer(&e))
	if err := nsError(e); err != nil || r.IsNil() {
		return r, avfoundation.AssetReaderTrackOutput{}, &media.Error{Path: s.path, Problem: "cannot read", Err: err}
	}
	out, err := newTrackOutput(t, set)
	if err != nil {
		return r, avfoundation.AssetReaderTrackOutput{}, &media.Error{Path: s.path, Problem: "cannot decode this track", Err: err}
	}
	if !r.CanAddOutput(out) {
		out.Release()
		return r, avfoundation.AssetReaderTrackOutput{}, &media.Error{Path: s.path, Problem: "cannot decode this track", Err: media.ErrUnsupported}
	}
	if err := addOutput(r, out); err != nil {
		out.Release()
		return r, avfoundation.AssetReaderTrackOutput{}, &media.Error{Path: s.path, Problem: "cannot decode this track", Err: err}
	}
	if !r.StartReading() {
		out.Release()
		return r, avfoundation.AssetReaderTrackOutput{}, &media.Error{Path: s.path, Problem: "cannot decode", Err: nsError(r.Error())}
	}
	return r, out, nil
}

// read runs fn over a started reader of the video (or sound) track inside a
// pool, and cancels the reader and releases its output afterwards.
func (s *source) read(video bool, fn func(avfoundation.AssetReader, avfoundation.AssetReaderTrackOutput) error) (err error) {
	objcpool.With(func() {
		r, out, e := s.reader(video)
		if e != nil {
			err = e
			return
		}
		defer out.Release()
		defer r.CancelReading()
		err = fn(r, out)
	})
	return err
}

func (s *source) Frames(ctx context.Context, max int, each func(int, *image.RGBA) error) error {
	if s.info.Kind != media.KindVideo {
		return &media.Error{Path: s.path, Problem: "has no video track"}
	}
	n := 0
	err := s.read(true, func(r avfoundation.AssetReader, out avfoundation.AssetReaderTrackOutput) error {
		for max <= 0 || n < max {
			if err := ctx.Err(); err != nil {
				return err
			}
			frame := nextFrame(out)
			if frame == nil {
				break
			}
			if err := each(n, media.Orient(frame, s.orientation)); err != nil {
				return err
			}
			n++
		}
		if r.Status() == avfoundation.AssetReaderStatusFailed {
			return &media.Error{Path: s.path, Problem: "cannot decode the video", Err: nsError(r.Error())}
		}
		return nil
	})
	if err == nil && n == 0 {
		err = &media.Error{Path: s.path, Problem: "the video has no decodable frames"}
	}
	return err
}

// nextFrame is out's next sample buffer as an RGBA image; nil where out has
// run dry or the buffer holds no readable image.
func nextFrame(out avfoundation.IAssetReaderOutput) (frame *image.RGBA) {
	objcpool.With(func() {
		sb := out.CopyNextSampleBuffer()
		if sb == 0 {
			return
		}
		defer release(sb)
		w, h, ok := imageSize(sb)
		if !ok || w <= 0 || h <= 0 {
			return
		}
		img := image.NewRGBA(image.Rect(0, 0, w, h))
		if copyRGBA(sb, img.Pix, w, h) {
			frame = img
		}
	})
	return frame
}

func (s *source) Audio(ctx context.Context) (media.Audio, error) {
	if !s.info.HasAudio {
		return media.Audio{}, &media.Error{Path: s.path, Problem: "has no sound track", Err: media.ErrNoAudio}
	}
	var a media.Audio
	err := s.read(false, func(r avfoundation.AssetReader, out avfoundation.AssetReaderTrackOutput) error {
		complete := readPCM(ctx, out, &a, media.MaxAudioSeconds*768000*2)
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case !complete:
			return &media.Error{Path: s.path, Problem: "cannot decode the sound"}
		case r.Status() == avfoundation.AssetReaderStatusFailed:
			return &media.Error{Path: s.path, Problem: "cannot decode the sound", Err: nsError(r.Error())}
		}
		return nil
	})
	if err != nil {
		return media.Audio{}, err
	}
	if a.Channels <= 0 || a.Rate <= 0 || len(a.Samples) < a.Channels {
		return media.Audio{}, &media.Error{Path: s.path, Problem: "has no audio samples (zero length)"}
	}
	a.Samples = a.Samples[:len(a.Samples)/a.Channels*a.Channels]
	return a, nil
}

// readPCM appends the sample buffers out yields to a as interleaved float32
// PCM, the first buffer giving the rate and channels, until out runs dry, ctx
// ends or a holds more than limit samples (limit <= 0: no limit). complete is
// false where the limit was passed or a buffer could not be copied (it is
// left out and reading goes on).
func readPCM(ctx context.Context, out avfoundation.IAssetReaderOutput, a *media.Audio, limit int) (complete bool) {
	complete = true
	for ctx.Err() == nil {
		done := false
		objcpool.With(func() {
			sb := out.CopyNextSampleBuffer()
			if sb == 0 {
				done = true
				return
			}
			defer release(sb)
			if a.Rate == 0 {
				a.Rate, a.Channels, _ = audioFormat(C_sampleFormat(sb))
			}
			var ok bool
			a.Samples, ok = copyPCM(sb, a.Samples, 1<<20)
			complete = complete && ok
			if limit > 0 && len(a.Samples) > limit {
				complete, done = false, true
			}
		})
		if done {
			break
		}
	}
	return complete
}

func (s *source) Close() error { return nil }
