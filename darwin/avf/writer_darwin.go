//go:build darwin

package avf

import (
	"fmt"
	"image"
	"os"
	"path/filepath"
	"unsafe"

	"github.com/progrium/darwinkit/macos/avfoundation"
	"github.com/progrium/darwinkit/macos/coremedia"
	"github.com/progrium/darwinkit/macos/foundation"
	"github.com/progrium/darwinkit/objc"

	"h3studio/darwin/objcpool"

	"h3studio/engine/atomicfile"
	"h3studio/engine/media"
)

// mp4Sink writes MP4 with AVAssetWriter in two passes, like the Linux
// ffmpeg sink: frames stream into an H.264 video-only temporary file as
// they arrive (the engine delivers all frames before the sound, and
// AVAssetWriter would stall a non-interleaved second input); Close copies
// that video (passthrough, no re-encode) and the sound (AAC, cut or padded
// to the video's length) into a second temporary file, interleaved, and
// renames it over the destination.
type mp4Sink struct {
	path, videoTmp, tmp string
	opts                media.MP4Options
	f                   media.Format
	begun, done         bool
	refused             error // the first frame or sound buffer refused for its size or format
	frames              int
	audio               []float32
	w                   avfoundation.AssetWriter
	in                  avfoundation.AssetWriterInput
	ad                  avfoundation.AssetWriterInputPixelBufferAdaptor
	pix                 []uint8
}

// NewMP4Sink implements media.NewMP4Sink with AVFoundation.
func NewMP4Sink(path string, o media.MP4Options) (media.Sink, error) {
	if o.Quality < 0 || o.Quality > 1 {
		return nil, &media.Error{Path: path, Problem: fmt.Sprintf("MP4 quality %g is outside 0…1", o.Quality)}
	}
	dir := filepath.Dir(path)
	s := &mp4Sink{path: path, opts: o}
	for _, p := range []*string{&s.videoTmp, &s.tmp} {
		// AVAssetWriter refuses to overwrite: reserve a unique name, then free it.
		f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.part.mp4")
		if err != nil {
			s.removeTemps()
			return nil, &media.Error{Path: path, Problem: "cannot write to the destination folder", Err: err}
		}
		f.Close()
		os.Remove(f.Name())
		*p = f.Name()
	}
	return s, nil
}

func (s *mp4Sink) removeTemps() {
	for _, p := range []string{s.videoTmp, s.tmp} {
		if p != "" {
			os.Remove(p)
		}
	}
}

func (s *mp4Sink) fail(err error, what string) error {
	s.Abort()
	return &media.Error{Path: s.path, Problem: what, Err: err}
}

// newWriter is an autoreleased AVAssetWriter of an MP4 at path. Called inside
// a pool.
func newWriter(path string) (avfoundation.AssetWriter, error) {
	var e foundation.Error
	w := avfoundation.NewAssetWriterWithURLFileTypeError(foundation.URL_FileURLWithPath(path), avfoundation.FileTypeMPEG4, unsafe.Pointer(&e))
	if err := nsError(e); err != nil || w.IsNil() {
		return w, fmt.Errorf("cannot create AVAssetWriter: %v", err)
	}
	w.SetShouldOptimizeForNetworkUse(true) // moov first (“fast start”)
	return w, nil
}

func (s *mp4Sink) Begin(f media.Format) error {
	if s.begun {
		return fmt.Errorf("media: MP4 %s: Begin called twice", s.path)
	}
	s.begun = true
	if err := media.ValidateMP4Format(f); err != nil {
		s.removeTemps()
		return &media.Error{Path: s.path, Problem: "cannot write MP4", Err: err}
	}
	s.f = f
	var err error
	objcpool.With(func() {
		w, e := newWriter(s.videoTmp)
		if e != nil {
			err = e
			return
		}
		// The writer is autoreleased: own it before this pool drains (an
		// early failure below goes through Abort, which still uses it).
		// The inputs come from alloc/init and are owned already. All three
		// are released by releaseObjects. (Not objc.Retain(&s.w): its
		// runtime.SetFinalizer on a pointer into the middle of the sink
		// aborts the process.)
		w.Retain()
		s.w = w
		vs := settings(C_videoSettings(f.Width, f.Height, s.opts.VideoBitRate(f.Width, f.Height)))
		if !canApply(s.w, vs, avfoundation.MediaTypeVideo) {
			err = fmt.Errorf("AVAssetWriter rejects H.264 %d×%d at %d bit/s", f.Width, f.Height, s.opts.VideoBitRate(f.Width, f.Height))
			return
		}
		if s.in, err = newWriterInput(avfoundation.MediaTypeVideo, vs, nil); err != nil {
			return
		}
		s.in.SetExpectsMediaDataInRealTime(false)
		if s.ad, err = newPixelAdaptor(s.in, settings(C_pixelAttributes(f.Width, f.Height))); err != nil {
			return
		}
		if !s.w.CanAddInput(s.in) {
			err = fmt.Errorf("AVAssetWriter cannot take an H.264 %d×%d input", f.Width, f.Height)
			return
		}
		if err = addInput(s.w, s.in); err != nil {
			return
		}
		if !s.w.StartWriting() {
			err = fmt.Errorf("AVAssetWriter did not start: %v", nsError(s.w.Error()))
			return
		}
		err = startSession(s.w, cmTime(0, media.FPS))
	})
	if err != nil {
		return s.fail(err, "cannot start MP4 export")
	}
	return nil
}

func (s *mp4Sink) WriteFrame(img *image.RGBA) error {
	if !s.begun || s.done {
		return fmt.Errorf("media: MP4 %s: WriteFrame outside Begin…Close", s.path)
	}
	if b := img.Bounds(); b.Dx() != s.f.Width || b.Dy() != s.f.Height {
		return s.refuse(fmt.Errorf("media: MP4 %s: frame %d is %d×%d, the output is %d×%d", s.path, s.frames, b.Dx(), b.Dy(), s.f.Width, s.f.Height))
	}
	var err error
	objcpool.With(func() {
		if err = waitReady(s.in, s.w); err != nil {
			return
		}
		pb := pixelBuffer(s.ad.PixelBufferPool(), img.Pix[img.PixOffset(img.Rect.Min.X, img.Rect.Min.Y):], s.f.Width, s.f.Height, img.Stride)
		if pb == 0 {
			err = fmt.Errorf("no pixel buffer from the adaptor's pool")
			return
		}
		defer release(pb)
		// Frame n is presented at n/24 s exactly.
		ok, e := appendPixelBuffer(s.ad, pb, cmTime(int64(s.frames), media.FPS))
		if e != nil {
			err = e
		} else if !ok {
			err = fmt.Errorf("AVAssetWriter refused frame %d: %v", s.frames, nsError(s.w.Error()))
		}
	})
	if err != nil {
		return s.fail(err, "video encoding failed")
	}
	s.frames++
	return nil
}

func (s *mp4Sink) WriteAudio(a media.Audio) error {
	if !s.begun || s.done {
		return fmt.Errorf("media: MP4 %s: WriteAudio outside Begin…Close", s.path)
	}
	if a.Rate != s.f.SampleRate || a.Channels != s.f.Channels || len(a.Samples)%max(a.Channels, 1) != 0 {
		return s.refuse(fmt.Errorf("media: MP4 %s: audio is %d Hz × %d (%d samples), the output is %d Hz × %d", s.path, a.Rate, a.Channels, len(a.Samples), s.f.SampleRate, s.f.Channels))
	}
	s.audio = append(s.audio, a.Samples...)
	return nil
}

// refuse records the first refused write: Close then saves nothing
// (media.Sink: after an error, nothing partial is left).
func (s *mp4Sink) refuse(err error) error {
	if s.refused == nil {
		s.refused = err
	}
	return err
}

// finish marks inputs finished and waits for the writer.
func finish(w avfoundation.AssetWriter, end coremedia.Time, ins ...avfoundation.AssetWriterInput) error {
	for _, in := range ins {
		in.MarkAsFinished()
	}
	w.EndSessionAtSourceTime(end)
	done := make(chan struct{})
	w.FinishWritingWithCompletionHandler(func() { close(done) })
	<-done
	if w.Status() != avfoundation.AssetWriterStatusCompleted {
		return fmt.Errorf("AVAssetWriter did not complete: %v", nsError(w.Error()))
	}
	return nil
}

func (s *mp4Sink) Close() error {
	if s.done {
		return nil
	}
	if !s.begun {
		s.done = true
		s.removeTemps()
		return &media.Error{Path: s.path, Problem: "closed before Begin"}
	}
	if s.refused != nil {
		return s.fail(s.refused, "not saved: a frame or sound buffer was refused earlier")
	}
	if s.frames == 0 {
		return s.fail(nil, "no frames were written")
	}
	end := cmTime(int64(s.frames), media.FPS)
	var err error
	objcpool.With(func() { err = finish(s.w, end, s.in) })
	if err != nil {
		return s.fail(err, "video encoding failed")
	}
	s.releaseObjects()
	// The sound lasts exactly as long as the video.
	n := media.AudioSamplesFor(s.frames, s.f.SampleRate) * s.f.Channels
	pcm := make([]float32, n)
	copy(pcm, s.audio)
	objcpool.With(func() { err = mux(s.videoTmp, s.tmp, pcm, s.f, s.opts, end) })
	if err != nil {
		return s.fail(err, "muxing video and sound failed")
	}
	s.done = true
	os.Remove(s.videoTmp)
	// os.CreateTemp made it 0600; the finished MP4 gets what every output
	// gets (0644, or the permission of the file it replaces).
	if err := os.Chmod(s.tmp, atomicfile.Mode(s.path)); err != nil {
		os.Remove(s.tmp)
		return &media.Error{Path: s.path, Problem: "cannot set the finished file's permission", Err: err}
	}
	if err := os.Rename(s.tmp, s.path); err != nil {
		os.Remove(s.tmp)
		return &media.Error{Path: s.path, Problem: "cannot move the finished file into place", Err: err}
	}
	return nil
}

// mux copies the H.264 samples of videoPath and encodes pcm as AAC into
// out, appending both interleaved by time.
// Called inside a pool.
func mux(videoPath, out string, pcm []float32, f media.Format, o media.MP4Options, end coremedia.Time) error {
	asset := avfoundation.URLAsset_URLAssetWithURLOptions(foundation.URL_FileURLWithPath(videoPath), nil)
	var track avfoundation.AssetTrack
	for _, t := range asset.Tracks() {
		if t.MediaType() == avfoundation.MediaTypeVideo {
			track = t
			break
		}
	}
	if track.IsNil() {
		return fmt.Errorf("the encoded video has no video track")
	}
	var e foundation.Error
	r := avfoundation.NewAssetReaderWithAssetError(asset, unsafe.Pointer(&e))
	if err := nsError(e); err != nil || r.IsNil() {
		return fmt.Errorf("cannot read back the encoded video: %v", err)
	}
	ro, err := newTrackOutput(track, objc.Object{}) // nil settings: compressed passthrough
	if err != nil {
		return err
	}
	defer ro.Release() // alloc/init: owned; the reader keeps its own reference
	if err := addOutput(r, ro); err != nil {
		return err
	}
	if !r.StartReading() {
		return fmt.Errorf("cannot read back the encoded video: %v", nsError(r.Error()))
	}
	first := ro.CopyNextSampleBuffer()
	if first == 0 {
		return fmt.Errorf("the encoded video has no samples")
	}
	hint := coremedia.FormatDescriptionRef(uintptr(C_sampleFormat(first)))
	w, err := newWriter(out)
	if err != nil {
		release(first)
		return err
	}
	vin, err := newWriterInput(avfoundation.MediaTypeVideo, objc.Object{}, unsafe.Pointer(uintptr(hint)))
	if err != nil {
		release(first)
		return err
	}
	defer vin.Release() // alloc/init: owned; the writer keeps its own references
	as, err := audioSettings(w, f, o.AudioBitRateOrDefault())
	if err != nil {
		release(first)
		return err
	}
	ain, err := newWriterInput(avfoundation.MediaTypeAudio, as, nil)
	if err != nil {
		release(first)
		return err
	}
	defer ain.Release()
	vin.SetExpectsMediaDataInRealTime(false)
	ain.SetExpectsMediaDataInRealTime(false)
	if !w.CanAddInput(vin) || !w.CanAddInput(ain) {
		release(first)
		return fmt.Errorf("AVAssetWriter cannot take the video and AAC inputs")
	}
	for _, in := range []avfoundation.AssetWriterInput{vin, ain} {
		if err := addInput(w, in); err != nil {
			release(first)
			return err
		}
	}
	if !w.StartWriting() {
		release(first)
		return fmt.Errorf("AVAssetWriter did not start: %v", nsError(w.Error()))
	}
	if err := startSession(w, cmTime(0, media.FPS)); err != nil {
		release(first)
		return err
	}
	const chunk = 4096 // sample frames per audio buffer
	next, vDone := first, false
	var aFrame int64
	total := int64(len(pcm) / f.Channels)
	for !vDone || aFrame < total {
		// Audio up to the video's position (or all of it once video is done).
		for aFrame < total && (vDone || float64(aFrame)/float64(f.SampleRate) <= videoTime(next)+0.5) {
			if err := waitReady(ain, w); err != nil {
				release(next)
				return err
			}
			n := min(int64(chunk), total-aFrame)
			sb := audioSample(pcm[aFrame*int64(f.Channels):(aFrame+n)*int64(f.Channels)], f.Channels, f.SampleRate, aFrame)
			if sb == 0 {
				release(next)
				return fmt.Errorf("cannot build an audio sample buffer")
			}
			ok, err := appendSample(ain, sb)
			release(sb)
			if err != nil {
				release(next)
				return err
			}
			if !ok {
				release(next)
				return fmt.Errorf("AVAssetWriter refused audio: %v", nsError(w.Error()))
			}
			aFrame += n
		}
		if vDone {
			continue
		}
		if err := waitReady(vin, w); err != nil {
			release(next)
			return err
		}
		ok, err := appendSample(vin, next)
		release(next)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("AVAssetWriter refused video: %v", nsError(w.Error()))
		}
		if next = ro.CopyNextSampleBuffer(); next == 0 {
			vDone = true
			if r.Status() == avfoundation.AssetReaderStatusFailed {
				return fmt.Errorf("reading back the encoded video failed: %v", nsError(r.Error()))
			}
		}
	}
	return finish(w, end, vin, ain)
}

// audioSettings is AAC at bitRate, or at the highest of the fallback rates
// the writer accepts for f's sample rate and channels (Apple's AAC encoder
// caps the bit rate by sample rate; 192 kbit/s at 32 kHz stereo is not
// documented).
func audioSettings(w avfoundation.AssetWriter, f media.Format, bitRate int) (objc.Object, error) {
	for _, r := range []int{bitRate, 160000, 128000, 96000, 64000} {
		if r > bitRate {
			continue
		}
		if s := settings(C_audioSettings(f.SampleRate, f.Channels, r)); canApply(w, s, avfoundation.MediaTypeAudio) {
			return s, nil
		}
	}
	return objc.Object{}, fmt.Errorf("AVAssetWriter accepts no AAC bit rate up to %d bit/s at %d Hz, %d channels", bitRate, f.SampleRate, f.Channels)
}

func videoTime(sb coremedia.SampleBufferRef) float64 {
	if sb == 0 {
		return 1e18
	}
	return float64(C_sampleTime(sb))
}

func (s *mp4Sink) Abort() error {
	if s.done {
		return nil
	}
	s.done = true
	if s.begun && !s.w.IsNil() {
		objcpool.With(func() {
			if s.w.Status() == avfoundation.AssetWriterStatusWriting {
				s.w.CancelWriting()
			}
		})
	}
	s.releaseObjects()
	s.removeTemps()
	return nil
}

// releaseObjects gives up the sink's references to the first pass's
// writer, input and adaptor (each released once; safe to call again).
func (s *mp4Sink) releaseObjects() {
	objcpool.With(func() {
		if !s.ad.IsNil() {
			s.ad.Release()
		}
		if !s.in.IsNil() {
			s.in.Release()
		}
		if !s.w.IsNil() {
			s.w.Release()
		}
	})
	s.ad = avfoundation.AssetWriterInputPixelBufferAdaptor{}
	s.in = avfoundation.AssetWriterInput{}
	s.w = avfoundation.AssetWriter{}
}
