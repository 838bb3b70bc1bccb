// Package sequence is the studio's timeline state: a sequence of takes
// (clips trimmed on the 24 fps frame grid, joined by cuts or crossfades,
// each with its sound on or muted) and an optional extra sound track, kept
// as sequence.json. It is Fyne-free: the timeline widget (ui/) draws and
// edits it through an Editor (with undo and redo), and both the studio's
// File ▸ Export Sequence… and `h3studio sequence export` render it with
// Export, one code path.
package sequence

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"h3studio/engine/atomicfile"
	"h3studio/engine/media"
)

// File is the name of a sequence's file inside its folder.
const File = "sequence.json"

// Version is the sequence.json format version this package writes.
const Version = 1

// Transition kinds: the passage from a clip to the next.
const (
	Cut       = "cut"
	Crossfade = "crossfade"
)

// MaxSeconds bounds in and out points and crossfades (a day: far past any
// source, and small enough for frame arithmetic).
const MaxSeconds = 86400

// Gain limits of the extra sound track, in dB.
const (
	MinGainDB = -60
	MaxGainDB = 24
)

// Sequence is sequence.json.
type Sequence struct {
	Version int    `json:"version"`
	Name    string `json:"name,omitempty"`
	Clips   []Clip `json:"clips"`
	Audio   *Track `json:"audio,omitempty"`
}

// Clip is one take on the timeline. In and Out are seconds into the source,
// always on its frame grid (multiples of 1/24 s); Out 0 in a file means
// "to the end of the source", resolved when the source is read.
type Clip struct {
	// Source is a take folder or a video file, absolute or relative to the
	// sequence file's folder.
	Source     string     `json:"source"`
	In         float64    `json:"in"`
	Out        float64    `json:"out"`
	Mute       bool       `json:"mute"`
	Transition Transition `json:"transition"`
	// Title is how the timeline names the clip (the take's title); optional.
	Title string `json:"title,omitempty"`
}

// Transition is the passage from a clip to the next one.
type Transition struct {
	Kind    string  `json:"kind"` // Cut or Crossfade
	Seconds float64 `json:"seconds"`
}

// Track is the extra sound track, played from the start under the clips.
type Track struct {
	Source string  `json:"source"` // WAV, AAC/M4A, MP3…, absolute or relative
	GainDB float64 `json:"gain_db"`
}

// Frame is the frame index nearest to s seconds on the 24 fps grid.
func Frame(s float64) int { return int(math.Round(s * media.FPS)) }

// Seconds is frame f's time.
func Seconds(f int) float64 { return float64(f) / media.FPS }

// Snap rounds s to the nearest frame boundary.
func Snap(s float64) float64 { return Seconds(Frame(s)) }

// InFrame and OutFrame are the clip's trim points in frames.
func (c Clip) InFrame() int  { return Frame(c.In) }
func (c Clip) OutFrame() int { return Frame(c.Out) }

// Frames is the clip's trimmed length in frames (0 when Out is unresolved).
func (c Clip) Frames() int { return max(c.OutFrame()-c.InFrame(), 0) }

// FadeFrames is the clip's crossfade into the next in frames (0 for a cut).
func (c Clip) FadeFrames() int {
	if c.Transition.Kind != Crossfade {
		return 0
	}
	return max(Frame(c.Transition.Seconds), 0)
}

// Gain is the track's linear amplitude factor.
func (t Track) Gain() float64 { return math.Pow(10, t.GainDB/20) }

// Clone is a deep copy.
func (s Sequence) Clone() Sequence {
	c := s
	c.Clips = append([]Clip(nil), s.Clips...)
	if s.Audio != nil {
		a := *s.Audio
		c.Audio = &a
	}
	return c
}

// Normalize snaps trims and crossfades to frames and fills defaults.
func (s *Sequence) Normalize() {
	if s.Version == 0 {
		s.Version = Version
	}
	if s.Clips == nil {
		s.Clips = []Clip{}
	}
	for i := range s.Clips {
		c := &s.Clips[i]
		c.In, c.Out = Snap(c.In), Snap(c.Out)
		if c.Transition.Kind == "" {
			c.Transition.Kind = Cut
		}
		if c.Transition.Kind == Cut {
			c.Transition.Seconds = 0
		}
		c.Transition.Seconds = Snap(c.Transition.Seconds)
	}
}

// Validate checks the fields, naming the first that is wrong.
func (s Sequence) Validate() error {
	if s.Version != Version {
		return fmt.Errorf("version: %d, expected %d", s.Version, Version)
	}
	for i, c := range s.Clips {
		f := func(field, format string, a ...any) error {
			return fmt.Errorf("clips[%d].%s: %s", i, field, fmt.Sprintf(format, a...))
		}
		switch {
		case strings.TrimSpace(c.Source) == "":
			return f("source", "empty, expected a take folder or a video file")
		case !finite(c.In) || c.In < 0 || c.In > MaxSeconds:
			return f("in", "%v, expected seconds from 0 to %d", c.In, MaxSeconds)
		case !finite(c.Out) || c.Out < 0 || c.Out > MaxSeconds:
			return f("out", "%v, expected seconds from 0 to %d", c.Out, MaxSeconds)
		case c.Out != 0 && c.OutFrame() <= c.InFrame():
			return f("out", "%v is not after in (%v) by a frame (1/24 s)", c.Out, c.In)
		case c.Transition.Kind != Cut && c.Transition.Kind != Crossfade && c.Transition.Kind != "":
			return f("transition.kind", "%q, expected %q or %q", c.Transition.Kind, Cut, Crossfade)
		case !finite(c.Transition.Seconds) || c.Transition.Seconds < 0 || c.Transition.Seconds > MaxSeconds:
			return f("transition.seconds", "%v, expected seconds from 0 to %d", c.Transition.Seconds, MaxSeconds)
		}
	}
	if a := s.Audio; a != nil {
		switch {
		case strings.TrimSpace(a.Source) == "":
			return errors.New("audio.source: empty, expected a sound file")
		case !finite(a.GainDB) || a.GainDB < MinGainDB || a.GainDB > MaxGainDB:
			return fmt.Errorf("audio.gain_db: %v, expected %d…%d dB", a.GainDB, MinGainDB, MaxGainDB)
		}
	}
	return nil
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// Parse reads sequence.json bytes: unknown fields are refused (a typo must
// not silently drop a trim), values validated and snapped to frames.
func Parse(data []byte) (Sequence, error) {
	var s Sequence
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	if err := d.Decode(&s); err != nil {
		return Sequence{}, err
	}
	if d.More() {
		return Sequence{}, errors.New("data after the sequence object")
	}
	if err := s.Validate(); err != nil {
		return Sequence{}, err
	}
	s.Normalize()
	return s, nil
}

// Load reads a sequence file; errors name it.
func Load(path string) (Sequence, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Sequence{}, fmt.Errorf("sequence %s: %w", path, err)
	}
	s, err := Parse(b)
	if err != nil {
		return Sequence{}, fmt.Errorf("sequence %s: %w", path, err)
	}
	return s, nil
}

// Marshal is the file's bytes (indented, newline-terminated).
func (s Sequence) Marshal() ([]byte, error) {
	s.Normalize()
	if err := s.Validate(); err != nil {
		return nil, err
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// Save writes the sequence atomically to path (a crash or a full disk
// leaves the earlier file as it was).
func Save(path string, s Sequence) error {
	b, err := s.Marshal()
	if err != nil {
		return fmt.Errorf("sequence %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("sequence %s: %w", path, err)
	}
	if err := atomicfile.WriteFile(path, b); err != nil {
		return fmt.Errorf("sequence %s: %w", path, err)
	}
	return nil
}
