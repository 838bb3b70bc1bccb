package engine

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
)

// Request limits (h3.c's rules; the released model is a 768p model).
const (
	DefaultWidth  = 864
	DefaultHeight = 480
	DefaultFrames = 56
	DefaultSteps  = 20
	DefaultSeed   = 42

	MaxPixels    = 768 * 1344 // largest canvas area
	CanvasAlign  = 32         // canvas sides are multiples of this
	MinFrames    = 22         // one trained decoder chunk
	MaxFrames    = 362        // 15.08 s
	MinSteps     = 2
	MaxSteps     = 1000
	MaxReuse     = 3
	MaxCoreReuse = 6

	MaxReferences      = 12
	MaxReferenceImages = 9
	MaxReferenceVideos = 3
	MaxReferenceAudio  = 3
)

// RequestError is a request Plan refuses, before anything is loaded: the
// field, the rule it breaks and what is allowed.
type RequestError struct {
	Field string // e.g. "width", "frames", "references[2]"
	Rule  string // e.g. "must be a multiple of 32 (allowed: 32..1344)"
}

func (e *RequestError) Error() string {
	return fmt.Sprintf("engine: invalid request: %s %s", e.Field, e.Rule)
}

// IsRequestError reports whether err is (or wraps) a *RequestError.
func IsRequestError(err error) bool {
	var re *RequestError
	return errors.As(err, &re)
}

func reqErr(field, format string, args ...any) error {
	return &RequestError{Field: field, Rule: fmt.Sprintf(format, args...)}
}

// AlignFrames rounds a frame count up to the next legal count 17n+5 (counts
// below 5 become 5), as the video VAE's temporal chunking requires.
func AlignFrames(f int) int {
	if f <= 5 {
		return 5
	}
	return f + ((5-f)%17+17)%17
}

// SecondsToFrames converts a duration to a legal frame count at 24 fps: the
// nearest whole frame count, aligned up (h3.c: 10 s → 240 → 243).
func SecondsToFrames(s float64) int {
	return AlignFrames(int(math.Round(24 * s)))
}

// PresetSettings are the speed controls a preset stands for.
type PresetSettings struct {
	Steps, Reuse, CoreReuse int
	// LayersFraction keeps this fraction of the transformer blocks
	// (1 = all); for the released 50-block model 0.8 = 40 blocks.
	LayersFraction float64
	Summary        string
}

// Presets maps each quality preset to its speed controls.
var Presets = map[Preset]PresetSettings{
	PresetReference: {Steps: 50, Reuse: 1, CoreReuse: 1, LayersFraction: 1, Summary: "50 steps, exact path — slowest, the released workflow's quality"},
	PresetDefault:   {Steps: 20, Reuse: 1, CoreReuse: 1, LayersFraction: 1, Summary: "20 steps, exact path"},
	PresetFast:      {Steps: 20, Reuse: 2, CoreReuse: 1, LayersFraction: 1, Summary: "20 steps with velocity reuse — about 1.8× faster, close to Default"},
	PresetPreview:   {Steps: 16, Reuse: 3, CoreReuse: 1, LayersFraction: 0.8, Summary: "16 steps, reuse 3, 80% of the blocks — about 4× faster, may change composition"},
}

// ModelFacts are what Plan needs to know about the installed model, read
// from configs only (no weight is mapped).
type ModelFacts struct {
	Blocks    int  // transformer blocks (50 released)
	HasFL2VA  bool // t2va / fl2va available
	HasRef2VA bool // ref2va available
	Demo      bool // the demo checkpoint
}

// LayerRange is the allowed range of Request.Layers for a model with n
// blocks: 35..50 for the released 50-block model, the same proportion
// (rounded up) otherwise.
func LayerRange(n int) (lo, hi int) {
	return (n*35 + 49) / 50, n
}

// resolve validates r against the rules and the model and fills defaults.
// It touches nothing but the file system's metadata (reference files must
// exist).
func resolve(r Request, m ModelFacts) (Plan, error) {
	var p Plan
	var notes []string

	// Task from the slots.
	hasKey := r.First != "" || r.Last != "" || r.FirstImage != nil || r.LastImage != nil
	switch {
	case len(r.References) > 0 && hasKey:
		return p, reqErr("references", "do not mix with first/last frames: remove the references or the frames")
	case len(r.References) > 0:
		p.Task = TaskRef2VA
	case hasKey:
		p.Task = TaskFL2VA
	default:
		p.Task = TaskT2VA
	}
	switch p.Task {
	case TaskRef2VA:
		if !m.HasRef2VA {
			return p, reqErr("task", "ref2va needs the Ref2VA partition, which this model folder lacks")
		}
	default:
		if !m.HasFL2VA {
			return p, reqErr("task", "%s needs the FL2VA partition, which this model folder lacks", p.Task)
		}
	}

	// Canvas.
	if r.Width == 0 && r.Height == 0 {
		r.Width, r.Height = DefaultWidth, DefaultHeight
	}
	if err := checkCanvas("width", "height", r.Width, r.Height); err != nil {
		return p, err
	}
	if r.RenderWidth != 0 || r.RenderHeight != 0 {
		if err := checkCanvas("render-width", "render-height", r.RenderWidth, r.RenderHeight); err != nil {
			return p, err
		}
		if r.RenderWidth > r.Width || r.RenderHeight > r.Height {
			return p, reqErr("render canvas", "%dx%d must not exceed the output canvas %dx%d", r.RenderWidth, r.RenderHeight, r.Width, r.Height)
		}
		if r.RenderWidth*r.Height != r.RenderHeight*r.Width {
			return p, reqErr("render canvas", "%dx%d must have the output canvas's aspect ratio (%dx%d)", r.RenderWidth, r.RenderHeight, r.Width, r.Height)
		}
		if r.RenderWidth == r.Width {
			r.RenderWidth, r.RenderHeight = 0, 0
		}
	}

	// Duration.
	switch {
	case r.Frames != 0 && r.Seconds != 0:
		return p, reqErr("duration", "give frames or seconds, not both")
	case r.Seconds < 0 || r.Frames < 0:
		return p, reqErr("duration", "must be positive")
	case r.Seconds > 0:
		f := SecondsToFrames(r.Seconds)
		notes = append(notes, fmt.Sprintf("%.2f s → %d frames (%.2f s; lengths are 17n+5 frames at 24 fps)", r.Seconds, f, float64(f)/24))
		r.Frames, r.Seconds = f, 0
	case r.Frames == 0:
		r.Frames = DefaultFrames
	default:
		if f := AlignFrames(r.Frames); f != r.Frames {
			notes = append(notes, fmt.Sprintf("frames rounded up from %d to %d (lengths are 17n+5 frames)", r.Frames, f))
			r.Frames = f
		}
	}
	if r.Frames < MinFrames || r.Frames > MaxFrames {
		return p, reqErr("frames", "%d after alignment is outside %d..%d (%.2f–%.2f s at 24 fps)", r.Frames, MinFrames, MaxFrames, float64(MinFrames)/24, float64(MaxFrames)/24)
	}

	// Speed controls: the preset fills what the request leaves at zero.
	if r.Preset == "" {
		r.Preset = PresetDefault
	}
	ps, ok := Presets[r.Preset]
	if !ok {
		return p, reqErr("preset", "%q is unknown (allowed: reference, default, fast, preview)", r.Preset)
	}
	if r.Steps == 0 {
		r.Steps = ps.Steps
	}
	if r.Steps < MinSteps || r.Steps > MaxSteps {
		return p, reqErr("steps", "%d is outside %d..%d", r.Steps, MinSteps, MaxSteps)
	}
	reuseSet, coreSet := r.Reuse != 0, r.CoreReuse != 0
	if r.Reuse == 0 {
		r.Reuse = ps.Reuse
		if coreSet && r.CoreReuse > 1 {
			r.Reuse = 1 // an explicit core reuse replaces the preset's velocity reuse
		}
	}
	if r.CoreReuse == 0 {
		r.CoreReuse = ps.CoreReuse
		if reuseSet && r.Reuse > 1 {
			r.CoreReuse = 1
		}
	}
	if r.Reuse < 1 || r.Reuse > MaxReuse {
		return p, reqErr("reuse", "%d is outside 1..%d", r.Reuse, MaxReuse)
	}
	if r.CoreReuse < 1 || r.CoreReuse > MaxCoreReuse {
		return p, reqErr("core-reuse", "%d is outside 1..%d", r.CoreReuse, MaxCoreReuse)
	}
	if r.Reuse > 1 && r.CoreReuse > 1 {
		return p, reqErr("reuse", "%d cannot be combined with core-reuse %d (velocity reuse and core reuse are exclusive)", r.Reuse, r.CoreReuse)
	}
	if m.Blocks > 0 {
		lo, hi := LayerRange(m.Blocks)
		if r.Layers == 0 {
			r.Layers = int(math.Ceil(ps.LayersFraction * float64(m.Blocks)))
			if r.Layers < lo {
				r.Layers = lo
			}
		}
		if r.Layers < lo || r.Layers > hi {
			return p, reqErr("layers", "%d is outside %d..%d for this %d-block model", r.Layers, lo, hi, m.Blocks)
		}
	}
	if r.TokenReduction {
		notes = append(notes, "token reduction changes composition (opt-in speed control)")
	}
	if !r.SeedSet {
		r.Seed, r.SeedSet = DefaultSeed, true
	}

	// Conditions.
	if p.Task == TaskFL2VA {
		for _, f := range []struct{ field, path string }{{"first-frame", r.First}, {"last-frame", r.Last}} {
			if f.path != "" {
				if err := checkFile(f.field, f.path); err != nil {
					return p, err
				}
			}
		}
	}
	if p.Task == TaskRef2VA {
		if err := checkReferences(r.References); err != nil {
			return p, err
		}
	}
	if strings.TrimSpace(r.Prompt) == "" {
		notes = append(notes, "the prompt is empty: the model will improvise")
	}

	// Geometry of the (render) canvas the model runs at.
	w, h := r.Width, r.Height
	if r.RenderWidth != 0 {
		w, h = r.RenderWidth, r.RenderHeight
	}
	p.LatentWidth, p.LatentHeight = w/16, h/16
	p.LatentFrames = 5*((r.Frames-5)/17) + 2
	p.AudioLatents = int(math.Round(float64(r.Frames) * 40 / 24))
	p.Forwards = forwardCount(r.Steps, r.Reuse)
	p.Request = r
	p.Notes = notes
	p.Memory = r.Memory
	return p, nil
}

// forwardCount is the number of DiT evaluations of steps denoising steps with
// velocity reuse N: step 0, the last step and every step with step mod N = 0
// (H3-DIT §13.1).
func forwardCount(steps, reuse int) int {
	if reuse <= 1 {
		return steps
	}
	n := 0
	for s := 0; s < steps; s++ {
		if s == 0 || s == steps-1 || s%reuse == 0 {
			n++
		}
	}
	return n
}

func checkCanvas(wf, hf string, w, h int) error {
	for _, c := range []struct {
		field string
		v     int
	}{{wf, w}, {hf, h}} {
		if c.v < CanvasAlign || c.v%CanvasAlign != 0 {
			return reqErr(c.field, "%d must be a multiple of %d and at least %d", c.v, CanvasAlign, CanvasAlign)
		}
	}
	if w*h > MaxPixels {
		return reqErr(wf+"×"+hf, "%dx%d has %d pixels, more than the model's %d (768×1344)", w, h, w*h, MaxPixels)
	}
	return nil
}

func checkFile(field, path string) error {
	st, err := os.Stat(path)
	switch {
	case err != nil:
		return reqErr(field, "%s: %v", path, errors.Unwrap(err))
	case st.IsDir():
		return reqErr(field, "%s is a folder, not a file", path)
	}
	return nil
}

func checkReferences(refs []Reference) error {
	if len(refs) > MaxReferences {
		return reqErr("references", "%d given, at most %d", len(refs), MaxReferences)
	}
	var images, videos, audios, visual int
	for i, ref := range refs {
		field := fmt.Sprintf("references[%d]", i+1)
		if err := checkFile(field, ref.Path); err != nil {
			return err
		}
		switch ref.Kind {
		case RefImage:
			images++
			visual++
		case RefVideo, RefSilentVideo:
			videos++
			visual++
		case RefVideoAudio:
			videos++
			visual++
			if err := checkFile(field+" audio", ref.Audio); err != nil {
				return err
			}
		case RefAudio:
			audios++
		default:
			return reqErr(field, "kind %q is unknown (image, video, silent-video, video-audio, audio)", ref.Kind)
		}
	}
	switch {
	case images > MaxReferenceImages:
		return reqErr("references", "%d images, at most %d", images, MaxReferenceImages)
	case videos > MaxReferenceVideos:
		return reqErr("references", "%d videos, at most %d", videos, MaxReferenceVideos)
	case audios > MaxReferenceAudio:
		return reqErr("references", "%d audio clips, at most %d", audios, MaxReferenceAudio)
	case visual == 0:
		return reqErr("references", "audio references need at least one image or video reference")
	}
	return nil
}
