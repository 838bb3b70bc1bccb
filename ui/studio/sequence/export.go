package sequence

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"

	"h3studio/engine/media"
)

// The files of a take folder a clip reads (the library's names: studio's
// VideoFile and AudioFile; a studio test holds them equal).
const (
	TakeVideoFile = "video.mp4"
	TakeSoundFile = "audio.wav"
)

// ErrMissing is the cause of a MissingError.
var ErrMissing = errors.New("missing")

// MissingError is a clip (or the extra track) whose source is not there.
type MissingError struct {
	Clip   int    // 0-based clip index, -1 for the extra sound track
	Source string // as sequence.json writes it
	Path   string // resolved
	Why    string // "not found"
}

func (e *MissingError) Error() string {
	what := fmt.Sprintf("clip %d", e.Clip+1)
	if e.Clip < 0 {
		what = "the sound track"
	}
	s := fmt.Sprintf("%s: %s is missing (%s)", what, e.Source, e.Why)
	if e.Path != e.Source {
		s += ": " + e.Path
	}
	return s
}

func (e *MissingError) Unwrap() error { return ErrMissing }

// Path resolves a source against the sequence file's folder.
func Path(seqPath, source string) string {
	if filepath.IsAbs(source) || seqPath == "" {
		return filepath.Clean(source)
	}
	return filepath.Join(filepath.Dir(seqPath), source)
}

// RelSource is how a sequence at seqPath names path: relative when path is
// in or beside the sequence's library (no more than two folders up), else
// absolute, so a library moved as a whole keeps its sequences.
func RelSource(seqPath, path string) string {
	abs, err := filepath.Abs(path)
	if err != nil || seqPath == "" {
		return path
	}
	dir, err := filepath.Abs(filepath.Dir(seqPath))
	if err != nil {
		return abs
	}
	rel, err := filepath.Rel(dir, abs)
	if err != nil || strings.HasPrefix(rel, filepath.Join("..", "..", "..")) {
		return abs
	}
	return filepath.ToSlash(rel)
}

// Files is where a clip's pictures and sound are read from.
type Files struct {
	Video string // a video file
	Sound string // a separate sound file (a take folder's audio.wav), or ""
}

// Locate finds a clip's files: a take folder's video.mp4 (and audio.wav), or
// the video file itself.
func Locate(seqPath string, clip int, source string) (Files, error) {
	p := Path(seqPath, source)
	miss := func(why string) error { return &MissingError{Clip: clip, Source: source, Path: p, Why: why} }
	st, err := os.Stat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return Files{}, miss("not found")
	case err != nil:
		return Files{}, miss(err.Error())
	case st.IsDir():
		v := filepath.Join(p, TakeVideoFile)
		if _, err := os.Stat(v); err != nil {
			// not a gap: the timeline still plays its viewer frames
			return Files{}, fmt.Errorf("clip %d: the take folder %s has no %s (it was made by a build without an MP4 writer), so it can't be exported", clip+1, p, TakeVideoFile)
		}
		f := Files{Video: v}
		if _, err := os.Stat(filepath.Join(p, TakeSoundFile)); err == nil {
			f.Sound = filepath.Join(p, TakeSoundFile)
		}
		return f, nil
	}
	return Files{Video: p}, nil
}

// Missing lists every clip and track whose source is not there.
func Missing(seqPath string, s Sequence) []*MissingError {
	var out []*MissingError
	for i, c := range s.Clips {
		var m *MissingError
		if _, err := Locate(seqPath, i, c.Source); errors.As(err, &m) {
			out = append(out, m)
		}
	}
	if s.Audio != nil {
		p := Path(seqPath, s.Audio.Source)
		if _, err := os.Stat(p); err != nil {
			out = append(out, &MissingError{Clip: -1, Source: s.Audio.Source, Path: p, Why: "not found"})
		}
	}
	return out
}

// SourceFrames is how many 24 fps frames a video of info lasts.
func SourceFrames(info media.Info) int {
	fps := info.FPS
	if !(fps > 0) {
		fps = media.FPS
	}
	n := info.Frames
	if n <= 0 && info.Duration > 0 {
		return int(math.Round(info.Duration.Seconds() * media.FPS))
	}
	return int(math.Floor(float64(n)*media.FPS/fps + 0.5))
}

// Compose turns a sequence into the media composition Export renders:
// every source located (all missing ones named in one error), each clip's
// out point resolved (0: the source's end) and clamped to the source's
// length, crossfades in frames. open reads a video's length (nil:
// media.Open).
func Compose(seqPath string, s Sequence, open media.Opener) (media.Composition, error) {
	if open == nil {
		open = media.Open
	}
	s.Normalize()
	if err := s.Validate(); err != nil {
		return media.Composition{}, fmt.Errorf("sequence %s: %w", seqPath, err)
	}
	if len(s.Clips) == 0 {
		return media.Composition{}, fmt.Errorf("sequence %s has no clips", seqPath)
	}
	if m := Missing(seqPath, s); len(m) > 0 {
		msgs := make([]string, len(m))
		for i, e := range m {
			msgs[i] = e.Error()
		}
		return media.Composition{}, fmt.Errorf("sequence %s: %s: %w", seqPath, strings.Join(msgs, "; "), ErrMissing)
	}
	var c media.Composition
	for i, cl := range s.Clips {
		f, err := Locate(seqPath, i, cl.Source)
		if err != nil {
			return media.Composition{}, err
		}
		src, err := open(f.Video)
		if err != nil {
			return media.Composition{}, fmt.Errorf("clip %d: %w", i+1, err)
		}
		info := src.Info()
		src.Close()
		if info.Kind != media.KindVideo {
			return media.Composition{}, fmt.Errorf("clip %d: %s is %s, not a video", i+1, f.Video, info.Kind)
		}
		n := SourceFrames(info)
		in, out := cl.InFrame(), cl.OutFrame()
		if out == 0 || out > n {
			out = n
		}
		if in >= out {
			return media.Composition{}, fmt.Errorf("clip %d (%s): in point %.3f s is past the source's end (%.3f s)", i+1, cl.Source, cl.In, Seconds(n))
		}
		c.Clips = append(c.Clips, media.CompClip{Path: f.Video, SoundPath: f.Sound, In: in, Len: out - in, Fade: cl.FadeFrames(), Mute: cl.Mute})
	}
	if a := s.Audio; a != nil {
		c.Sound = &media.CompSound{Path: Path(seqPath, a.Source), Gain: a.Gain()}
	}
	return c, nil
}

// Export renders the sequence at seqPath (its sources resolved against it)
// to dst as one MP4: H.264 24 fps, AAC 32 kHz stereo, trims, crossfades and
// the extra track applied, with the platform's composition where it has one
// (media.ExportComposition). Missing sources fail naming them before
// anything is written; a failed or cancelled export leaves nothing at dst.
func Export(ctx context.Context, seqPath string, s Sequence, dst string, o media.ExportOptions) error {
	c, err := Compose(seqPath, s, o.Open)
	if err != nil {
		return err
	}
	if err := media.ExportComposition(ctx, c, dst, o); err != nil {
		return fmt.Errorf("export of %s: %w", filepath.Base(seqPath), err)
	}
	return nil
}
