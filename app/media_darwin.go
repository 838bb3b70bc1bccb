//go:build darwin

package main

import (
	"h3studio/darwin/avf"
	"h3studio/engine/media"
)

// On macOS, media export and import go through AVFoundation/ImageIO
// (never ffmpeg): install darwin/avf as engine/media's platform. On Linux,
// engine/media registers Debian's ffmpeg itself (ffmpeg_linux.go).
func init() { media.SetPlatform(avf.Platform()) }
