// Package avf is H3 Studio's AVFoundation media implementation for macOS:
// MP4 export with AVAssetWriter (H.264 through a pixel-buffer adaptor,
// BT.709 tagged, and AAC stereo), and import with AVAssetReader (reference
// videos and their sound track, audio files: WAV, AIFF, M4A/AAC, MP3) and
// ImageIO (HEIC/HEIF and, optionally, every picture format). It implements
// engine/media's Platform; app/ installs it at start-up with
// media.SetPlatform(avf.Platform()). No ffmpeg is involved on macOS.
//
// The Objective-C classes come from darwinkit v0.5.0; the C functions and
// AV*Key constants darwinkit does not bind (CVPixelBuffer*, CMSampleBuffer*,
// CMBlockBuffer*, CGImageSource*, CMTime helpers) are in one small shim,
// shim_darwin.m. Every file but this one is built only on darwin.
//
// Status: type-checked for darwin/arm64 on Linux (make darwincheck); it has
// NOT run on a Mac yet (docs/media.md).
package avf
