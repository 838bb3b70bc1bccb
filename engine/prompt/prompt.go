// Package prompt lays out what MiniMax-H3's Qwen3-VL text encoder reads for
// a request: the token ids of the presentation (no chat template, no system
// prompt; each text segment tokenized on its own), the DiT's per-row
// modality tags, the vision blocks' spans, and the Qwen3-VL multimodal
// rotary position ids (3 axes). It also samples reference videos for Qwen
// (24 fps → 2 fps, two-frame blocks with timestamps) and validates what the
// prompt refers to.
//
// Specification: H3-ENCODERS-VAES.md §5 (presentation), §5.1 (M-RoPE
// position ids, HF Qwen3VLModel.get_rope_index), §7.7 (reference-video
// sampling) and H3-DIT.md §10, corrected by ERRATA.md F1 (Qwen samples the
// untrimmed reference frames) and F7 (at least two samples).
//
// Every function is pure and safe for concurrent use.
package prompt

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Task is the generation task, which fixes the presentation.
type Task int

const (
	T2VA   Task = iota // text only: the prompt, verbatim
	FL2VA              // first/last keyframes: labelled image blocks, then the prompt
	Ref2VA             // ordered image / video / audio references, then the prompt
)

func (t Task) String() string {
	switch t {
	case T2VA:
		return "t2va"
	case FL2VA:
		return "fl2va"
	case Ref2VA:
		return "ref2va"
	}
	return fmt.Sprintf("Task(%d)", int(t))
}

// Grid is a vision block's merged token grid: H rows by W columns of merged
// vision tokens (grid_h/2 × grid_w/2 of Qwen's patch grid; pixels/32 for the
// released patch size 16 and merge 2). A block holds H·W pad tokens.
type Grid struct{ H, W int }

// N is the number of merged vision tokens (pads) of the block.
func (g Grid) N() int { return g.H * g.W }

// GridForPixels is the merged grid of an image or video frame of
// height × width pixels as the Qwen processor hands it to the vision tower
// (after its resize): one merged token per factor × factor pixels (32 for
// the released patch 16 × merge 2).
func GridForPixels(height, width, factor int) (Grid, error) {
	if factor <= 0 || height <= 0 || width <= 0 || height%factor != 0 || width%factor != 0 {
		return Grid{}, fmt.Errorf("prompt: %d×%d pixels is not a positive multiple of %d on both axes", width, height, factor)
	}
	return Grid{H: height / factor, W: width / factor}, nil
}

// GridsFromTHW turns Hugging Face grid_thw rows (patch grids; a video row
// with t temporal patches is t blocks) into the merged grid of every block,
// in order.
func GridsFromTHW(thw [][3]int, merge int) ([]Grid, error) {
	var out []Grid
	for i, g := range thw {
		if g[0] < 1 || g[1] < merge || g[2] < merge || g[1]%merge != 0 || g[2]%merge != 0 {
			return nil, fmt.Errorf("prompt: grid_thw[%d] = %v is not a whole number of %d×%d merges", i, g, merge, merge)
		}
		for t := 0; t < g[0]; t++ {
			out = append(out, Grid{H: g[1] / merge, W: g[2] / merge})
		}
	}
	return out, nil
}

// Kind is a reference's modality.
type Kind int

const (
	Image Kind = iota
	Video
	Audio
)

func (k Kind) String() string {
	switch k {
	case Image:
		return "image"
	case Video:
		return "video"
	case Audio:
		return "audio"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Reference is one Ref2VA reference, as the presentation needs it.
type Reference struct {
	Kind Kind
	// Grid: an image's merged grid, or the merged grid of every block of a
	// video (all blocks of a video share the frame size).
	Grid Grid
	// Blocks: a video's two-frame blocks (SampleVideo), in order.
	Blocks []VideoBlock
	// Soundtrack: the video's own audio is used; its "<Audio j>: " label
	// comes before "<Video k>: " and takes an audio ordinal.
	Soundtrack bool
}

// Request is what the presentation depends on.
type Request struct {
	Task   Task
	Prompt string
	// Keyframes (FL2VA): the merged grid of each given keyframe, first then
	// last. A last-frame-only request passes one grid; it is "<Picture 1>".
	Keyframes []Grid
	// References (Ref2VA), in request order.
	References []Reference
}

// EmptyPrompt says what an empty prompt ("") does.
type EmptyPrompt int

const (
	// RejectEmpty: an empty prompt is an error (the reference's rule).
	RejectEmpty EmptyPrompt = iota
	// PadEmpty: h3.c's rule. An empty T2VA prompt becomes a single
	// <|endoftext|> pad token; in FL2VA/Ref2VA the prompt adds no token.
	PadEmpty
)

// Limits bound a request. The zero value means the release's limits.
type Limits struct {
	Keyframes int // FL2VA keyframes (2)
	Images    int // Ref2VA image references (9)
	Videos    int // Ref2VA video references (3)
	Audios    int // audio labels: standalone clips plus used soundtracks (3)
	Files     int // Ref2VA references in all (12)
	// MaxTokens bounds the whole presentation; 0 means the tokenizer's
	// model_max_length when it reports one, else 262,144 (the text
	// encoder's max_position_embeddings).
	MaxTokens int
}

// DefaultMaxTokens is the released text encoder's max_position_embeddings.
const DefaultMaxTokens = 262144

func (l Limits) withDefaults() Limits {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&l.Keyframes, 2)
	def(&l.Images, 9)
	def(&l.Videos, 3)
	def(&l.Audios, 3)
	def(&l.Files, 12)
	return l
}

// Options are the presentation's policies; the zero value is the reference.
type Options struct {
	EmptyPrompt EmptyPrompt
	Limits      Limits
}

// Encoder is what the presentation needs from the tokenizer;
// *tokenizer.Tokenizer implements it.
type Encoder interface {
	// Encode tokenizes one text segment without adding special tokens.
	Encode(text string) ([]int, error)
	// TokenID returns the id of a special token's content.
	TokenID(content string) (int, bool)
}

// The special tokens the presentation uses, by content; their ids come from
// the tokenizer files.
const (
	VisionStart = "<|vision_start|>"
	VisionEnd   = "<|vision_end|>"
	ImagePad    = "<|image_pad|>"
	VideoPad    = "<|video_pad|>"
	EndOfText   = "<|endoftext|>"
)

// Tags: the DiT's modality tag of each text-encoder row (a checkpoint
// contract: video/vision 0, text 1; audio 2 is for DiT audio rows only).
const (
	TagVision = 0
	TagText   = 1
)

// Block is one vision block of a presentation: <|vision_start|>, Grid.N()
// pads, <|vision_end|>.
type Block struct {
	Kind  Kind // Image (keyframe or image reference) or Video (one two-frame block)
	Item  int  // index in Request.Keyframes or Request.References
	Start int  // row of <|vision_start|>; pads are rows Start+1 … Start+N, <|vision_end|> is Start+N+1
	Grid  Grid
	// Video blocks: the block's index within its video and its timestamp.
	VideoBlock VideoBlock
}

// Pads returns the rows [from, to) of the block's pad tokens, in row-major
// merged-grid order: the rows the vision tower's merged tokens replace.
func (b Block) Pads() (from, to int) { return b.Start + 1, b.Start + 1 + b.Grid.N() }

// Segment is one piece of the presentation, for display and debugging: a
// text segment (label, timestamp or prompt; Text holds it) or a vision
// block (Block ≥ 0).
type Segment struct {
	Text       string
	Block      int // index in Presentation.Blocks, or -1 for text
	Start, Len int // rows
}

// Presentation is the text encoder's input for one request.
type Presentation struct {
	IDs  []int
	Tags []int // per row: TagText or TagVision
	// Positions are the M-RoPE position ids per axis (t, h, w) and row.
	Positions [3][]int
	Blocks    []Block
	Segments  []Segment
}

// Len is the number of rows.
func (p *Presentation) Len() int { return len(p.IDs) }

// TokenTypes returns Qwen's mm_token_type_ids: 0 text, 1 image pad, 2 video pad.
func (p *Presentation) TokenTypes() []int {
	out := make([]int, len(p.IDs))
	for _, b := range p.Blocks {
		from, to := b.Pads()
		for i := from; i < to; i++ {
			out[i] = 1 + int(b.Kind) // Image 0 → 1, Video 1 → 2
		}
	}
	return out
}

// Errors callers branch on.
var (
	ErrEmptyPrompt = errors.New("prompt: the prompt is empty; describe the video to generate")
	ErrTooLong     = errors.New("prompt: too long")
)

// LabelError reports a label in the prompt that names a reference the
// request does not have, e.g. <Picture 3> with two pictures.
type LabelError struct {
	Label  string // as written, e.g. "<Picture 3>"
	Offset int    // byte offset in the prompt
	Kind   Kind
	Have   int // how many references of that kind the request has
}

func (e *LabelError) Error() string {
	noun := map[Kind]string{Image: "picture", Video: "video", Audio: "audio reference"}[e.Kind]
	article := "a"
	if e.Kind == Audio {
		article = "an"
	}
	switch e.Have {
	case 0:
		return fmt.Sprintf("prompt: %s (byte %d) refers to %s %s, but the request has none", e.Label, e.Offset, article, noun)
	case 1:
		return fmt.Sprintf("prompt: %s (byte %d) refers to %s %s that does not exist: the request has 1 %s, <%s 1>", e.Label, e.Offset, article, noun, noun, labelWord[e.Kind])
	}
	return fmt.Sprintf("prompt: %s (byte %d) refers to %s %s that does not exist: the request has %d, <%s 1> … <%s %d>",
		e.Label, e.Offset, article, noun, e.Have, labelWord[e.Kind], labelWord[e.Kind], e.Have)
}

var labelWord = map[Kind]string{Image: "Picture", Video: "Video", Audio: "Audio"}

// Label is the label segment of the i-th (1-based) reference of a kind:
// "<Picture i>: ", "<Video i>: " or "<Audio i>: ".
func Label(k Kind, i int) string { return fmt.Sprintf("<%s %d>: ", labelWord[k], i) }

// CheckLabels verifies that every <Picture N>, <Video N> and <Audio N> the
// prompt contains names an existing reference (1 ≤ N ≤ count of that kind).
func CheckLabels(prompt string, pictures, videos, audios int) error {
	have := map[Kind]int{Image: pictures, Video: videos, Audio: audios}
	for i := 0; i < len(prompt); i++ {
		if prompt[i] != '<' {
			continue
		}
		for _, k := range []Kind{Image, Video, Audio} {
			word := labelWord[k]
			rest := prompt[i+1:]
			if !strings.HasPrefix(rest, word+" ") {
				continue
			}
			digits := rest[len(word)+1:]
			n := 0
			for n < len(digits) && digits[n] >= '0' && digits[n] <= '9' {
				n++
			}
			if n == 0 || n >= len(digits) || digits[n] != '>' {
				continue
			}
			num, err := strconv.Atoi(digits[:n])
			label := "<" + word + " " + digits[:n] + ">"
			if err != nil || num < 1 || num > have[k] {
				return &LabelError{Label: label, Offset: i, Kind: k, Have: have[k]}
			}
		}
	}
	return nil
}

// TimestampLabel is the text before a video block: "<t seconds>" with one
// decimal, correctly rounded from the binary value (Python's :.1f; for the
// quarter-second block times this is round-half-to-even: 0.25 → "0.2").
func TimestampLabel(seconds float64) string {
	return "<" + strconv.FormatFloat(seconds, 'f', 1, 64) + " seconds>"
}

// VideoBlock is one two-frame block of a reference video as Qwen sees it.
type VideoBlock struct {
	Index         int     // block number within the video, from 0
	First, Second int     // frame indices (24 fps) of its two samples; equal when the last sample is repeated
	Seconds       float64 // timestamp: the mean of the two samples' times
}

// SampleVideo samples a reference video for Qwen (H3-ENCODERS-VAES §7.7 as
// corrected by ERRATA F1): frames is the number of normalized 24 fps frames
// (the decoded reference truncated to the target frame count, NOT the
// 17m+5 prefix the VAE encodes). Every 12th frame is a sample (2 fps;
// sample i at i/2 s); an odd sample count repeats the last sample; samples
// pair into blocks whose timestamp is the pair's mean time.
func SampleVideo(frames int) ([]VideoBlock, error) {
	const step = 12 // 24 fps → 2 fps
	if frames < step+1 {
		return nil, fmt.Errorf("prompt: reference video too short for Qwen: %d frames at 24 fps give %d sample(s) at 2 fps; at least 2 (13 frames) are needed", frames, (frames+step-1)/step)
	}
	s := (frames + step - 1) / step
	blocks := make([]VideoBlock, 0, (s+1)/2)
	for b := 0; 2*b < s; b++ {
		i1, i2 := 2*b, min(2*b+1, s-1)
		blocks = append(blocks, VideoBlock{Index: b, First: i1 * step, Second: i2 * step, Seconds: float64(i1+i2) / 4})
	}
	return blocks, nil
}

// Present builds the presentation of r with tok (H3-ENCODERS-VAES §5):
//
//	t2va:   prompt
//	fl2va:  "<Picture 1>: " block(image) ["<Picture 2>: " block(image)] prompt
//	ref2va: per reference in order — image: "<Picture i>: " block;
//	        audio: "<Audio j>: "; video: ["<Audio j>: " if its soundtrack is
//	        used] "<Video k>: " then per block "<t seconds>" block(video) —
//	        then the prompt.
//
// Each text segment is tokenized on its own; the prompt is passed verbatim.
func Present(tok Encoder, r Request, opt Options) (*Presentation, error) {
	lim := opt.Limits.withDefaults()
	ids := map[string]int{}
	for _, c := range []string{VisionStart, VisionEnd, ImagePad, VideoPad, EndOfText} {
		id, ok := tok.TokenID(c)
		if !ok {
			return nil, fmt.Errorf("prompt: the tokenizer has no %s token", c)
		}
		ids[c] = id
	}
	p := &Presentation{}
	text := func(s string) error {
		t, err := tok.Encode(s)
		if err != nil {
			return fmt.Errorf("prompt: %w", err)
		}
		p.Segments = append(p.Segments, Segment{Text: s, Block: -1, Start: len(p.IDs), Len: len(t)})
		p.IDs = append(p.IDs, t...)
		for range t {
			p.Tags = append(p.Tags, TagText)
		}
		return nil
	}
	block := func(b Block) error {
		if b.Grid.H < 1 || b.Grid.W < 1 {
			return fmt.Errorf("prompt: %s %d has an empty vision grid %dx%d", b.Kind, b.Item+1, b.Grid.H, b.Grid.W)
		}
		pad := ids[ImagePad]
		if b.Kind == Video {
			pad = ids[VideoPad]
		}
		b.Start = len(p.IDs)
		n := b.Grid.N()
		p.Segments = append(p.Segments, Segment{Block: len(p.Blocks), Start: b.Start, Len: n + 2})
		p.Blocks = append(p.Blocks, b)
		p.IDs = append(p.IDs, ids[VisionStart])
		for i := 0; i < n; i++ {
			p.IDs = append(p.IDs, pad)
		}
		p.IDs = append(p.IDs, ids[VisionEnd])
		for i := 0; i < n+2; i++ {
			p.Tags = append(p.Tags, TagVision)
		}
		return nil
	}

	var pictures, videos, audios int
	switch r.Task {
	case T2VA:
		if len(r.Keyframes) > 0 || len(r.References) > 0 {
			return nil, errors.New("prompt: a text-to-video request takes no keyframes or references")
		}
	case FL2VA:
		if len(r.References) > 0 {
			return nil, errors.New("prompt: an FL2VA request takes keyframes, not references")
		}
		if len(r.Keyframes) < 1 || len(r.Keyframes) > lim.Keyframes {
			return nil, fmt.Errorf("prompt: FL2VA takes 1 to %d keyframes (first and/or last), got %d", lim.Keyframes, len(r.Keyframes))
		}
		for i, g := range r.Keyframes {
			if err := text(Label(Image, i+1)); err != nil {
				return nil, err
			}
			if err := block(Block{Kind: Image, Item: i, Grid: g}); err != nil {
				return nil, err
			}
		}
		pictures = len(r.Keyframes)
	case Ref2VA:
		if len(r.Keyframes) > 0 {
			return nil, errors.New("prompt: a Ref2VA request takes references, not keyframes")
		}
		if err := checkReferences(r.References, lim); err != nil {
			return nil, err
		}
		for i, ref := range r.References {
			switch ref.Kind {
			case Image:
				pictures++
				if err := text(Label(Image, pictures)); err != nil {
					return nil, err
				}
				if err := block(Block{Kind: Image, Item: i, Grid: ref.Grid}); err != nil {
					return nil, err
				}
			case Audio:
				audios++
				if err := text(Label(Audio, audios)); err != nil {
					return nil, err
				}
			case Video:
				if ref.Soundtrack {
					audios++
					if err := text(Label(Audio, audios)); err != nil {
						return nil, err
					}
				}
				videos++
				if err := text(Label(Video, videos)); err != nil {
					return nil, err
				}
				for _, vb := range ref.Blocks {
					if err := text(TimestampLabel(vb.Seconds)); err != nil {
						return nil, err
					}
					if err := block(Block{Kind: Video, Item: i, Grid: ref.Grid, VideoBlock: vb}); err != nil {
						return nil, err
					}
				}
			}
		}
	default:
		return nil, fmt.Errorf("prompt: unknown task %v", r.Task)
	}

	if err := CheckLabels(r.Prompt, pictures, videos, audios); err != nil {
		return nil, err
	}
	switch {
	case r.Prompt != "":
		if err := text(r.Prompt); err != nil {
			return nil, err
		}
	case opt.EmptyPrompt == RejectEmpty:
		return nil, ErrEmptyPrompt
	case r.Task == T2VA:
		p.Segments = append(p.Segments, Segment{Text: EndOfText, Block: -1, Start: len(p.IDs), Len: 1})
		p.IDs = append(p.IDs, ids[EndOfText])
		p.Tags = append(p.Tags, TagText)
	}

	maxTokens := lim.MaxTokens
	if maxTokens <= 0 {
		maxTokens = DefaultMaxTokens
		if m, ok := tok.(interface{ ModelMaxLength() int }); ok && m.ModelMaxLength() > 0 {
			maxTokens = m.ModelMaxLength()
		}
	}
	if len(p.IDs) > maxTokens {
		return nil, fmt.Errorf("%w: the presentation is %d tokens, the limit is %d (the prompt alone is %d); shorten the prompt or use fewer/smaller references",
			ErrTooLong, len(p.IDs), maxTokens, promptLen(p, r.Prompt))
	}
	grids := make([]Grid, len(p.Blocks))
	for i, b := range p.Blocks {
		grids[i] = b.Grid
	}
	pos, err := PositionIDs(p.IDs, []int{ids[ImagePad], ids[VideoPad]}, grids)
	if err != nil {
		return nil, err // a bug: Present made the blocks
	}
	p.Positions = pos
	return p, nil
}

func promptLen(p *Presentation, prompt string) int {
	if len(p.Segments) == 0 || prompt == "" {
		return 0
	}
	return p.Segments[len(p.Segments)-1].Len
}

func checkReferences(refs []Reference, lim Limits) error {
	if len(refs) == 0 {
		return errors.New("prompt: a Ref2VA request needs at least one reference")
	}
	var images, videos, audios, clips int
	for i, ref := range refs {
		switch ref.Kind {
		case Image:
			images++
		case Video:
			videos++
			if ref.Soundtrack {
				audios++
			}
			if len(ref.Blocks) == 0 {
				return fmt.Errorf("prompt: reference %d (video) has no frame blocks (see SampleVideo)", i+1)
			}
		case Audio:
			audios++
			clips++
		default:
			return fmt.Errorf("prompt: reference %d has unknown kind %v", i+1, ref.Kind)
		}
	}
	switch {
	case images > lim.Images:
		return fmt.Errorf("prompt: %d image references; the model accepts at most %d", images, lim.Images)
	case videos > lim.Videos:
		return fmt.Errorf("prompt: %d video references; the model accepts at most %d", videos, lim.Videos)
	case audios > lim.Audios:
		return fmt.Errorf("prompt: %d audio references (clips and video soundtracks); the model accepts at most %d", audios, lim.Audios)
	case len(refs) > lim.Files:
		return fmt.Errorf("prompt: %d references; the model accepts at most %d files", len(refs), lim.Files)
	case clips == len(refs):
		return errors.New("prompt: audio cannot be the only reference; add an image or a video")
	}
	return nil
}

// PositionIDs computes Qwen3-VL's multimodal rotary position ids (t, h, w)
// for a token sequence, as HF Qwen3VLModel.get_rope_index does with every
// vision block of grid_t = 1 (H3-ENCODERS-VAES §5.1): text tokens (vision
// start/end included) take the running position on all three axes; the pads
// of a block with merged grid H×W starting at position base take (base,
// base+r, base+c) in row-major order, after which text resumes at
// base + max(H, W). grids gives each block's merged grid in order; a block
// is a maximal run of one pad id, and must hold exactly H·W pads.
func PositionIDs(ids []int, padIDs []int, grids []Grid) ([3][]int, error) {
	var pos [3][]int
	for a := range pos {
		pos[a] = make([]int, len(ids))
	}
	isPad := func(id int) bool {
		for _, p := range padIDs {
			if id == p {
				return true
			}
		}
		return false
	}
	cur, b := 0, 0
	for i := 0; i < len(ids); {
		if !isPad(ids[i]) {
			pos[0][i], pos[1][i], pos[2][i] = cur, cur, cur
			cur++
			i++
			continue
		}
		run := i
		for run < len(ids) && ids[run] == ids[i] {
			run++
		}
		// A run of pads may hold several blocks only if grids say so; with
		// vision start/end around every block it never does in H3.
		for i < run {
			if b >= len(grids) {
				return pos, fmt.Errorf("prompt: pad run at row %d has no grid (%d grids given)", i, len(grids))
			}
			g := grids[b]
			if g.N() < 1 || i+g.N() > run {
				return pos, fmt.Errorf("prompt: block %d (grid %dx%d, %d pads) does not fit the pad run at rows %d–%d", b, g.H, g.W, g.N(), i, run-1)
			}
			base := cur
			for r := 0; r < g.H; r++ {
				for c := 0; c < g.W; c++ {
					pos[0][i], pos[1][i], pos[2][i] = base, base+r, base+c
					i++
				}
			}
			cur = base + max(g.H, g.W)
			b++
		}
	}
	if b != len(grids) {
		return pos, fmt.Errorf("prompt: %d grids given for %d vision blocks", len(grids), b)
	}
	return pos, nil
}
