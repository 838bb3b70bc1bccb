package videoapi

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"h3studio/engine"
	"h3studio/engine/media"
	"h3studio/engine/sampler"
)

// ModelNames are the model names every H3 server answers to (besides the
// loaded snapshot's own name).
var ModelNames = []string{"h3", "minimax-h3", "MiniMaxAI/MiniMax-H3", "MiniMax/MiniMax-H3"}

// Folders resolves condition URIs to files the engine may read: file://
// URIs and relative paths only under the allowed folders (after following
// symbolic links, and never through ".."), and "upload://FIELD" for the
// request's own uploads. Its errors never repeat the path.
type Folders struct {
	Allowed []string // absolute folders; empty: no file references at all
}

// errNotAllowed is the one refusal of a path outside the allowed folders.
var errNotAllowed = errors.New("refers to a file outside the folders this server may read (allow its folder with --allow-dir or in Settings)")

// Resolve maps a URI to a local path.
func (f Folders) Resolve(uri string) (string, error) {
	p := uri
	switch {
	case strings.HasPrefix(uri, "file://"):
		u, err := url.Parse(uri)
		if err != nil || (u.Host != "" && u.Host != "localhost") || u.RawQuery != "" || u.Fragment != "" {
			return "", errors.New("is not a valid file:// URI (file:///absolute/path)")
		}
		p = u.Path
	case strings.Contains(uri, "://") || strings.HasPrefix(uri, "data:"):
		return "", errors.New("uses a scheme this server does not fetch (use file:// under an allowed folder, or upload the file)")
	}
	if p == "" || strings.ContainsRune(p, 0) {
		return "", errors.New("is empty")
	}
	for _, part := range strings.FieldsFunc(filepath.ToSlash(p), func(r rune) bool { return r == '/' }) {
		if part == ".." {
			return "", errors.New("must not contain \"..\"")
		}
	}
	if len(f.Allowed) == 0 {
		return "", errNotAllowed
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(f.Allowed[0], p)
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		if !f.under(filepath.Clean(p)) {
			return "", errNotAllowed
		}
		return "", errors.New("names a file that does not exist or cannot be read")
	}
	if !f.under(real) {
		return "", errNotAllowed
	}
	st, err := os.Stat(real)
	if err != nil || !st.Mode().IsRegular() {
		return "", errors.New("does not name a regular file")
	}
	return real, nil
}

// under reports whether p lies inside an allowed folder (each resolved
// through its own symbolic links).
func (f Folders) under(p string) bool {
	for _, root := range f.Allowed {
		r, err := filepath.EvalSymlinks(root)
		if err != nil {
			r = filepath.Clean(root)
		}
		if rel, err := filepath.Rel(r, p); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel) {
			return true
		}
	}
	return false
}

// Resolver maps a condition URI to a local file.
type Resolver interface {
	Resolve(uri string) (string, error)
}

// Lowered is a request as the engine takes it.
type Lowered struct {
	Request engine.Request
	Task    engine.Task
	Model   string // the name the client used ("" when it gave none)
	// Outputs is the number of takes (SGLang's num_outputs_per_prompt):
	// output i uses seed+i, and is the content's variant i.
	Outputs int
}

// MaxOutputs bounds num_outputs_per_prompt (SGLang's limit).
const MaxOutputs = 10

// Lower maps a decoded request onto an engine request. modelName is the
// loaded snapshot's name (accepted besides ModelNames); ups are the
// request's uploads. The engine's Plan validates the result further (the
// canvas, frames, steps, references); Lower checks what only the wire
// knows, naming the wire field.
func Lower(c CreateRequest, res Resolver, ups []Upload, modelName string) (Lowered, error) {
	var out Lowered
	r := &out.Request
	r.Prompt = c.Prompt
	if c.Model != "" {
		ok := strings.EqualFold(c.Model, modelName)
		for _, n := range ModelNames {
			ok = ok || strings.EqualFold(c.Model, n)
		}
		if !ok {
			return out, fieldErr("model", "must be omitted or one of %s", strings.Join(ModelNames, ", "))
		}
		out.Model = c.Model
	}
	out.Outputs = 1
	for _, n := range []struct {
		name string
		v    *int
	}{{"n", c.N}, {"num_outputs_per_prompt", c.NumOutputsPerPrompt}} {
		if n.v == nil {
			continue
		}
		if *n.v < 1 || *n.v > MaxOutputs {
			return out, fieldErr(n.name, "must be 1..%d", MaxOutputs)
		}
		if *n.v != 1 && out.Outputs != 1 && *n.v != out.Outputs {
			return out, fieldErr(n.name, "and n disagree")
		}
		if *n.v != 1 {
			out.Outputs = *n.v
		}
	}
	if c.FPS != nil && *c.FPS != media.FPS {
		return out, fieldErr("fps", "must be %d (MiniMax-H3 makes %d fps video)", media.FPS, media.FPS)
	}
	if err := checkShift("flow_shift", c.FlowShift, sampler.VideoShift); err != nil {
		return out, err
	}
	if err := checkShift("audio_flow_shift", c.AudioFlowShift, sampler.AudioShift); err != nil {
		return out, err
	}
	if c.GuidanceScale != nil && *c.GuidanceScale != 1 {
		return out, fieldErr("guidance_scale", "must be 1 (MiniMax-H3 is guidance-distilled: no classifier-free guidance)")
	}
	if c.NegativePrompt != nil && strings.TrimSpace(*c.NegativePrompt) != "" {
		return out, fieldErr("negative_prompt", "is not used by MiniMax-H3 (no classifier-free guidance); leave it empty")
	}

	// The canvas: size, width/height, or SGLang's target.
	w, h := 0, 0
	if c.Size != "" {
		var err error
		if w, h, err = parseSize(c.Size); err != nil {
			return out, fieldErr("size", "%v", err)
		}
	}
	if c.Width != nil || c.Height != nil {
		if c.Size != "" {
			return out, fieldErr("width", "and size are exclusive")
		}
		if c.Width == nil || c.Height == nil {
			return out, fieldErr("width", "and height go together")
		}
		w, h = *c.Width, *c.Height
		if w <= 0 || h <= 0 {
			return out, fieldErr("width", "and height must be positive")
		}
	}

	// The duration.
	if c.Seconds != nil {
		s, err := c.Seconds.Float()
		if err != nil || !(s > 0) || s > 3600 {
			return out, fieldErr("seconds", "must be a positive number of seconds")
		}
		r.Seconds = s
	}
	if c.NumFrames != nil {
		if *c.NumFrames <= 0 {
			return out, fieldErr("num_frames", "must be positive")
		}
		r.Frames, r.Seconds = *c.NumFrames, 0
	}

	// Steps: SGLang's sigma points count the terminal zero.
	if c.NumInferenceSteps != nil {
		n := *c.NumInferenceSteps
		if n-1 < engine.MinSteps || n-1 > engine.MaxSteps {
			return out, fieldErr("num_inference_steps", "must be %d..%d (sigma grid points including the terminal zero: %d..%d model evaluations)",
				engine.MinSteps+1, engine.MaxSteps+1, engine.MinSteps, engine.MaxSteps)
		}
		r.Steps = n - 1
	}
	if c.Seed != nil {
		s, err := c.Seed.Uint()
		if err != nil {
			return out, fieldErr("seed", "must be a non-negative integer")
		}
		r.Seed, r.SeedSet = s, true
	}
	switch c.Quality {
	case "", "lossless":
	case "high":
		r.Preset = engine.PresetFast
	default:
		return out, fieldErr("quality", "must be lossless or high")
	}

	// Conditions, task.
	task := engine.Task(c.Task)
	switch task {
	case "", engine.TaskT2VA, engine.TaskFL2VA, engine.TaskRef2VA:
	default:
		return out, fieldErr("task", "must be t2va, fl2va or ref2va")
	}
	resolve := func(field, uri string) (string, error) {
		if p, ok := uploadPath(ups, uri); ok {
			return p, nil
		}
		if strings.HasPrefix(uri, UploadScheme) {
			return "", fieldErr(field, "names an upload that is not in this request")
		}
		if res == nil {
			return "", fieldErr(field, "%v", errNotAllowed)
		}
		p, err := res.Resolve(uri)
		if err != nil {
			return "", fieldErr(field, "%v", err)
		}
		return p, nil
	}
	conds := c.Conditions
	if c.InputReference != "" {
		// OpenAI's input_reference is the first frame of the video.
		if len(conds) > 0 {
			return out, fieldErr("input_reference", "and conditions are exclusive")
		}
		zero := 0
		conds = []Condition{{Type: "image", URI: c.InputReference, Role: "keyframe", FrameIndex: &zero}}
		if task == "" {
			task = engine.TaskFL2VA
		}
	}
	var visual string // first keyframe or visual reference, for aspect_ratio "auto"
	for i, cd := range conds {
		field := fmt.Sprintf("conditions[%d]", i)
		if cd.URI == "" {
			return out, fieldErr(field+".uri", "is required")
		}
		if cd.StartTimeSeconds != nil && *cd.StartTimeSeconds != 0 {
			if *cd.StartTimeSeconds < 0 {
				return out, fieldErr(field+".start_time_seconds", "must be ≥ 0")
			}
			return out, fieldErr(field+".start_time_seconds", "must be 0: H3 Studio reads references from their start (trim the file first)")
		}
		p, err := resolve(field+".uri", cd.URI)
		if err != nil {
			return out, err
		}
		switch cd.Role {
		case "keyframe":
			if cd.Type != "image" {
				return out, fieldErr(field+".type", "must be image for a keyframe")
			}
			if cd.AudioURI != "" {
				return out, fieldErr(field+".audio_uri", "is only for video references")
			}
			idx := 0
			if cd.FrameIndex != nil {
				idx = *cd.FrameIndex
			}
			switch {
			case idx == 0 && r.First == "":
				r.First = p
			case idx == -1 && r.Last == "":
				r.Last = p
			case idx != 0 && idx != -1:
				return out, fieldErr(field+".frame_index", "must be 0 (first frame) or -1 (last frame)")
			default:
				return out, fieldErr(field+".frame_index", "repeats an earlier keyframe's frame")
			}
		case "reference":
			if cd.FrameIndex != nil {
				return out, fieldErr(field+".frame_index", "is only for keyframes")
			}
			ref := engine.Reference{Path: p}
			switch cd.Type {
			case "image":
				ref.Kind = engine.RefImage
			case "audio":
				ref.Kind = engine.RefAudio
			case "video", "video_audio":
				// SGLang: "video" uses its sound track when it has one;
				// "video_audio" requires one (the plan checks it).
				ref.Kind = engine.RefVideo
			case "silent_video":
				ref.Kind = engine.RefSilentVideo
			default:
				return out, fieldErr(field+".type", "must be image, video, video_audio, audio or silent_video")
			}
			if cd.AudioURI != "" {
				if ref.Kind != engine.RefVideo {
					return out, fieldErr(field+".audio_uri", "is only for video references")
				}
				a, err := resolve(field+".audio_uri", cd.AudioURI)
				if err != nil {
					return out, err
				}
				ref.Kind, ref.Audio = engine.RefVideoAudio, a
			}
			r.References = append(r.References, ref)
		default:
			return out, fieldErr(field+".role", "must be keyframe or reference")
		}
		if visual == "" && cd.Type != "audio" {
			visual = p
		}
	}
	hasKey, hasRef := r.First != "" || r.Last != "", len(r.References) > 0
	switch {
	case hasKey && hasRef:
		return out, fieldErr("conditions", "mix keyframes and references; a take has one or the other")
	case task == "" && hasKey:
		task = engine.TaskFL2VA
	case task == "" && hasRef:
		task = engine.TaskRef2VA
	case task == "":
		task = engine.TaskT2VA
	case task == engine.TaskT2VA && (hasKey || hasRef):
		return out, fieldErr("task", "t2va takes no conditions")
	case task == engine.TaskFL2VA && !hasKey:
		return out, fieldErr("task", "fl2va needs one or two image conditions with role keyframe")
	case task == engine.TaskRef2VA && !hasRef:
		return out, fieldErr("task", "ref2va needs conditions with role reference")
	}
	out.Task = task

	if t := c.Target; t != nil {
		if w != 0 {
			return out, fieldErr("target", "and size (or width/height) are exclusive")
		}
		if t.ShortEdge <= 0 {
			return out, fieldErr("target.short_edge", "must be positive")
		}
		aw, ah, err := aspect(t.AspectRatio, visual)
		if err != nil {
			return out, fieldErr("target.aspect_ratio", "%v", err)
		}
		w, h = canvasFor(t.ShortEdge, aw, ah)
		if t.DurationSeconds != nil {
			if !(*t.DurationSeconds > 0) {
				return out, fieldErr("target.duration_seconds", "must be positive")
			}
			r.Seconds, r.Frames = *t.DurationSeconds, 0
		}
	}
	r.Width, r.Height = w, h

	if o := c.H3; o != nil {
		if err := lowerH3(o, r); err != nil {
			return out, err
		}
	}
	return out, nil
}

func checkShift(field string, v *float64, want float64) error {
	if v != nil && math.Abs(*v-want) > 1e-9 {
		return fieldErr(field, "must be %g, the released model's schedule (H3 Studio does not change it)", want)
	}
	return nil
}

func lowerH3(o *H3Options, r *engine.Request) error {
	switch engine.Preset(o.Preset) {
	case "", engine.PresetReference, engine.PresetDefault, engine.PresetFast, engine.PresetPreview:
		if o.Preset != "" {
			r.Preset = engine.Preset(o.Preset)
		}
	default:
		return fieldErr("h3studio.preset", "must be reference, default, fast or preview")
	}
	if o.Steps != 0 {
		if r.Steps != 0 {
			return fieldErr("h3studio.steps", "and num_inference_steps are exclusive")
		}
		r.Steps = o.Steps
	}
	if o.Frames != 0 {
		r.Frames, r.Seconds = o.Frames, 0
	}
	for _, v := range []struct {
		name string
		n    int
		dst  *int
	}{{"reuse", o.Reuse, &r.Reuse}, {"layers", o.Layers, &r.Layers}, {"core_reuse", o.CoreReuse, &r.CoreReuse},
		{"render_width", o.RenderWidth, &r.RenderWidth}, {"render_height", o.RenderHeight, &r.RenderHeight}} {
		if v.n < 0 {
			return fieldErr("h3studio."+v.name, "must not be negative")
		}
		*v.dst = v.n
	}
	r.TokenReduction = o.TokenReduction
	switch engine.MemoryMode(o.Memory) {
	case engine.MemoryAuto, engine.MemoryResident, engine.MemoryStreaming:
		r.Memory = engine.MemoryMode(o.Memory)
	default:
		return fieldErr("h3studio.memory", "must be resident or streaming (empty: auto)")
	}
	if o.RefImageSize != "" {
		p, err := media.ParseRefImagePolicy(o.RefImageSize)
		if err != nil {
			return fieldErr("h3studio.ref_image_size", "must be diffusers, match or max")
		}
		r.RefImageSize = p
	}
	switch o.RefVideoCanvas {
	case "", "reference", "diffusers":
	case "h3c":
		r.RefVideoCanvas = media.RefVideoH3C
	default:
		return fieldErr("h3studio.ref_video_canvas", "must be reference or h3c")
	}
	return nil
}

// parseSize reads "WxH".
func parseSize(s string) (int, int, error) {
	a, b, ok := strings.Cut(strings.ToLower(s), "x")
	w, err1 := strconv.Atoi(a)
	h, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || w <= 0 || h <= 0 {
		return 0, 0, errors.New("must be WIDTHxHEIGHT in pixels, e.g. 864x480")
	}
	return w, h, nil
}

// aspect reads "W:H"; "auto" takes the first visual condition's shape
// (16:9 without one).
func aspect(s, visual string) (int, int, error) {
	if s == "auto" || s == "" {
		if visual != "" {
			if src, err := media.Open(visual); err == nil {
				info := src.Info()
				src.Close()
				if info.Width > 0 && info.Height > 0 {
					return info.Width, info.Height, nil
				}
			}
		}
		return 16, 9, nil
	}
	a, b, ok := strings.Cut(s, ":")
	w, err1 := strconv.Atoi(a)
	h, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || w <= 0 || h <= 0 || w > 100 || h > 100 {
		return 0, 0, errors.New("must be W:H (16:9, 1:1, 9:16 …) or auto")
	}
	return w, h, nil
}

// canvasFor is the canvas of a short edge and aspect: the long edge
// rounded down to a multiple of 32, so the canvas never exceeds the
// ratio's area (768 at 16:9 gives the released 1344×768).
func canvasFor(short, aw, ah int) (int, int) {
	if aw == ah {
		return short, short
	}
	long := func(a, b int) int { return max(32, int(math.Floor(float64(short)*float64(a)/float64(b)/32+1e-9))*32) }
	if aw > ah {
		return long(aw, ah), short
	}
	return short, long(ah, aw)
}
