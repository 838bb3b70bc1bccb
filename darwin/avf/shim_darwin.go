//go:build darwin

package avf

/*
#cgo CFLAGS: -x objective-c -fobjc-arc
#cgo LDFLAGS: -framework AVFoundation -framework CoreMedia -framework CoreVideo -framework ImageIO -framework CoreGraphics -framework Foundation -framework AudioToolbox
#include <stdlib.h>
#include "shim_darwin.h"
*/
import "C"

import (
	"fmt"
	"time"
	"unsafe"

	"github.com/progrium/darwinkit/macos/avfoundation"
	"github.com/progrium/darwinkit/macos/coremedia"
	"github.com/progrium/darwinkit/macos/corevideo"
	"github.com/progrium/darwinkit/macos/foundation"
	"github.com/progrium/darwinkit/objc"

	"h3studio/engine/media"
)

// Platform is the AVFoundation implementation of media.Platform. app/
// installs it on macOS: media.SetPlatform(avf.Platform()). Pictures in the
// formats the pure-Go decoders read (PNG, JPEG, GIF, WebP, BMP, TIFF) stay
// with those decoders, whose PIL parity is tested on Linux; ImageIO decodes
// HEIC/HEIF/AVIF. PlatformImageIO sends every picture through ImageIO.
func Platform() media.Platform {
	return media.Platform{Name: "AVFoundation", NewMP4Sink: NewMP4Sink, OpenMedia: OpenMedia, OpenImage: OpenImage, ExportComposition: ExportComposition}
}

// PlatformImageIO is Platform with ImageIO decoding every picture format.
func PlatformImageIO() media.Platform {
	p := Platform()
	p.Images = true
	return p
}

// settings wraps a shim-built NSDictionary (autoreleased) as an object.
func settings(p unsafe.Pointer) objc.Object { return objc.ObjectFrom(p) }

// nsError is an NSError out-parameter as a Go error. Called inside a pool.
func nsError(e foundation.Error) error {
	if e.IsNil() {
		return nil
	}
	return foundation.ToGoError(e)
}

func cmTime(v int64, scale int32) coremedia.Time {
	return coremedia.Time{Value: v, Timescale: scale, Flags: 1} // kCMTimeFlags_Valid
}

func seconds(t coremedia.Time) float64 {
	if t.Timescale == 0 || t.Flags&1 == 0 {
		return 0
	}
	return float64(t.Value) / float64(t.Timescale)
}

// waitReady polls an input until it accepts data (inputs are not
// real-time, so AVAssetWriter paces them), failing if the writer fails.
func waitReady(in avfoundation.AssetWriterInput, w avfoundation.AssetWriter) error {
	deadline := time.Now().Add(60 * time.Second)
	for !in.IsReadyForMoreMediaData() {
		if w.Status() == avfoundation.AssetWriterStatusFailed {
			return fmt.Errorf("AVAssetWriter failed: %v", nsError(w.Error()))
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("AVAssetWriter input not ready after 60 s")
		}
		time.Sleep(time.Millisecond)
	}
	return nil
}

func pixelBuffer(pool corevideo.PixelBufferPoolRef, pix []uint8, w, h, stride int) corevideo.PixelBufferRef {
	return corevideo.PixelBufferRef(uintptr(C.h3_pixel_buffer(unsafe.Pointer(uintptr(pool)), (*C.uint8_t)(unsafe.Pointer(&pix[0])), C.int(w), C.int(h), C.int(stride))))
}

func audioSample(pcm []float32, channels, rate int, start int64) coremedia.SampleBufferRef {
	return coremedia.SampleBufferRef(uintptr(C.h3_audio_sample((*C.float)(unsafe.Pointer(&pcm[0])), C.int(len(pcm)/channels), C.int(channels), C.int(rate), C.int64_t(start))))
}

func release[T ~uintptr](r T) { C.h3_release(unsafe.Pointer(uintptr(r))) }

func cstring(s string) (*C.char, func()) {
	c := C.CString(s)
	return c, func() { C.free(unsafe.Pointer(c)) }
}

// Thin wrappers so that only this file imports "C".

func C_videoSettings(w, h, bitRate int) unsafe.Pointer {
	return C.h3_video_settings(C.int(w), C.int(h), C.int(bitRate))
}

func C_pixelAttributes(w, h int) unsafe.Pointer {
	return C.h3_pixel_buffer_attributes(C.int(w), C.int(h))
}

func C_audioSettings(rate, channels, bitRate int) unsafe.Pointer {
	return C.h3_audio_settings(C.int(rate), C.int(channels), C.int(bitRate))
}

func C_videoReaderSettings() unsafe.Pointer { return C.h3_video_reader_settings() }
func C_audioReaderSettings() unsafe.Pointer { return C.h3_audio_reader_settings() }

func C_sampleFormat(sb coremedia.SampleBufferRef) unsafe.Pointer {
	return C.h3_sample_format(unsafe.Pointer(uintptr(sb)))
}

func C_sampleTime(sb coremedia.SampleBufferRef) float64 {
	return float64(C.h3_sample_time(unsafe.Pointer(uintptr(sb))))
}

func imageSize(sb coremedia.SampleBufferRef) (int, int, bool) {
	var w, h C.int
	ok := C.h3_image_size(unsafe.Pointer(uintptr(sb)), &w, &h) != 0
	return int(w), int(h), ok
}

func copyRGBA(sb coremedia.SampleBufferRef, pix []uint8, w, h int) bool {
	return C.h3_copy_rgba(unsafe.Pointer(uintptr(sb)), (*C.uint8_t)(unsafe.Pointer(&pix[0])), C.int(w), C.int(h)) != 0
}

// copyPCM appends a sample buffer's float32 samples to dst.
func copyPCM(sb coremedia.SampleBufferRef, dst []float32, max int) ([]float32, bool) {
	start := len(dst)
	dst = append(dst, make([]float32, max)...)
	n := C.h3_copy_pcm(unsafe.Pointer(uintptr(sb)), (*C.float)(unsafe.Pointer(&dst[start])), C.long(max))
	if n < 0 {
		return dst[:start], false
	}
	return dst[:start+int(n)], true
}

func audioFormat(fd unsafe.Pointer) (rate, channels int, ok bool) {
	var r, c C.int
	ok = C.h3_audio_format(fd, &r, &c) != 0
	return int(r), int(c), ok
}

func imageInfo(path string) (w, h, orientation int, ok bool) {
	cs, free := cstring(path)
	defer free()
	var cw, ch, co C.int
	ok = C.h3_image_info(cs, &cw, &ch, &co) != 0
	return int(cw), int(ch), int(co), ok
}

func imageDecode(path string, pix []uint8, w, h int) bool {
	cs, free := cstring(path)
	defer free()
	return C.h3_image_decode(cs, (*C.uint8_t)(unsafe.Pointer(&pix[0])), C.int(w), C.int(h)) != 0
}

// Messages that raise an Objective-C exception go through the shim's @try
// (an exception cannot be caught in Go: it would end the process).

// shimErr is the shim's exception text (malloc'd) as an error, or nil.
func shimErr(what string, c *C.char) error {
	if c == nil {
		return nil
	}
	defer C.free(unsafe.Pointer(c))
	return fmt.Errorf("%s: Objective-C exception %s", what, C.GoString(c))
}

// newWriterInput is an owned AVAssetWriterInput (hint may be nil).
func newWriterInput(mediaType avfoundation.MediaType, settings objc.Object, hint unsafe.Pointer) (avfoundation.AssetWriterInput, error) {
	mt, free := cstring(string(mediaType))
	defer free()
	var out unsafe.Pointer
	err := shimErr("AVAssetWriterInput initWithMediaType:outputSettings:sourceFormatHint:", C.h3_writer_input(mt, settings.Ptr(), hint, &out))
	return avfoundation.AssetWriterInputFrom(out), err
}

// newPixelAdaptor is an owned pixel-buffer adaptor of in.
func newPixelAdaptor(in avfoundation.AssetWriterInput, attributes objc.Object) (avfoundation.AssetWriterInputPixelBufferAdaptor, error) {
	var out unsafe.Pointer
	err := shimErr("AVAssetWriterInputPixelBufferAdaptor initWithAssetWriterInput:sourcePixelBufferAttributes:", C.h3_pixel_adaptor(in.Ptr(), attributes.Ptr(), &out))
	return avfoundation.AssetWriterInputPixelBufferAdaptorFrom(out), err
}

func addInput(w avfoundation.AssetWriter, in avfoundation.AssetWriterInput) error {
	return shimErr("AVAssetWriter addInput:", C.h3_writer_add_input(w.Ptr(), in.Ptr()))
}

func startSession(w avfoundation.AssetWriter, t coremedia.Time) error {
	return shimErr("AVAssetWriter startSessionAtSourceTime:", C.h3_writer_start_session(w.Ptr(), C.int64_t(t.Value), C.int32_t(t.Timescale)))
}

func appendPixelBuffer(ad avfoundation.AssetWriterInputPixelBufferAdaptor, pb corevideo.PixelBufferRef, t coremedia.Time) (bool, error) {
	var ok C.int
	err := shimErr("appendPixelBuffer:withPresentationTime:", C.h3_append_pixel_buffer(ad.Ptr(), unsafe.Pointer(uintptr(pb)), C.int64_t(t.Value), C.int32_t(t.Timescale), &ok))
	return ok != 0, err
}

func appendSample(in avfoundation.AssetWriterInput, sb coremedia.SampleBufferRef) (bool, error) {
	var ok C.int
	err := shimErr("appendSampleBuffer:", C.h3_append_sample(in.Ptr(), unsafe.Pointer(uintptr(sb)), &ok))
	return ok != 0, err
}

// newTrackOutput is an owned track output (settings may be nil: passthrough).
func newTrackOutput(track avfoundation.AssetTrack, settings objc.Object) (avfoundation.AssetReaderTrackOutput, error) {
	var out unsafe.Pointer
	err := shimErr("AVAssetReaderTrackOutput initWithTrack:outputSettings:", C.h3_reader_output(track.Ptr(), settings.Ptr(), &out))
	return avfoundation.AssetReaderTrackOutputFrom(out), err
}

// readerOutput is any AVAssetReaderOutput (track, video composition, audio mix).
type readerOutput interface{ Ptr() unsafe.Pointer }

// addOutput sends addOutput: through the shim's @try (it raises when the
// output does not fit the reader).
func addOutput(r avfoundation.AssetReader, o readerOutput) error {
	return shimErr("AVAssetReader addOutput:", C.h3_reader_add_output(r.Ptr(), o.Ptr()))
}

// canApply reports whether w accepts settings for mediaType.
func canApply(w avfoundation.AssetWriter, settings objc.Object, mediaType avfoundation.MediaType) bool {
	mt, free := cstring(string(mediaType))
	defer free()
	return C.h3_can_apply(w.Ptr(), settings.Ptr(), mt) != 0
}
