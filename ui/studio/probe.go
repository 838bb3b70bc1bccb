package studio

import (
	"context"
	"errors"
	"fmt"
	"image"
	_ "image/gif" // picture formats the portable decoder reads
	_ "image/jpeg"
	_ "image/png"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	_ "golang.org/x/image/bmp"
	_ "golang.org/x/image/tiff"
	_ "golang.org/x/image/webp"

	"h3studio/engine/media"
	"h3studio/engine/take"
)

// File kinds by name. Pictures the portable decoder cannot read (HEIC) and
// every video and compressed sound need the build's media opener
// (AVFoundation on macOS).
var (
	imageExts = map[string]bool{".png": true, ".jpg": true, ".jpeg": true, ".gif": true, ".webp": true, ".bmp": true, ".tif": true, ".tiff": true, ".heic": true, ".heif": true}
	videoExts = map[string]bool{".mp4": true, ".mov": true, ".m4v": true}
	audioExts = map[string]bool{".wav": true, ".wave": true, ".aif": true, ".aiff": true, ".m4a": true, ".aac": true, ".mp3": true, ".caf": true}
)

// SupportedTypes is the list shown when a file is refused.
const SupportedTypes = "pictures (PNG, JPEG, HEIC, WebP, TIFF, BMP, GIF), videos (MP4, MOV, M4V) and sound (WAV, AIFF, M4A, MP3)"

// MaxPicturePixels refuses huge pictures before decoding them.
const MaxPicturePixels = 100_000_000

// ErrUnsupported marks a file H3 Studio cannot use at all.
var ErrUnsupported = errors.New("unsupported file")

// Classify says what kind of input a file is, from its name and, for unknown
// names, its first bytes. Folders and unknown types are refused with a
// message that names the file.
func Classify(path string) (media.Kind, error) {
	st, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return 0, fmt.Errorf("%s: the file does not exist", filepath.Base(path))
		}
		return 0, fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	if st.IsDir() {
		return 0, fmt.Errorf("%s is a folder: %w; drop the files inside it instead", filepath.Base(path), ErrUnsupported)
	}
	ext := strings.ToLower(filepath.Ext(path))
	switch {
	case imageExts[ext]:
		return media.KindImage, nil
	case videoExts[ext]:
		return media.KindVideo, nil
	case audioExts[ext]:
		return media.KindAudio, nil
	}
	// Unknown name: look at the bytes.
	f, err := os.Open(path)
	if err == nil {
		head := make([]byte, 512)
		n, _ := io.ReadFull(f, head)
		f.Close()
		ct := http.DetectContentType(head[:n])
		switch {
		case strings.HasPrefix(ct, "image/"):
			return media.KindImage, nil
		case ct == "video/mp4" || ct == "video/quicktime":
			return media.KindVideo, nil
		case ct == "audio/wave" || ct == "audio/aiff" || ct == "audio/mpeg":
			return media.KindAudio, nil
		}
	}
	return 0, fmt.Errorf("%s is not a picture, video or sound file H3 Studio can use: %w (it reads %s)", filepath.Base(path), ErrUnsupported, SupportedTypes)
}

// Probe reads a file for display and checking: its size or duration, a
// thumbnail, a sound envelope and a content hash. It never fails: problems
// become the returned Media's State and Note. opener may be nil (then
// videos and compressed sound are accepted without preview).
func Probe(ctx context.Context, path string, kind media.Kind, opener media.Opener) Media {
	m := Media{Path: path, Kind: kind, State: MediaReady}
	st, err := os.Stat(path)
	if err != nil {
		m.State, m.Note = MediaMissing, "the file is gone"
		return m
	}
	if st.Size() == 0 {
		m.State, m.Note = MediaBroken, "the file is empty"
		return m
	}
	h, err := take.HashFile(path)
	if err != nil {
		m.State, m.Note = MediaBroken, err.Error()
		return m
	}
	m.Hash = h
	ext := strings.ToLower(filepath.Ext(path))

	// The build's decoder first (orientation, HEIC, video, AAC …).
	if opener != nil {
		if ok := probeWithOpener(ctx, &m, opener); ok {
			return m
		}
		if m.State == MediaBroken {
			return m
		}
	}
	switch kind {
	case media.KindImage:
		probeImage(&m)
	case media.KindAudio:
		if ext == ".wav" || ext == ".wave" {
			probeWAV(&m)
		} else {
			m.State, m.Note = MediaLimited, "this build can't read this sound format yet, so it can't be previewed or its length checked"
		}
	case media.KindVideo:
		m.State, m.Note = MediaLimited, "this build can't read videos yet, so it can't be previewed or its length checked"
	}
	return m
}

func probeWithOpener(ctx context.Context, m *Media, opener media.Opener) bool {
	src, err := opener(m.Path)
	if err != nil {
		if errors.Is(err, errors.ErrUnsupported) || errors.Is(err, media.ErrNoPlatform) {
			return false // the portable fallbacks below say what they can
		}
		m.State, m.Note = MediaBroken, mediaProblem(err)
		return false
	}
	defer src.Close()
	info := src.Info()
	m.Info = info
	if info.Kind == media.KindImage || info.Kind == media.KindVideo {
		img, err := src.Image(ctx)
		if err != nil {
			m.State, m.Note = MediaBroken, mediaProblem(err)
			return false
		}
		m.Thumb = Scale(img, thumbEdge, thumbEdge)
	}
	if info.HasAudio {
		if a, err := src.Audio(ctx); err == nil {
			m.Peaks = Peaks(a, 256)
		}
	}
	m.State = MediaReady
	return true
}

// mediaProblem is a media-layer error in the user's words (the file is
// already named next to it).
func mediaProblem(err error) string {
	var me *media.Error
	if errors.As(err, &me) {
		if me.Err != nil && !errors.Is(me.Err, media.ErrUnsupported) && !errors.Is(me.Err, media.ErrTooLarge) {
			return me.Problem + " (" + me.Err.Error() + ")"
		}
		return me.Problem
	}
	return err.Error()
}

func probeImage(m *Media) {
	f, err := os.Open(m.Path)
	if err != nil {
		m.State, m.Note = MediaBroken, err.Error()
		return
	}
	defer f.Close()
	cfg, format, err := image.DecodeConfig(f)
	if err != nil {
		if ext := strings.ToLower(filepath.Ext(m.Path)); ext == ".heic" || ext == ".heif" {
			m.State, m.Note = MediaLimited, "HEIC pictures are read by macOS; this build can't preview them"
			return
		}
		m.State, m.Note = MediaBroken, "it is not a picture this app can read (its contents are not PNG, JPEG, GIF, WebP, BMP or TIFF)"
		return
	}
	if cfg.Width*cfg.Height > MaxPicturePixels || cfg.Width <= 0 || cfg.Height <= 0 {
		m.State, m.Note = MediaBroken, fmt.Sprintf("the picture is %d×%d pixels, too large to use (at most 100 megapixels)", cfg.Width, cfg.Height)
		return
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		m.State, m.Note = MediaBroken, err.Error()
		return
	}
	img, _, err := image.Decode(f)
	if err != nil {
		m.State, m.Note = MediaBroken, fmt.Sprintf("the %s data is damaged (%v)", strings.ToUpper(format), err)
		return
	}
	m.Info = media.Info{Kind: media.KindImage, Width: cfg.Width, Height: cfg.Height}
	m.Thumb = Scale(img, thumbEdge, thumbEdge)
}

func probeWAV(m *Media) {
	a, err := ReadWAVFile(m.Path)
	if err != nil {
		m.State, m.Note = MediaBroken, mediaProblem(err)
		return
	}
	if a.Frames() == 0 {
		m.State, m.Note = MediaBroken, "the sound is empty (no samples)"
		return
	}
	m.Info = media.Info{Kind: media.KindAudio, Duration: a.Duration(), HasAudio: true, SampleRate: a.Rate, Channels: a.Channels}
	m.Peaks = Peaks(a, 256)
}
