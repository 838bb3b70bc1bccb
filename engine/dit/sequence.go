package dit

import (
	"fmt"

	"h3studio/engine/compute"
)

// Layout describes one packed sequence (H3-DIT §4, §6): what the reference
// passes to every forward as position_ids, token_tags and the three
// row-index tensors. It is constant over a denoising loop.
type Layout struct {
	// Positions holds the float64 (t, h, w) rotary coordinates, 3 per row.
	Positions []float64
	// Tags holds each row's modality: TagVideo, TagText or TagAudio.
	Tags []int64
	// VideoIndices are the positions of the video rows (conditions first,
	// target last), AudioIndices of the audio rows (references first),
	// TextIndices of the text rows; together they cover every row once.
	VideoIndices, AudioIndices, TextIndices []int64
	// TargetGrid is the target video's token grid (latent frames, token
	// rows, token columns) when the target video rows end the sequence in
	// frame-major, row-major order; zero when unknown. Token reduction needs it.
	TargetGrid [3]int
}

// Rows is the packed sequence length.
func (l *Layout) Rows() int { return len(l.Tags) }

// Validate checks the layout's internal consistency.
func (l *Layout) Validate() error {
	S := len(l.Tags)
	if S == 0 {
		return fmt.Errorf("dit: layout has no rows")
	}
	if len(l.Positions) != 3*S {
		return fmt.Errorf("dit: layout has %d position values for %d rows, want %d", len(l.Positions), S, 3*S)
	}
	seen := make([]bool, S)
	for _, g := range []struct {
		name string
		idx  []int64
	}{{"video", l.VideoIndices}, {"audio", l.AudioIndices}, {"text", l.TextIndices}} {
		for _, i := range g.idx {
			if i < 0 || int(i) >= S {
				return fmt.Errorf("dit: layout %s index %d outside [0, %d)", g.name, i, S)
			}
			if seen[i] {
				return fmt.Errorf("dit: layout row %d is addressed twice (%s)", i, g.name)
			}
			seen[i] = true
		}
	}
	for i, s := range seen {
		if !s {
			return fmt.Errorf("dit: layout row %d belongs to no modality", i)
		}
	}
	for i, t := range l.Tags {
		if t < 0 || t >= Modalities {
			return fmt.Errorf("dit: layout row %d has tag %d, want 0 (video), 1 (text) or 2 (audio)", i, t)
		}
	}
	for _, i := range l.VideoIndices {
		if l.Tags[i] != TagVideo {
			return fmt.Errorf("dit: video row %d is tagged %d", i, l.Tags[i])
		}
	}
	for _, i := range l.AudioIndices {
		if l.Tags[i] != TagAudio {
			return fmt.Errorf("dit: audio row %d is tagged %d", i, l.Tags[i])
		}
	}
	if g := l.TargetGrid; g != [3]int{} {
		n := g[0] * g[1] * g[2]
		if g[0] <= 0 || g[1] <= 0 || g[2] <= 0 || n > len(l.VideoIndices) {
			return fmt.Errorf("dit: target grid %v does not fit %d video rows", g, len(l.VideoIndices))
		}
		for k, i := range l.VideoIndices[len(l.VideoIndices)-n:] {
			if int(i) != S-n+k {
				return fmt.Errorf("dit: target grid %v: the target video rows do not end the sequence", g)
			}
		}
	}
	return nil
}

// Sequence is a Layout uploaded for one request: index tensors, rotary
// tables and the refined text rows, plus the state the speed controls keep
// across steps (the core residual). Free it with Release.
type Sequence struct {
	Layout Layout
	Text   *compute.Tensor // refined text [L, hidden]

	rows                        int
	videoIdx, audioIdx, textIdx *compute.Tensor
	rope                        Rotary
	cosHost, sinHost            []float32 // [S·3F] for tracing

	reduced *reduction // token-reduction maps, built on first use

	coreInput, coreResidual *compute.Tensor
	b                       compute.Backend
}

// NewSequence uploads a layout for a request whose refined text rows
// (RefineText) are text. text is owned by the caller.
func (m *Model) NewSequence(l Layout, text *compute.Tensor) (s *Sequence, err error) {
	defer compute.Recover(&err)
	if err := l.Validate(); err != nil {
		return nil, err
	}
	if text == nil || text.Rank() != 2 || text.Dim(0) != len(l.TextIndices) || text.Dim(1) != m.cfg.HiddenSize {
		return nil, fmt.Errorf("dit: refined text %v does not match %d text rows × hidden %d", text, len(l.TextIndices), m.cfg.HiddenSize)
	}
	s = &Sequence{Layout: l, Text: text, rows: l.Rows(), b: m.b}
	defer func() {
		if err != nil {
			s.Release()
		}
	}()
	up := func(v []int64) *compute.Tensor {
		t, err := compute.FromInt64(m.b, compute.I64, compute.Shape{len(v)}, v)
		compute.Try(err)
		return t
	}
	s.videoIdx, s.audioIdx, s.textIdx = up(l.VideoIndices), up(l.AudioIndices), up(l.TextIndices)
	s.cosHost, s.sinHost, err = RotaryTables(l.Positions, m.invFreq)
	if err != nil {
		return nil, err
	}
	half := 3 * m.cfg.RopeFreqDim
	s.rope.Dim = 2 * half
	s.rope.Cos, err = compute.FromFloat32(m.b, m.dt, compute.Shape{s.rows, half}, s.cosHost)
	compute.Try(err)
	s.rope.Sin, err = compute.FromFloat32(m.b, m.dt, compute.Shape{s.rows, half}, s.sinHost)
	compute.Try(err)
	return s, nil
}

// Rows is the packed sequence length.
func (s *Sequence) Rows() int { return s.rows }

// Release frees the sequence's tensors (not Text).
func (s *Sequence) Release() {
	ts := []*compute.Tensor{s.videoIdx, s.audioIdx, s.textIdx, s.rope.Cos, s.rope.Sin, s.coreInput, s.coreResidual}
	if r := s.reduced; r != nil {
		ts = append(ts, r.tensors()...)
	}
	for _, t := range ts {
		if t != nil {
			s.b.Free(t)
		}
	}
	s.videoIdx, s.audioIdx, s.textIdx, s.rope.Cos, s.rope.Sin, s.coreInput, s.coreResidual, s.reduced = nil, nil, nil, nil, nil, nil, nil, nil
}

// HasCoreResidual reports whether a core residual is cached (CoreCache ran).
func (s *Sequence) HasCoreResidual() bool { return s.coreResidual != nil }
