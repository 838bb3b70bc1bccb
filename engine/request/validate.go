package request

import (
	"errors"
	"fmt"
	"image"
	"math"
	"os"
	"slices"
	"strings"
	"unicode/utf8"

	"h3studio/engine/layout"
	"h3studio/engine/media"
	"h3studio/engine/plan"
	"h3studio/engine/prompt"
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
	Err   error  // the cause, when an input file could not be used
}

// Unwrap returns the cause.
func (e *RequestError) Unwrap() error { return e.Err }

func (e *RequestError) Error() string {
	if e.Rule == "" {
		return "engine: invalid request: " + e.Field
	}
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
// below 5 become 5), as the video VAE's temporal chunking requires
// (layout.AlignFrames).
func AlignFrames(f int) int {
	if f < 1 {
		return layout.MinFrames
	}
	a, _ := layout.AlignFrames(f)
	return a
}

// SecondsToFrames converts a duration to a legal frame count at 24 fps: the
// nearest whole frame count, aligned up (h3.c: 10 s → 240 → 243). It
// returns 0 for a duration that is not a positive number.
func SecondsToFrames(s float64) int {
	f, err := layout.FramesFromSeconds(s)
	if err != nil {
		return 0
	}
	return f
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

// Layer thinning limits (h3.c --layers): a count of the released model's 50
// blocks. For a model with another depth the count is scaled by
// dit.SelectBlocks, so the same 35..50 applies to every model.
const (
	MinLayers = 35
	MaxLayers = 50
)

// Prober reports what a conditioning file holds without decoding it
// (media.Open(path).Info()).
type Prober func(path string) (media.Info, error)

// ProbeWith returns a Prober over an Opener.
func ProbeWith(open media.Opener) Prober {
	if open == nil {
		open = media.Open
	}
	return func(path string) (media.Info, error) {
		src, err := open(path)
		if err != nil {
			return media.Info{}, err
		}
		defer src.Close()
		return src.Info(), nil
	}
}

// Resolve validates r against the rules and the model and fills defaults.
// It reads nothing but file headers (conditioning files are probed through
// probe) and maps no weight. Each rule below refuses with a *RequestError
// naming the field, or fills what the request leaves at zero.
func Resolve(r Request, m ModelFacts, probe Prober) (Plan, error) {
	q := &resolution{r: r, m: m, probe: probe}
	for _, rule := range []func() error{q.task, q.canvas, q.duration, q.speed, q.conditions, q.prompt} {
		if err := rule(); err != nil {
			return q.p, err
		}
	}
	// Geometry of the (render) canvas the model runs at.
	p, r := q.p, q.r
	lh, lw := p.ModelCanvas(r).Latent()
	p.LatentWidth, p.LatentHeight = lw, lh
	p.LatentFrames, _ = layout.LatentFrames(r.Frames)
	p.AudioLatents = layout.AudioLatents(r.Frames)
	p.Forwards = forwardCount(r.Steps, r.Reuse)
	p.Request = r
	p.Notes = q.notes
	p.Memory = r.Memory
	return p, nil
}

// resolution is a request being resolved: the request as its defaults are
// filled in, the plan so far and its notes.
type resolution struct {
	r     Request
	m     ModelFacts
	probe Prober
	p     Plan
	notes []string
}

// task picks the task from the slots the request fills and checks the
// model folder has its partition.
func (q *resolution) task() error {
	r := &q.r
	// Task from the slots.
	hasKey := r.First != "" || r.Last != "" || r.FirstImage != nil || r.LastImage != nil
	switch {
	case len(r.References) > 0 && hasKey:
		return reqErr("references", "do not mix with first/last frames: remove the references or the frames")
	case len(r.References) > 0:
		q.p.Task = TaskRef2VA
	case hasKey:
		q.p.Task = TaskFL2VA
	default:
		q.p.Task = TaskT2VA
	}
	switch q.p.Task {
	case TaskRef2VA:
		if !q.m.HasRef2VA {
			return reqErr("task", "ref2va needs the Ref2VA partition, which this model folder lacks")
		}
	default:
		if !q.m.HasFL2VA {
			return reqErr("task", "%s needs the FL2VA partition, which this model folder lacks", q.p.Task)
		}
	}
	return nil
}

// canvas checks the output and render canvases (h3.c: multiples of 32,
// at least 32, at most 768·1344 pixels; the render canvas of the same
// aspect, no larger than the output).
func (q *resolution) canvas() error {
	r := &q.r
	if r.Width == 0 && r.Height == 0 {
		r.Width, r.Height = DefaultWidth, DefaultHeight
	}
	if err := checkCanvas("width", "height", r.Width, r.Height); err != nil {
		return err
	}
	if r.RenderWidth != 0 || r.RenderHeight != 0 {
		if err := checkCanvas("render-width", "render-height", r.RenderWidth, r.RenderHeight); err != nil {
			return err
		}
		out := layout.Canvas{Width: r.Width, Height: r.Height}
		ren := layout.Canvas{Width: r.RenderWidth, Height: r.RenderHeight}
		if err := layout.ValidateRender(ren, out); err != nil {
			rule := "must have the output canvas's aspect ratio and be no larger than it"
			if ren.Width > out.Width || ren.Height > out.Height {
				rule = "must not exceed the output canvas"
			} else if int64(ren.Width)*int64(out.Height) != int64(ren.Height)*int64(out.Width) {
				rule = "must have the output canvas's aspect ratio"
			}
			return reqErr("render canvas", "%v %s %v", ren, rule, out)
		}
		if r.RenderWidth == r.Width {
			r.RenderWidth, r.RenderHeight = 0, 0
		}
	}
	return nil
}

// duration aligns frames up to 17n+5, or converts seconds to frames (h3.c).
func (q *resolution) duration() error {
	r := &q.r
	switch {
	case r.Frames != 0 && r.Seconds != 0:
		return reqErr("duration", "give frames or seconds, not both")
	case r.Seconds < 0 || r.Frames < 0 || math.IsNaN(r.Seconds):
		return reqErr("duration", "must be positive")
	case r.Seconds > 0:
		f, err := layout.FramesFromSeconds(r.Seconds)
		if err != nil {
			return reqErr("seconds", "%v is outside %.2f–%.2f s", r.Seconds, float64(MinFrames)/24, float64(MaxFrames)/24)
		}
		q.notes = append(q.notes, fmt.Sprintf("%.2f s → %d frames (%.2f s; lengths are 17n+5 frames at 24 fps)", r.Seconds, f, float64(f)/24))
		r.Frames, r.Seconds = f, 0
	case r.Frames == 0:
		r.Frames = DefaultFrames
	default:
		f, _ := layout.AlignFrames(r.Frames)
		if f != r.Frames {
			q.notes = append(q.notes, fmt.Sprintf("frames rounded up from %d to %d (lengths are 17n+5 frames)", r.Frames, f))
			r.Frames = f
		}
	}
	if r.Frames < MinFrames || r.Frames > MaxFrames {
		return reqErr("frames", "%d after alignment is outside %d..%d (%.2f–%.2f s at 24 fps)", r.Frames, MinFrames, MaxFrames, float64(MinFrames)/24, float64(MaxFrames)/24)
	}
	return nil
}

// speed fills the speed controls from the preset where the request leaves
// them at zero and checks their ranges, then the seed and memory mode.
func (q *resolution) speed() error {
	r := &q.r
	if r.Preset == "" {
		r.Preset = PresetDefault
	}
	ps, ok := Presets[r.Preset]
	if !ok {
		return reqErr("preset", "%q is unknown (allowed: reference, default, fast, preview)", r.Preset)
	}
	if r.Turbo != 0 {
		if !slices.Contains(TurboSteps, r.Turbo) {
			return reqErr("turbo", "%d is not a Turbo preset (allowed: 4, 6, 8 passes)", r.Turbo)
		}
		// The Turbo preset: its passes, the exact path, its shifts
		// (explicit controls win).
		ps = PresetSettings{Steps: r.Turbo, Reuse: 1, CoreReuse: 1, LayersFraction: 1}
		v, a := turboShifts(r.Width, r.Height)
		if r.VideoShift == 0 {
			r.VideoShift = v
		}
		if r.AudioShift == 0 {
			r.AudioShift = a
		}
		if len(r.LoRAs) == 0 {
			q.notes = append(q.notes, "the Turbo preset expects a distilled Turbo LoRA (--lora); without one the base model at so few passes is blurry")
		}
	}
	if r.VideoShift < 0 || r.VideoShift > 100 || r.AudioShift < 0 || r.AudioShift > 100 || math.IsNaN(r.VideoShift+r.AudioShift) {
		return reqErr("shift", "video shift %g / audio shift %g outside 0..100 (0 = released 12 / 3)", r.VideoShift, r.AudioShift)
	}
	if err := resolveLoRAs(*r); err != nil {
		return err
	}
	if r.Steps == 0 {
		r.Steps = ps.Steps
	}
	if r.Steps < MinSteps || r.Steps > MaxSteps {
		return reqErr("steps", "%d is outside %d..%d", r.Steps, MinSteps, MaxSteps)
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
		return reqErr("reuse", "%d is outside 1..%d", r.Reuse, MaxReuse)
	}
	if r.CoreReuse < 1 || r.CoreReuse > MaxCoreReuse {
		return reqErr("core-reuse", "%d is outside 1..%d", r.CoreReuse, MaxCoreReuse)
	}
	if r.Reuse > 1 && r.CoreReuse > 1 {
		return reqErr("reuse", "%d cannot be combined with core-reuse %d (velocity reuse and core reuse are exclusive)", r.Reuse, r.CoreReuse)
	}
	if r.Layers == 0 {
		r.Layers = int(math.Ceil(ps.LayersFraction * MaxLayers))
	}
	if r.Layers < MinLayers || r.Layers > MaxLayers {
		return reqErr("layers", "%d is outside %d..%d (blocks of the released 50; scaled for other depths)", r.Layers, MinLayers, MaxLayers)
	}
	if r.TokenReduction {
		q.notes = append(q.notes, "token reduction changes composition (opt-in speed control)")
	}
	if !r.SeedSet {
		r.Seed, r.SeedSet = DefaultSeed, true
	}
	if _, err := plan.ParseMode(string(r.Memory)); r.Memory != MemoryAuto && err != nil {
		return reqErr("memory", "%q is unknown (allowed: auto, resident, resident-int8, resident-int4, streaming, streaming-int8, streaming-int4)", r.Memory)
	}
	if _, err := plan.ParseQualityFloor(string(r.Quality)); err != nil {
		return reqErr("quality_floor", "%q is unknown (allowed: best, balanced, fastest)", r.Quality)
	}
	return nil
}

// conditions checks the conditioning files exist and hold what their slot
// needs, and the reference limits (media's rules, the release's).
func (q *resolution) conditions() error {
	r := &q.r
	if q.probe == nil {
		q.probe = ProbeWith(nil)
	}
	if q.p.Task == TaskFL2VA {
		for _, f := range []struct {
			field, path string
			img         image.Image
		}{{"first-frame", r.First, r.FirstImage}, {"last-frame", r.Last, r.LastImage}} {
			if f.img != nil || f.path == "" {
				continue
			}
			info, err := probeFile(q.probe, f.field, f.path)
			if err != nil {
				return err
			}
			if info.Kind != media.KindImage {
				return reqErr(f.field, "%s is %s, not a picture", f.path, kindWords[info.Kind])
			}
		}
	}
	mc := q.p.ModelCanvas(*r)
	if q.p.Task == TaskRef2VA {
		refs, err := checkReferences(*r, mc, q.probe)
		if err != nil {
			return err
		}
		q.p.References = refs
	}
	return nil
}

// prompt checks the prompt is valid UTF-8 and its labels name existing
// inputs (<Picture 3> with two pictures is a mistake the model cannot
// resolve).
func (q *resolution) prompt() error {
	r := &q.r
	var pictures, videos, audios int
	pictures = len(q.p.Anchors())
	for _, rp := range q.p.References {
		switch rp.Kind {
		case RefImage:
			pictures++
		case RefAudio:
			audios++
		default:
			videos++
			if rp.Sound {
				audios++
			}
		}
	}
	// The tokenizer refuses invalid UTF-8 too, but only after the models
	// are loaded: refuse it here, before anything is mapped.
	if !utf8.ValidString(r.Prompt) {
		return reqErr("prompt", "is not valid UTF-8 (first invalid byte at offset %d)", invalidUTF8Offset(r.Prompt))
	}
	if err := prompt.CheckLabels(r.Prompt, pictures, videos, audios); err != nil {
		return reqErr("prompt", "%v", strings.TrimPrefix(err.Error(), "prompt: "))
	}
	if strings.TrimSpace(r.Prompt) == "" {
		q.notes = append(q.notes, "the prompt is empty: the model will improvise")
	}
	return nil
}

// invalidUTF8Offset is the byte offset of s's first invalid UTF-8 sequence
// (len(s) when there is none).
func invalidUTF8Offset(s string) int {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return len(s)
}

// ModelCanvas is the canvas the model runs at: the render canvas when the
// request has one, else the output canvas.
func (Plan) ModelCanvas(r Request) layout.Canvas {
	if r.RenderWidth != 0 {
		return layout.Canvas{Width: r.RenderWidth, Height: r.RenderHeight}
	}
	return layout.Canvas{Width: r.Width, Height: r.Height}
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
	if err := (layout.Canvas{Width: w, Height: h}).Validate(); err != nil {
		return reqErr(wf+"×"+hf, "%dx%d has %d pixels, more than the model's %d (768×1344)", w, h, w*h, MaxPixels)
	}
	return nil
}

var kindWords = map[media.Kind]string{media.KindImage: "a picture", media.KindVideo: "a video", media.KindAudio: "a sound file", 0: "not a media file"}

// probeFile probes one conditioning file, turning a missing or unreadable
// file into a request error naming the field.
func probeFile(probe Prober, field, path string) (media.Info, error) {
	st, err := os.Stat(path)
	switch {
	case err != nil:
		return media.Info{}, reqErr(field, "%s: %v", path, errors.Unwrap(err))
	case st.IsDir():
		return media.Info{}, reqErr(field, "%s is a folder, not a file", path)
	}
	info, err := probe(path)
	if err != nil {
		var me *media.Error
		if errors.As(err, &me) {
			return media.Info{}, reqErr(field, "%s: %s", path, me.Problem)
		}
		return media.Info{}, reqErr(field, "%s: %v", path, err)
	}
	return info, nil
}

// checkReferences probes every reference and applies the release's
// reference rules (media.CheckReferences: counts, clip lengths, aspect
// ratios, sound where sound is asked for) plus h3.c's rule that a video's
// sound track conditions only generations of at least 2 s. It returns each
// reference as it will be encoded.
func checkReferences(r Request, mc layout.Canvas, probe Prober) ([]ReferencePlan, error) {
	refs := r.References
	if len(refs) > MaxReferences {
		return nil, reqErr("references", "%d given, at most %d", len(refs), MaxReferences)
	}
	labels := ReferenceLabels(refs)
	mrefs := make([]media.Ref, len(refs))
	plans := make([]ReferencePlan, len(refs))
	for i, ref := range refs {
		field := fmt.Sprintf("references[%d]", i+1)
		mr := media.Ref{Path: ref.Path}
		switch ref.Kind {
		case RefImage:
			mr.Kind = media.KindImage
		case RefVideo, RefSilentVideo:
			mr.Kind = media.KindVideo
		case RefVideoAudio:
			mr.Kind, mr.AudioPath = media.KindVideo, ref.Audio
			if ref.Audio == "" {
				return nil, reqErr(field, "a video with a separate sound needs the sound file")
			}
		case RefAudio:
			mr.Kind = media.KindAudio
		default:
			return nil, reqErr(field, "kind %q is unknown (image, video, silent-video, video-audio, audio)", ref.Kind)
		}
		info, err := probeFile(probe, field, ref.Path)
		if err != nil {
			return nil, err
		}
		mr.Info = info
		// A video reference uses its own sound track when it has one; a
		// track it lacks is not an error (it is then a silent video).
		if ref.Kind == RefVideo && info.HasAudio {
			mr.Soundtrack = true
		}
		sound := info
		if ref.Kind == RefVideoAudio {
			if mr.AudioInfo, err = probeFile(probe, field+" sound", ref.Audio); err != nil {
				return nil, err
			}
			sound = mr.AudioInfo
		}
		hasSound := mr.Soundtrack || mr.AudioPath != "" || ref.Kind == RefAudio
		if (mr.Soundtrack || mr.AudioPath != "") && r.Frames < minSoundtrackFrames {
			return nil, reqErr(field, "a video's sound conditions only generations of at least %d frames (2 s); this one has %d (use --ref-silent-video or a longer duration)", minSoundtrackFrames, r.Frames)
		}
		mrefs[i] = mr
		rp := ReferencePlan{Label: labels[i].Label, Kind: ref.Kind, Sound: hasSound}
		switch mr.Kind {
		case media.KindImage:
			if w, h, err := media.RefImageSize(info.Width, info.Height, r.RefImageSize, mc.Width, mc.Height); err == nil {
				rp.Width, rp.Height = w, h
			}
		case media.KindVideo:
			if w, h, err := media.RefVideoCanvas(info.Width, info.Height, r.RefVideoCanvas); err == nil {
				rp.Width, rp.Height = w, h
			}
			n := len(media.Slots(info.Frames, info.FPS))
			if n == 0 && info.Duration > 0 {
				n = int(info.Duration.Seconds()*media.FPS + 0.5)
			}
			rp.QwenFrames = min(n, r.Frames)
			rp.VAEFrames = media.VAEFrames(rp.QwenFrames)
		}
		if hasSound {
			secs := min(sound.Duration.Seconds(), float64(r.Frames)/media.FPS)
			rp.AudioLatents = int(math.Ceil(secs * media.SampleRate / 800))
		}
		plans[i] = rp
	}
	if err := media.CheckReferences(mrefs, false, media.DefaultLimits); err != nil {
		var re *media.RefError
		if errors.As(err, &re) && len(re.Problems) > 0 {
			parts := make([]string, len(re.Problems))
			for i, pr := range re.Problems {
				parts[i] = pr.String()
			}
			return nil, reqErr("references", "%s", strings.Join(parts, "; "))
		}
		return nil, reqErr("references", "%v", err)
	}
	for i, rp := range plans {
		if (rp.Kind == RefVideo || rp.Kind == RefSilentVideo || rp.Kind == RefVideoAudio) && rp.QwenFrames < media.MinRefVideoFrames {
			return nil, reqErr(fmt.Sprintf("references[%d]", i+1), "%s gives %d frames at 24 fps; a reference video needs at least %d", refs[i].Path, rp.QwenFrames, media.MinRefVideoFrames)
		}
	}
	return plans, nil
}

// minSoundtrackFrames is the shortest generation a video's sound track may
// condition (h3.c: sound tracks of at least 2 s, i.e. 56 frames).
const minSoundtrackFrames = 56
