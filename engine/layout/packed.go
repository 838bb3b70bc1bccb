package layout

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Modality tags of packed rows (the AdaLN table has one row per timestep and
// tag: row = timestep_index·3 + tag).
const (
	TagVideo = 0
	TagText  = 1
	TagAudio = 2
)

// Patch is the DiT's (t, h, w) patch. The released model and every config
// seen use (1, 2, 2); the layout supports any (1, h, w).
type Patch struct{ T, H, W int }

// ReleasedPatch is the released (1, 2, 2) patch.
var ReleasedPatch = Patch{1, 2, 2}

func (p Patch) orDefault() Patch {
	if p == (Patch{}) {
		return ReleasedPatch
	}
	return p
}

func (p Patch) validate() error {
	if p.T != 1 || p.H < 1 || p.W < 1 {
		return fmt.Errorf("layout: patch %d×%d×%d: the temporal patch must be 1 and the spatial patch positive", p.T, p.H, p.W)
	}
	return nil
}

// Grid is a latent video geometry: frames × height × width latents.
type Grid struct{ T, H, W int }

func (g Grid) String() string { return fmt.Sprintf("%d×%d×%d", g.T, g.H, g.W) }

// rowsPerFrame is the number of rows one latent frame packs into.
func (g Grid) rowsPerFrame(p Patch) int { return (g.H / p.H) * (g.W / p.W) }

func (g Grid) validate(what string, p Patch) error {
	if g.T < 1 || g.H < p.H || g.W < p.W || g.H%p.H != 0 || g.W%p.W != 0 {
		return fmt.Errorf("layout: %s latent grid %v: needs at least one frame and a height and width that are positive multiples of the %d×%d patch", what, g, p.H, p.W)
	}
	return nil
}

// Anchor places an fl2va keyframe block.
type Anchor uint8

// Keyframe anchors.
const (
	First Anchor = iota + 1 // pixel frame 0: rotary time L
	Last                    // pixel frame F−1: rotary time L + span(T) − 5/3
)

var anchorNames = []string{First: "first", Last: "last"}

func (a Anchor) String() string { return enumName(a, anchorNames, "Anchor") }

// ParseAnchor parses "first" or "last".
func ParseAnchor(s string) (Anchor, error) {
	return parseEnum[Anchor](s, anchorNames, "keyframe anchor")
}

// RefKind is the modality of a Ref2VA reference.
type RefKind uint8

// Reference kinds.
const (
	RefImage RefKind = iota + 1
	RefVideo
	RefAudio
)

var refKindNames = []string{RefImage: "image", RefVideo: "video", RefAudio: "audio"}

func (k RefKind) String() string { return enumName(k, refKindNames, "RefKind") }

// ParseRefKind parses "image", "video" or "audio".
func ParseRefKind(s string) (RefKind, error) {
	return parseEnum[RefKind](s, refKindNames, "reference kind")
}

// enumName is names[v], or typ(v) for a value without a name.
func enumName[T ~uint8](v T, names []string, typ string) string {
	if int(v) < len(names) && names[v] != "" {
		return names[v]
	}
	return fmt.Sprintf("%s(%d)", typ, uint8(v))
}

// parseEnum is the value whose name is s; what names the kind of value in
// the error, which lists the names.
func parseEnum[T ~uint8](s string, names []string, what string) (T, error) {
	var quoted []string
	for i, n := range names {
		if n == "" {
			continue
		}
		if n == s {
			return T(i), nil
		}
		quoted = append(quoted, strconv.Quote(n))
	}
	list := quoted[len(quoted)-1]
	if len(quoted) > 1 {
		list = strings.Join(quoted[:len(quoted)-1], ", ") + " or " + list
	}
	return 0, fmt.Errorf("layout: %s %q: must be %s", what, s, list)
}

// Reference is the geometry of one Ref2VA reference as its encoders produced
// it.
type Reference struct {
	Kind RefKind
	// Latent is the encoded visual geometry: an image has one latent frame
	// on its own grid (from ReferenceImageCanvas); a video has 5m+2 frames on
	// the grid of its own canvas. Unused for audio.
	Latent Grid
	// AudioLatents is the number of audio latents per stereo channel: of a
	// standalone audio reference (≥ 1), or of a video's soundtrack (0: the
	// video has none).
	AudioLatents int
}

// Spec describes a packed sequence.
type Spec struct {
	// TextTags holds the modality tag of each text row: TagText, or TagVideo
	// for the rows of a vision block (vision start, pads, vision end).
	TextTags []int64
	// Target is the generated video's latent grid.
	Target Grid
	// AudioLatents is the generated audio's latents per stereo channel.
	AudioLatents int
	// Keyframes lists the fl2va keyframe blocks in packed order (t2va: none).
	Keyframes []Anchor
	// References lists the ref2va references in request order.
	References []Reference
	// Patch is the DiT patch; the zero value means the released (1, 2, 2).
	Patch Patch
}

// SegmentKind names a run of rows.
type SegmentKind uint8

// Segment kinds, in the order they can appear.
const (
	SegText     SegmentKind = iota + 1
	SegKeyframe             // an fl2va keyframe block (video rows)
	SegRefImage             // an image reference (video rows)
	SegRefAudio             // a standalone audio reference or a video's soundtrack (audio rows)
	SegRefVideo             // a video reference's frames (video rows)
	SegAudio                // the generated audio (audio rows)
	SegVideo                // the generated video (video rows)
)

var segNames = []string{SegText: "text", SegKeyframe: "keyframe", SegRefImage: "ref_image", SegRefAudio: "ref_audio", SegRefVideo: "ref_video", SegAudio: "audio", SegVideo: "video"}

func (k SegmentKind) String() string { return enumName(k, segNames, "SegmentKind") }

// Segment is a contiguous run of rows [Start, Stop).
type Segment struct {
	Kind        SegmentKind
	Start, Stop int
	// Index is the keyframe or reference the segment belongs to (its
	// position in Spec.Keyframes or Spec.References); -1 otherwise.
	Index int
}

// Layout is a packed sequence: one row per token of
// [text | conditions | target audio | target video].
type Layout struct {
	// Positions holds the float64 (t, h, w) rotary coordinates of every row,
	// row-major [Rows][3], exactly as the reference builds them (the model
	// rounds them to float32).
	Positions []float64
	// Tags holds each row's modality tag.
	Tags []int64
	// TextIndices, VideoIndices and AudioIndices list the rows of each
	// modality. Video and audio lists hold the condition/reference rows first
	// (in packed order), then the generated rows.
	TextIndices, VideoIndices, AudioIndices []int64
	// ConditionVideoRows and ConditionAudioRows count the leading entries of
	// VideoIndices and AudioIndices that are conditions, not generated.
	ConditionVideoRows, ConditionAudioRows int
	// Segments lists the runs of rows in order.
	Segments []Segment
}

// Rows is the sequence length.
func (l *Layout) Rows() int { return len(l.Tags) }

// Position returns row i's (t, h, w).
func (l *Layout) Position(i int) [3]float64 {
	return [3]float64{l.Positions[3*i], l.Positions[3*i+1], l.Positions[3*i+2]}
}

// PositionsF32 returns the positions rounded to float32, as the model uses
// them.
func (l *Layout) PositionsF32() []float32 {
	out := make([]float32, len(l.Positions))
	for i, v := range l.Positions {
		out[i] = float32(v)
	}
	return out
}

// Segment returns the first segment of kind k, and whether there is one.
func (l *Layout) Segment(k SegmentKind) (Segment, bool) {
	for _, s := range l.Segments {
		if s.Kind == k {
			return s, true
		}
	}
	return Segment{}, false
}

// ErrSpec is wrapped by every error Build returns for an invalid spec.
var ErrSpec = errors.New("layout: invalid packed-sequence spec")

// builder accumulates rows.
type builder struct {
	l Layout
}

func (b *builder) add(kind SegmentKind, index int, tag int64, pos [][3]float64) Segment {
	start := len(b.l.Tags)
	for _, p := range pos {
		b.l.Positions = append(b.l.Positions, p[0], p[1], p[2])
		b.l.Tags = append(b.l.Tags, tag)
	}
	s := Segment{Kind: kind, Start: start, Stop: start + len(pos), Index: index}
	b.l.Segments = append(b.l.Segments, s)
	switch tag {
	case TagVideo:
		for r := s.Start; r < s.Stop; r++ {
			b.l.VideoIndices = append(b.l.VideoIndices, int64(r))
		}
	case TagAudio:
		for r := s.Start; r < s.Stop; r++ {
			b.l.AudioIndices = append(b.l.AudioIndices, int64(r))
		}
	}
	return s
}

// audioRows places one channel-major audio block (the reference's
// _fill_audio_positions): rows s·A + k at (τ + k, 0, w_s) with w_0, w_1 the
// first and last entries of the block's own width axis.
func audioRows(a int, tau float64, widths []float64) [][3]float64 {
	pos := make([][3]float64, 0, AudioChannels*a)
	for s := 0; s < AudioChannels; s++ {
		w := widths[0]
		if s == 1 {
			w = widths[len(widths)-1]
		}
		for k := 0; k < a; k++ {
			pos = append(pos, [3]float64{tau + float64(k), 0, w})
		}
	}
	return pos
}

// videoRows places n latent frames on a frame grid, frame k at the temporal
// grid's time t_k.
func videoRows(n int, origin float64, grid [][2]float64) [][3]float64 {
	times := temporalGrid(n, origin)
	pos := make([][3]float64, 0, n*len(grid))
	for _, t := range times {
		for _, hw := range grid {
			pos = append(pos, [3]float64{t, hw[0], hw[1]})
		}
	}
	return pos
}

// frameRows places one frame grid at a constant time.
func frameRows(t float64, grid [][2]float64) [][3]float64 {
	pos := make([][3]float64, len(grid))
	for i, hw := range grid {
		pos[i] = [3]float64{t, hw[0], hw[1]}
	}
	return pos
}

func specErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrSpec, fmt.Sprintf(format, args...))
}

// Build lays out a packed sequence. With References it builds the ref2va
// layout (build_ref2va_packed_sequence), otherwise the t2va/fl2va layout
// (build_packed_sequence); keyframes and references are mutually exclusive.
func Build(s Spec) (*Layout, error) {
	p := s.Patch.orDefault()
	if err := p.validate(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSpec, trimPrefix(err))
	}
	if err := s.Target.validate("target", p); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSpec, trimPrefix(err))
	}
	if s.AudioLatents < 1 {
		return nil, specErr("the target needs at least one audio latent, got %d", s.AudioLatents)
	}
	for i, t := range s.TextTags {
		if t != TagText && t != TagVideo {
			return nil, specErr("text row %d has tag %d: text rows are tagged %d (text) or %d (vision block)", i, t, TagText, TagVideo)
		}
	}
	if len(s.Keyframes) > 0 && len(s.References) > 0 {
		return nil, specErr("keyframes and references are mutually exclusive")
	}
	seen := map[Anchor]bool{}
	for i, a := range s.Keyframes {
		if a != First && a != Last {
			return nil, specErr("keyframe %d: unknown anchor %v", i, a)
		}
		if seen[a] {
			return nil, specErr("keyframe %d: a second %v keyframe", i, a)
		}
		seen[a] = true
	}
	for i, r := range s.References {
		switch r.Kind {
		case RefImage:
			if err := r.Latent.validate(fmt.Sprintf("reference %d (image)", i), p); err != nil {
				return nil, fmt.Errorf("%w: %v", ErrSpec, trimPrefix(err))
			}
			if r.Latent.T != 1 {
				return nil, specErr("reference %d (image) has %d latent frames, an image has 1", i, r.Latent.T)
			}
			if r.AudioLatents != 0 {
				return nil, specErr("reference %d (image) cannot carry audio", i)
			}
		case RefVideo:
			if err := r.Latent.validate(fmt.Sprintf("reference %d (video)", i), p); err != nil {
				return nil, fmt.Errorf("%w: %v", ErrSpec, trimPrefix(err))
			}
			if r.AudioLatents < 0 {
				return nil, specErr("reference %d (video) has a negative soundtrack length %d", i, r.AudioLatents)
			}
		case RefAudio:
			if r.AudioLatents < 1 {
				return nil, specErr("reference %d (audio) needs at least one audio latent, got %d", i, r.AudioLatents)
			}
			if r.Latent != (Grid{}) {
				return nil, specErr("reference %d (audio) cannot carry a video grid", i)
			}
		default:
			return nil, specErr("reference %d: unknown kind %v", i, r.Kind)
		}
	}

	var b builder
	L := len(s.TextTags)
	text := make([][3]float64, L)
	for i := range text {
		text[i] = [3]float64{float64(i), 0, 0}
	}
	if L > 0 {
		seg := b.add(SegText, -1, TagText, text)
		for i, t := range s.TextTags {
			b.l.Tags[seg.Start+i] = t
		}
		for i := range L {
			b.l.TextIndices = append(b.l.TextIndices, int64(i))
		}
	} else {
		b.l.TextIndices = []int64{}
	}

	targetGrid, targetWidths := frameGrid(s.Target.H, s.Target.W, p.H, p.W)
	tau := float64(L)

	// Keyframe blocks (fl2va): constant time, the target's frame grid.
	for i, a := range s.Keyframes {
		t := float64(L)
		if a == Last {
			t = float64(L) + lastAnchorSpan(s.Target.T) - ropeFrameRescale
		}
		b.add(SegKeyframe, i, TagVideo, frameRows(t, targetGrid))
	}

	// Reference blocks (ref2va), advancing the shared audio/video clock.
	for i, r := range s.References {
		switch r.Kind {
		case RefImage:
			grid, _ := frameGrid(r.Latent.H, r.Latent.W, p.H, p.W)
			b.add(SegRefImage, i, TagVideo, frameRows(tau, grid))
			tau += 1.0 // one integer slot, not a latent frame's 5/3
		case RefAudio:
			b.add(SegRefAudio, i, TagAudio, audioRows(r.AudioLatents, tau, targetWidths))
			tau += float64(r.AudioLatents)
		case RefVideo:
			grid, widths := frameGrid(r.Latent.H, r.Latent.W, p.H, p.W)
			if r.AudioLatents > 0 {
				b.add(SegRefAudio, i, TagAudio, audioRows(r.AudioLatents, tau, widths))
			}
			b.add(SegRefVideo, i, TagVideo, videoRows(r.Latent.T, tau, grid))
			tau += max(float64(r.AudioLatents), referenceVideoSpan(r.Latent.T))
		}
	}
	b.l.ConditionVideoRows = len(b.l.VideoIndices)
	b.l.ConditionAudioRows = len(b.l.AudioIndices)

	// The generated rows share the origin the conditions left behind (L for
	// t2va/fl2va: keyframes do not advance the clock).
	b.add(SegAudio, -1, TagAudio, audioRows(s.AudioLatents, tau, targetWidths))
	b.add(SegVideo, -1, TagVideo, videoRows(s.Target.T, tau, targetGrid))
	return &b.l, nil
}
