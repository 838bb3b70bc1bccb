package videoapi

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"h3studio/engine"
	"h3studio/engine/sampler"
)

// Dialect is the kind of server a request is built for.
type Dialect string

// Dialects.
const (
	// DialectSGLang is SGLang Diffusion's MiniMax-H3 schema: task, target
	// and conditions always present, no H3 Studio fields, references as
	// file:// paths the server can see.
	DialectSGLang Dialect = "sglang"
	// DialectH3Studio adds the h3studio object and uploads references
	// that no path map covers.
	DialectH3Studio Dialect = "h3studio"
)

// PathMap maps a local folder to the same files as the server sees them
// (a shared mount: /Volumes/media → /data/minimax-h3).
type PathMap struct{ Local, Remote string }

// ParsePathMap reads "LOCAL=REMOTE".
func ParsePathMap(s string) (PathMap, error) {
	l, r, ok := strings.Cut(s, "=")
	if !ok || l == "" || r == "" {
		return PathMap{}, fmt.Errorf("path map %q: want LOCAL=REMOTE", s)
	}
	abs, err := filepath.Abs(l)
	if err != nil {
		return PathMap{}, err
	}
	return PathMap{Local: abs, Remote: r}, nil
}

// Built is a request ready to send: the body and the local files to
// upload with it (form field → path).
type Built struct {
	Request CreateRequest
	Files   map[string]string
}

// sglangAspects are the aspect ratios SGLang's H3 admission accepts for
// t2va and ref2va.
var sglangAspects = [][2]int{{16, 9}, {9, 16}, {4, 3}, {3, 4}, {1, 1}, {21, 9}}

// Build turns a planned engine request (plan.Request: every default
// resolved) into the wire request for a dialect. It is the inverse of
// Lower: Lower(Build(r)) gives r back for everything the dialect carries;
// what it cannot carry is an error naming the control, never silently
// dropped.
func Build(r engine.Request, task engine.Task, d Dialect, maps []PathMap) (Built, error) {
	b := Built{Files: map[string]string{}}
	c := &b.Request
	c.Prompt = r.Prompt
	c.Model = "MiniMaxAI/MiniMax-H3"
	c.Task = string(task)
	c.Conditions = []Condition{}
	steps := r.Steps + 1
	c.NumInferenceSteps = &steps
	seed := Number(fmt.Sprint(r.Seed))
	c.Seed = &seed
	vs, as := sampler.VideoShift, sampler.AudioShift
	c.FlowShift, c.AudioFlowShift = &vs, &as
	one := 1
	c.NumOutputsPerPrompt = &one

	short := min(r.Width, r.Height)
	aspect := ""
	for _, a := range sglangAspects {
		if w, h := canvasFor(short, a[0], a[1]); w == r.Width && h == r.Height {
			aspect = fmt.Sprintf("%d:%d", a[0], a[1])
			break
		}
	}
	dur := float64(r.Frames) / 24
	if dur > 15 && engine.SecondsToFrames(15) == r.Frames {
		dur = 15 // 362 frames are 15.08 s; 15 s aligns to the same count
	}
	switch {
	case aspect != "":
		c.Target = &Target{ShortEdge: short, AspectRatio: aspect, DurationSeconds: &dur}
	case d == DialectH3Studio:
		c.Size = fmt.Sprintf("%dx%d", r.Width, r.Height)
		c.NumFrames = &r.Frames
	default:
		return b, fmt.Errorf("the canvas %dx%d is not a short edge with an aspect ratio SGLang accepts (16:9, 9:16, 4:3, 3:4, 1:1, 21:9)", r.Width, r.Height)
	}
	if d == DialectSGLang && (dur < 4 || dur > 15) {
		return b, fmt.Errorf("%d frames are %.2f s; SGLang's MiniMax-H3 takes 4 to 15 s", r.Frames, dur)
	}
	if c.Target != nil && d == DialectH3Studio {
		c.H3 = &H3Options{Frames: r.Frames} // exact frames, not a rounded duration
	}

	var h3 H3Options
	if c.H3 != nil {
		h3 = *c.H3
	}
	extra := false
	set := func(name string, nonDefault bool, apply func()) error {
		if !nonDefault {
			return nil
		}
		if d == DialectSGLang {
			return fmt.Errorf("%s has no SGLang field (send the exact path, or use an H3 Studio server)", name)
		}
		apply()
		extra = true
		return nil
	}
	for _, s := range []struct {
		name  string
		on    bool
		apply func()
	}{
		{"--reuse", r.Reuse > 1, func() { h3.Reuse = r.Reuse }},
		{"--layers", r.Layers > 0 && r.Layers < engine.MaxLayers, func() { h3.Layers = r.Layers }},
		{"--core-reuse", r.CoreReuse > 1, func() { h3.CoreReuse = r.CoreReuse }},
		{"--token-reduction", r.TokenReduction, func() { h3.TokenReduction = true }},
		{"--render-width/--render-height", r.RenderWidth > 0 && (r.RenderWidth != r.Width || r.RenderHeight != r.Height), func() {
			h3.RenderWidth, h3.RenderHeight = r.RenderWidth, r.RenderHeight
		}},
		{"--ref-image-size", r.RefImageSize != "" && r.RefImageSize != "diffusers", func() { h3.RefImageSize = string(r.RefImageSize) }},
		{"--ref-video-canvas", r.RefVideoCanvas != "" && r.RefVideoCanvas != "reference", func() { h3.RefVideoCanvas = string(r.RefVideoCanvas) }},
	} {
		if err := set(s.name, s.on, s.apply); err != nil {
			return b, err
		}
	}
	if d == DialectH3Studio {
		h3.Memory = string(r.Memory)
		extra = extra || h3.Memory != "" || h3.Frames != 0
		if extra {
			c.H3 = &h3
		}
	}

	n := 0
	uri := func(path string) (string, error) {
		abs, err := filepath.Abs(path)
		if err != nil {
			return "", err
		}
		for _, m := range maps {
			if rel, err := filepath.Rel(m.Local, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
				remote := strings.TrimRight(m.Remote, "/") + "/" + filepath.ToSlash(rel)
				if strings.Contains(remote, "://") {
					return remote, nil
				}
				return (&url.URL{Scheme: "file", Path: remote}).String(), nil
			}
		}
		if d == DialectSGLang {
			return "", fmt.Errorf("%s is not under a folder mapped to the server (--server-map LOCAL=REMOTE): SGLang reads references from paths it can see", filepath.Base(path))
		}
		n++
		field := fmt.Sprintf("ref_%d", n)
		b.Files[field] = abs
		return UploadScheme + field, nil
	}
	key := func(path string, idx int) error {
		u, err := uri(path)
		if err != nil {
			return err
		}
		i := idx
		c.Conditions = append(c.Conditions, Condition{Type: "image", URI: u, Role: "keyframe", FrameIndex: &i})
		return nil
	}
	if r.First != "" {
		if err := key(r.First, 0); err != nil {
			return b, err
		}
	}
	if r.Last != "" {
		if err := key(r.Last, -1); err != nil {
			return b, err
		}
	}
	if r.FirstImage != nil || r.LastImage != nil {
		return b, fmt.Errorf("in-memory keyframes cannot be sent; save them as files first")
	}
	for i, ref := range r.References {
		u, err := uri(ref.Path)
		if err != nil {
			return b, err
		}
		cd := Condition{URI: u, Role: "reference"}
		switch ref.Kind {
		case engine.RefImage:
			cd.Type = "image"
		case engine.RefAudio:
			cd.Type = "audio"
		case engine.RefVideo:
			cd.Type = "video"
		case engine.RefSilentVideo, engine.RefVideoAudio:
			if d == DialectSGLang {
				return b, fmt.Errorf("reference %d (%s) has no SGLang form: SGLang's video references carry their own sound track", i+1, ref.Kind)
			}
			cd.Type = "video"
			if ref.Kind == engine.RefSilentVideo {
				cd.Type = "silent_video"
			} else if cd.AudioURI, err = uri(ref.Audio); err != nil {
				return b, err
			}
		default:
			return b, fmt.Errorf("reference %d has an unknown kind %q", i+1, ref.Kind)
		}
		c.Conditions = append(c.Conditions, cd)
	}
	return b, nil
}
