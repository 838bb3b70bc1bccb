package media

import (
	"context"
	"errors"
	"fmt"
	"image"
	"io"
	"math"
	"os"
	"sync"
)

// Platform is a platform's native media implementation: MP4 export and the
// decoders for what the pure-Go code does not read (videos, compressed
// audio, HEIF pictures). On Linux, Debian's ffmpeg is registered by this
// package (ffmpeg_linux.go); on macOS app/ registers darwin/avf's
// AVFoundation implementation (avf.Platform()) at start-up; elsewhere there
// is none and those operations fail with ErrNoPlatform.
type Platform struct {
	Name string // "ffmpeg", "AVFoundation"
	// NewMP4Sink writes H.264 + AAC MP4 (see the package-level NewMP4Sink).
	NewMP4Sink func(path string, o MP4Options) (Sink, error)
	// OpenMedia opens videos and non-WAV audio files; format is what
	// Sniff found.
	OpenMedia func(path, format string) (Source, error)
	// OpenImage, if set, decodes pictures instead of the pure-Go decoders
	// (all formats when Images is true, else only the formats they lack).
	OpenImage func(path, format string) (Source, error)
	Images    bool
	// ExportComposition, if set, renders a Composition natively
	// (AVFoundation's AVMutableComposition); nil: RenderComposition.
	ExportComposition func(ctx context.Context, c Composition, dst string, o ExportOptions) error
}

var (
	platformMu sync.RWMutex
	platform   Platform
)

// SetPlatform installs the native implementation (app/ calls it once at
// start-up on macOS with avf.Platform()). It replaces the build's default.
func SetPlatform(p Platform) {
	platformMu.Lock()
	platform = p
	platformMu.Unlock()
}

// CurrentPlatform returns the installed implementation (zero if none).
func CurrentPlatform() Platform {
	platformMu.RLock()
	defer platformMu.RUnlock()
	return platform
}

// MP4Options tune MP4 export. The zero value is the default.
type MP4Options struct {
	// Quality in (0, 1]: 0.25 small file … 1 near-transparent. Zero means
	// DefaultQuality. It sets the H.264 average bit rate (VideoBitRate).
	Quality float64
	// AudioBitRate is the AAC bit rate in bits/s (default 192000).
	AudioBitRate int
}

// DefaultQuality is MP4Options' default quality.
const DefaultQuality = 0.75

// VideoBitRate is the H.264 average bit rate for a w×h, 24 fps video:
// 0.02 + 0.28·quality bits per pixel per frame (about 7 Mbit/s at
// 1344×768 by default, 12 Mbit/s at quality 1).
func (o MP4Options) VideoBitRate(w, h int) int {
	q := o.Quality
	if q <= 0 {
		q = DefaultQuality
	}
	q = math.Min(q, 1)
	return int(math.Round((0.02 + 0.28*q) * float64(w) * float64(h) * FPS))
}

// AudioBitRateOrDefault is AudioBitRate, or 192000 when it is zero.
func (o MP4Options) AudioBitRateOrDefault() int {
	if o.AudioBitRate > 0 {
		return o.AudioBitRate
	}
	return 192000
}

// NewMP4Sink returns a sink that writes an MP4 (H.264 video with BT.709
// tagging, AAC stereo 32 kHz audio) to path: frame n is shown at n/24 s and
// the audio is cut or padded with silence to exactly the video's length.
// The file is written under a temporary name in the same folder and
// renamed by Close; Abort or a failure leaves nothing. The width and height
// must be even. On Linux it runs Debian's ffmpeg; on macOS AVFoundation
// once app/ has called SetPlatform(avf.Platform()).
func NewMP4Sink(path string, o MP4Options) (Sink, error) {
	p := CurrentPlatform()
	if p.NewMP4Sink == nil {
		return nil, fileErr(path, ErrNoPlatform, "MP4 export is not available in this build")
	}
	return p.NewMP4Sink(path, o)
}

// AudioSamplesFor is the number of sample frames that last as long as
// frames video frames: round(frames·rate/24).
func AudioSamplesFor(frames, rate int) int {
	return int((int64(frames)*int64(rate) + FPS/2) / FPS)
}

// ValidateMP4Format checks what MP4 export needs beyond Format.Validate.
func ValidateMP4Format(f Format) error {
	if err := f.Validate(); err != nil {
		return err
	}
	if f.Width%2 != 0 || f.Height%2 != 0 {
		return fmt.Errorf("media: MP4 frame size %d×%d must be even", f.Width, f.Height)
	}
	if f.FPS != FPS {
		return fmt.Errorf("media: MP4 export writes %d fps, got %d", FPS, f.FPS)
	}
	return nil
}

// Open opens a reference file, decoding by content (never by extension):
// pictures with the pure-Go decoders (or the platform's, e.g. ImageIO for
// HEIC), WAV with the pure-Go reader, videos and other audio with the
// platform. Errors are *Error values naming the file and the problem.
func Open(path string) (Source, error) {
	head, err := readHead(path, 4096)
	if err != nil {
		return nil, err
	}
	format, kind := Sniff(head)
	p := CurrentPlatform()
	switch {
	case kind == KindImage:
		if p.OpenImage != nil && (p.Images || !PortableImageFormat(format)) {
			return p.OpenImage(path, format)
		}
		return openImage(path)
	case format == FormatWAV:
		return openWAV(path)
	case kind == KindAudio || kind == KindVideo:
		if p.OpenMedia == nil {
			return nil, fileErr(path, ErrNoPlatform, "%s files need the platform decoder, which this build lacks", format)
		}
		return p.OpenMedia(path, format)
	}
	return nil, notKind(path, format, "a picture, video or sound file")
}

// DefaultOpener is Open, as an Opener.
var DefaultOpener Opener = Open

func readHead(path string, n int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fileErr(path, err, "cannot open")
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return nil, fileErr(path, nil, "is a folder, not a file")
	}
	b := make([]byte, n)
	m, err := io.ReadFull(f, b)
	if m == 0 {
		if err == io.EOF {
			return nil, fileErr(path, nil, "file is empty")
		}
		return nil, fileErr(path, err, "cannot read")
	}
	return b[:m], nil
}

// imageSource is a decoded picture.
type imageSource struct {
	path string
	info Info
	data []byte
	img  *image.RGBA
}

func openImage(path string) (Source, error) {
	// Refuse oversized pictures from the first megabyte, before reading
	// (let alone decoding) the whole file.
	head, err := readHead(path, 1<<20)
	if err != nil {
		return nil, err
	}
	if _, err := ReadImageHeader(path, head); errors.Is(err, ErrTooLarge) {
		return nil, err
	}
	data, err := readFileLimited(path, MaxImageFileBytes)
	if err != nil {
		return nil, err
	}
	hdr, err := ReadImageHeader(path, data)
	if err != nil {
		return nil, err
	}
	return &imageSource{path: path, data: data, info: Info{Kind: KindImage, Width: hdr.Width, Height: hdr.Height, Format: hdr.Format}}, nil
}

func (s *imageSource) Info() Info { return s.info }

func (s *imageSource) Image(ctx context.Context) (*image.RGBA, error) {
	if s.img == nil {
		img, err := DecodeImage(s.path, s.data)
		if err != nil {
			return nil, err
		}
		s.img, s.data = img, nil
	}
	return s.img, nil
}

func (s *imageSource) Frames(ctx context.Context, max int, each func(int, *image.RGBA) error) error {
	img, err := s.Image(ctx)
	if err != nil {
		return err
	}
	return each(0, img)
}

func (s *imageSource) Audio(context.Context) (Audio, error) {
	return Audio{}, fileErr(s.path, ErrNoAudio, "a picture has no sound")
}

func (s *imageSource) Close() error { s.img, s.data = nil, nil; return nil }

// wavSource is a WAV file: its header is read when it is opened (a file
// over the limits is refused without reading its samples), the samples
// when Audio is first called.
type wavSource struct {
	path string
	info Info
	a    *Audio
}

func openWAV(path string) (Source, error) {
	l, err := probeWAV(path)
	if err != nil {
		return nil, err
	}
	return &wavSource{path: path, info: l.info()}, nil
}

func (s *wavSource) Info() Info { return s.info }

func (s *wavSource) Image(context.Context) (*image.RGBA, error) {
	return nil, fileErr(s.path, nil, "a sound file has no picture")
}

func (s *wavSource) Frames(context.Context, int, func(int, *image.RGBA) error) error {
	return fileErr(s.path, nil, "a sound file has no video frames")
}

func (s *wavSource) Audio(context.Context) (Audio, error) {
	if s.a == nil {
		a, err := ReadWAVFile(s.path)
		if err != nil {
			return Audio{}, err
		}
		s.a = &a
	}
	return *s.a, nil
}

func (s *wavSource) Close() error { s.a = nil; return nil }
