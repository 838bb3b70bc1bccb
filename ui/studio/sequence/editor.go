package sequence

import (
	"fmt"
	"sync"

	"h3studio/engine/media"
)

// maxUndo bounds the undo history.
const maxUndo = 200

// Editor is an open sequence: its file, its state, and the undo and redo
// histories. Every edit is one undoable step and is saved atomically to the
// file when Path is set (a failed save is returned and the edit kept in
// memory, so nothing the user did is lost). Lengths (the frames each
// source lasts) are supplied by the caller (the studio knows its takes'
// lengths) and bound the trims. Editor is safe for concurrent use.
type Editor struct {
	mu   sync.Mutex
	path string
	seq  Sequence
	undo []Sequence
	redo []Sequence
	// lengths maps a clip's Source to its length in frames (0: unknown).
	lengths map[string]int
	// edits counts the changes, undos and redos.
	edits uint64
}

// NewEditor edits s, saved at path ("" keeps it in memory).
func NewEditor(path string, s Sequence) *Editor {
	s.Normalize()
	return &Editor{path: path, seq: s.Clone(), lengths: map[string]int{}}
}

// Open loads the sequence at path, or starts an empty one when there is no
// file yet.
func Open(path string) (*Editor, error) {
	s, err := Load(path)
	if err != nil {
		return nil, err
	}
	return NewEditor(path, s), nil
}

// Path is the sequence file.
func (e *Editor) Path() string { return e.path }

// Sequence is a copy of the current state.
func (e *Editor) Sequence() Sequence {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.seq.Clone()
}

// SetLength records a source's length in frames (it bounds trims).
func (e *Editor) SetLength(source string, frames int) {
	e.mu.Lock()
	e.lengths[source] = frames
	e.mu.Unlock()
}

// Length is a source's known length in frames (0: unknown).
func (e *Editor) Length(source string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.lengths[source]
}

// Edits counts the sequence's changes, undos and redos since it was opened:
// a view that saw another count has a sequence edited since.
func (e *Editor) Edits() uint64 { e.mu.Lock(); defer e.mu.Unlock(); return e.edits }

// CanUndo and CanRedo say whether there is something to undo or redo.
func (e *Editor) CanUndo() bool { e.mu.Lock(); defer e.mu.Unlock(); return len(e.undo) > 0 }
func (e *Editor) CanRedo() bool { e.mu.Lock(); defer e.mu.Unlock(); return len(e.redo) > 0 }

// edit applies fn to a copy of the state; when fn succeeds the copy becomes
// the state, the old one goes on the undo stack, and the file is saved.
func (e *Editor) edit(fn func(s *Sequence) error) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	next := e.seq.Clone()
	if err := fn(&next); err != nil {
		return err
	}
	next.Normalize()
	if err := next.Validate(); err != nil {
		return err
	}
	e.undo = append(e.undo, e.seq)
	if len(e.undo) > maxUndo {
		e.undo = e.undo[len(e.undo)-maxUndo:]
	}
	e.redo = nil
	e.seq = next
	e.edits++
	return e.saveLocked()
}

func (e *Editor) saveLocked() error {
	if e.path == "" {
		return nil
	}
	return Save(e.path, e.seq)
}

// Undo restores the state before the last edit.
func (e *Editor) Undo() error { return e.step(&e.undo, &e.redo) }

// Redo reapplies the last undone edit.
func (e *Editor) Redo() error { return e.step(&e.redo, &e.undo) }

// step makes the state the top of from, pushing the current one onto to,
// and saves it; with nothing on from it does nothing.
func (e *Editor) step(from, to *[]Sequence) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(*from) == 0 {
		return nil
	}
	*to = append(*to, e.seq)
	e.seq = (*from)[len(*from)-1]
	*from = (*from)[:len(*from)-1]
	e.edits++
	return e.saveLocked()
}

func checkIndex(s *Sequence, i int) error {
	if i < 0 || i >= len(s.Clips) {
		return fmt.Errorf("sequence: no clip %d (it has %d)", i+1, len(s.Clips))
	}
	return nil
}

// Insert puts c at index i (clamped to 0…len). A clip without an out point
// gets its source's whole length when it is known.
func (e *Editor) Insert(i int, c Clip) error {
	return e.edit(func(s *Sequence) error {
		i = max(0, min(i, len(s.Clips)))
		if c.Out == 0 {
			if n := e.lengths[c.Source]; n > 0 {
				c.Out = Seconds(n)
			}
		}
		s.Clips = append(s.Clips, Clip{})
		copy(s.Clips[i+1:], s.Clips[i:])
		s.Clips[i] = c
		return nil
	})
}

// Append adds c at the end.
func (e *Editor) Append(c Clip) error { return e.Insert(len(e.Sequence().Clips), c) }

// Remove takes clip i off the timeline.
func (e *Editor) Remove(i int) error {
	return e.edit(func(s *Sequence) error {
		if err := checkIndex(s, i); err != nil {
			return err
		}
		s.Clips = append(s.Clips[:i], s.Clips[i+1:]...)
		return nil
	})
}

// Move puts clip from at index to (both clamped), shifting the others.
func (e *Editor) Move(from, to int) error {
	return e.edit(func(s *Sequence) error {
		if err := checkIndex(s, from); err != nil {
			return err
		}
		to = max(0, min(to, len(s.Clips)-1))
		c := s.Clips[from]
		s.Clips = append(s.Clips[:from], s.Clips[from+1:]...)
		s.Clips = append(s.Clips[:to], append([]Clip{c}, s.Clips[to:]...)...)
		return nil
	})
}

// Trim sets clip i's in and out points (seconds), snapped to frames and
// bounded: 0 ≤ in < out ≤ the source's length (when known), at least one
// frame long (an out point at or before the in point moves after it).
func (e *Editor) Trim(i int, in, out float64) error {
	return e.edit(func(s *Sequence) error {
		if err := checkIndex(s, i); err != nil {
			return err
		}
		fi, fo := max(Frame(in), 0), Frame(out)
		if fo <= fi {
			fo = fi + 1 // at least one frame: the out point gives way
		}
		if n := e.lengths[s.Clips[i].Source]; n > 0 && fo > n {
			fo = n
			fi = min(fi, n-1)
		}
		s.Clips[i].In, s.Clips[i].Out = Seconds(fi), Seconds(fo)
		return nil
	})
}

// SetTransition sets the passage from clip i to the next.
func (e *Editor) SetTransition(i int, kind string, seconds float64) error {
	return e.edit(func(s *Sequence) error {
		if err := checkIndex(s, i); err != nil {
			return err
		}
		if kind != Cut && kind != Crossfade {
			return fmt.Errorf("sequence: transition %q, expected %q or %q", kind, Cut, Crossfade)
		}
		if seconds < 0 {
			seconds = 0
		}
		s.Clips[i].Transition = Transition{Kind: kind, Seconds: seconds}
		return nil
	})
}

// SetMute turns clip i's sound off (true) or on.
func (e *Editor) SetMute(i int, mute bool) error {
	return e.edit(func(s *Sequence) error {
		if err := checkIndex(s, i); err != nil {
			return err
		}
		s.Clips[i].Mute = mute
		return nil
	})
}

// SetAudio sets (nil: removes) the extra sound track.
func (e *Editor) SetAudio(t *Track) error {
	return e.edit(func(s *Sequence) error {
		if t == nil {
			s.Audio = nil
			return nil
		}
		c := *t
		s.Audio = &c
		return nil
	})
}

// Span is a clip's place on the timeline, in frames.
type Span struct {
	Start, Frames int
	Fade          int // crossfade into the next clip, as rendered (clamped)
}

// Layout places the clips end to end, each crossfade overlapping the next
// clip (clamped as the export clamps it), and returns the total length in
// frames. length gives a source's length for clips whose out point is
// unresolved (nil: unknown, such a clip lasts 0 frames).
func Layout(s Sequence, length func(source string) int) ([]Span, int) {
	c := make([]media.CompClip, len(s.Clips))
	for i, cl := range s.Clips {
		n := cl.Frames()
		if cl.Out == 0 && length != nil {
			n = max(length(cl.Source)-cl.InFrame(), 0)
		}
		c[i] = media.CompClip{Path: cl.Source, In: cl.InFrame(), Len: n, Fade: cl.FadeFrames()}
	}
	comp := media.Composition{Clips: c}
	starts, total := comp.Starts()
	fades := comp.Fades()
	spans := make([]Span, len(c))
	for i := range c {
		spans[i] = Span{Start: starts[i], Frames: c[i].Len, Fade: fades[i]}
	}
	return spans, total
}

// Layout is the editor's current layout.
func (e *Editor) Layout() ([]Span, int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return Layout(e.seq, func(src string) int { return e.lengths[src] })
}

// At finds what frame t of the timeline shows: the clip (the later one in
// a crossfade) and the frame index into its source; ok is false past the
// end.
func At(spans []Span, s Sequence, t int) (clip, srcFrame int, ok bool) {
	for i := len(spans) - 1; i >= 0; i-- {
		sp := spans[i]
		if t >= sp.Start && t < sp.Start+sp.Frames {
			return i, s.Clips[i].InFrame() + t - sp.Start, true
		}
	}
	return 0, 0, false
}
