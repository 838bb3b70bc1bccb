package media

import (
	"encoding/binary"
	"path/filepath"
	"strings"
)

// Container formats recognised from a file's first bytes. The extension is
// never trusted: a file is decoded as what its content is.
const (
	FormatUnknown = ""
	FormatPNG     = "PNG"
	FormatJPEG    = "JPEG"
	FormatGIF     = "GIF"
	FormatWebP    = "WebP"
	FormatBMP     = "BMP"
	FormatTIFF    = "TIFF"
	FormatHEIF    = "HEIF" // HEIC/HEIF/AVIF still images (ISO BMFF, image brands)
	FormatWAV     = "WAV"
	FormatAIFF    = "AIFF"
	FormatMP3     = "MP3"
	FormatFLAC    = "FLAC"
	FormatOgg     = "Ogg"
	FormatM4A     = "M4A"      // ISO BMFF with an audio-only brand
	FormatMP4     = "MP4"      // ISO BMFF / QuickTime movie
	FormatMKV     = "Matroska" // also WebM
	FormatAVI     = "AVI"
	FormatText    = "text"
	formatAVIF    = "AVIF"
)

// Sniff names the container format of data (the first 64 bytes or more of a
// file) and the kind of media it holds. Unknown content gives FormatUnknown
// and kind 0.
func Sniff(data []byte) (format string, kind Kind) {
	has := func(off int, s string) bool {
		return len(data) >= off+len(s) && string(data[off:off+len(s)]) == s
	}
	switch {
	case has(0, "\x89PNG\r\n\x1a\n"):
		return FormatPNG, KindImage
	case has(0, "\xff\xd8\xff"):
		return FormatJPEG, KindImage
	case has(0, "GIF87a"), has(0, "GIF89a"):
		return FormatGIF, KindImage
	case has(0, "RIFF") && has(8, "WEBP"):
		return FormatWebP, KindImage
	case has(0, "RIFF") && has(8, "WAVE"), has(0, "RF64") && has(8, "WAVE"):
		return FormatWAV, KindAudio
	case has(0, "RIFF") && has(8, "AVI "):
		return FormatAVI, KindVideo
	case has(0, "BM") && len(data) >= 18 && binary.LittleEndian.Uint32(data[14:]) >= 12 && binary.LittleEndian.Uint32(data[14:]) <= 124:
		return FormatBMP, KindImage
	case has(0, "II*\x00"), has(0, "MM\x00*"):
		return FormatTIFF, KindImage
	case has(0, "FORM") && (has(8, "AIFF") || has(8, "AIFC")):
		return FormatAIFF, KindAudio
	case has(0, "fLaC"):
		return FormatFLAC, KindAudio
	case has(0, "OggS"):
		return FormatOgg, KindAudio
	case has(0, "ID3"):
		return FormatMP3, KindAudio
	case len(data) >= 2 && data[0] == 0xff && data[1]&0xe0 == 0xe0 && data[1]&0x06 != 0:
		// MPEG audio frame sync (layer bits non-zero). ADTS AAC has layer 0.
		return FormatMP3, KindAudio
	case len(data) >= 2 && data[0] == 0xff && data[1]&0xf6 == 0xf0:
		return FormatM4A, KindAudio // raw ADTS AAC
	case has(0, "\x1a\x45\xdf\xa3"):
		return FormatMKV, KindVideo
	case has(4, "ftyp"):
		return sniffFtyp(data)
	case has(4, "moov"), has(4, "mdat"), has(4, "wide"), has(4, "free"):
		return FormatMP4, KindVideo
	}
	if looksLikeText(data) {
		return FormatText, 0
	}
	return FormatUnknown, 0
}

func sniffFtyp(data []byte) (string, Kind) {
	size := int(binary.BigEndian.Uint32(data))
	if size < 16 || size > len(data) {
		size = len(data)
	}
	brands := []string{}
	if len(data) >= 12 {
		brands = append(brands, string(data[8:12]))
	}
	for off := 16; off+4 <= size; off += 4 {
		brands = append(brands, string(data[off:off+4]))
	}
	major := ""
	if len(brands) > 0 {
		major = brands[0]
	}
	switch major {
	case "heic", "heix", "heim", "heis", "hevc", "hevx", "mif1", "msf1":
		return FormatHEIF, KindImage
	case "avif", "avis":
		return formatAVIF, KindImage
	case "M4A ", "M4B ", "M4P ", "F4A ", "F4B ":
		return FormatM4A, KindAudio
	}
	return FormatMP4, KindVideo
}

func looksLikeText(data []byte) bool {
	if len(data) == 0 {
		return false
	}
	n := len(data)
	if n > 512 {
		n = 512
	}
	for _, c := range data[:n] {
		if c < 0x09 || (c > 0x0d && c < 0x20 && c != 0x1b) {
			return false
		}
	}
	return true
}

// extFormat is what a file's extension claims, for error messages only.
func extFormat(path string) string {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".png":
		return FormatPNG
	case ".jpg", ".jpeg", ".jpe", ".jfif":
		return FormatJPEG
	case ".gif":
		return FormatGIF
	case ".webp":
		return FormatWebP
	case ".bmp":
		return FormatBMP
	case ".tif", ".tiff":
		return FormatTIFF
	case ".heic", ".heif", ".hif":
		return FormatHEIF
	case ".avif":
		return formatAVIF
	case ".wav", ".wave":
		return FormatWAV
	case ".aif", ".aiff", ".aifc":
		return FormatAIFF
	case ".mp3":
		return FormatMP3
	case ".flac":
		return FormatFLAC
	case ".ogg", ".oga", ".opus":
		return FormatOgg
	case ".m4a", ".aac", ".m4b":
		return FormatM4A
	case ".mp4", ".m4v", ".mov", ".3gp":
		return FormatMP4
	case ".mkv", ".webm":
		return FormatMKV
	case ".avi":
		return FormatAVI
	}
	return FormatUnknown
}

func describeFormat(f string) string {
	switch f {
	case FormatUnknown:
		return "unrecognised data"
	case FormatText:
		return "text"
	}
	return f + " data"
}
