package studio

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"h3studio/engine/media"
)

// Where a problem shows in the window.
type Where uint8

// Places a problem can be attached to.
const (
	AtPrompt Where = iota + 1
	AtFirst
	AtLast
	AtReferences // the list as a whole (Index < 0) or one entry (Index ≥ 0)
	AtSettings
	AtModel
)

// Severity of a problem.
type Severity uint8

// Severities: an Error blocks Generate, a Warning does not.
const (
	Error Severity = iota + 1
	Warning
)

// Problem is one rule the draft breaks, shown inline next to what it
// concerns, with the fix in plain words.
type Problem struct {
	Where    Where
	Index    int // reference index for AtReferences; -1 for the whole list
	Severity Severity
	Message  string
	Fix      string
}

func (p Problem) String() string {
	if p.Fix == "" {
		return p.Message
	}
	return p.Message + " " + p.Fix
}

// MaxReferences is the most reference files a request may hold (the media
// layer's limits are the rule; see referenceRules).
var MaxReferences = media.DefaultLimits.MaxFiles

// EmptyPromptMessage is the problem an empty prompt reports.
const EmptyPromptMessage = "The prompt is empty."

// Canvas limits.
const (
	MaxCanvasPixels  = 768 * 1344
	canvasMultiple   = 32
	maxPromptLabelNo = 99
)

// Check applies H3 Studio's own rules to a draft: the engine's Plan rules
// that can be judged without the engine, plus the ones only the UI knows
// (unreadable or missing files, durations). It never touches the disk.
func Check(d Draft) []Problem {
	var ps []Problem
	add := func(w Where, i int, sev Severity, msg, fix string) {
		ps = append(ps, Problem{Where: w, Index: i, Severity: sev, Message: msg, Fix: fix})
	}
	if strings.TrimSpace(d.Prompt) == "" {
		add(AtPrompt, -1, Error, EmptyPromptMessage, "Describe the clip, or start from a template in the Builder menu.")
	}

	// Keyframe slots.
	for _, s := range []struct {
		m     Media
		where Where
		name  string
	}{{d.First, AtFirst, "first frame"}, {d.Last, AtLast, "last frame"}} {
		if s.m.Empty() {
			continue
		}
		switch {
		case s.m.Kind != media.KindImage:
			add(s.where, -1, Error, fmt.Sprintf("%s is not a picture; the %s must be an image.", s.m.Name(), s.name), "Drop a PNG, JPEG, HEIC, WebP or TIFF picture.")
		case s.m.State == MediaBroken:
			add(s.where, -1, Error, fmt.Sprintf("%s can't be read: %s", s.m.Name(), s.m.Note), "Replace it with a working picture.")
		case s.m.State == MediaMissing:
			add(s.where, -1, Error, fmt.Sprintf("%s was moved or deleted.", s.m.Name()), "Drop it again, or remove it.")
		}
	}

	// References.
	hasFrames := !d.First.Empty() || !d.Last.Empty()
	if hasFrames && len(d.References) > 0 {
		// The list gets the media layer's wording of this rule below.
		msg := "References can't be combined with a first or last frame."
		fix := "Remove the references or the frames."
		if !d.First.Empty() {
			add(AtFirst, -1, Error, msg, fix)
		}
		if !d.Last.Empty() {
			add(AtLast, -1, Error, msg, fix)
		}
	}
	// The file states only the UI knows (being read, broken, missing) …
	for i, r := range d.References {
		m := r.Media
		switch m.State {
		case MediaBroken:
			add(AtReferences, i, Error, fmt.Sprintf("%s can't be read: %s", m.Name(), m.Note), "Replace or remove it.")
		case MediaMissing:
			add(AtReferences, i, Error, fmt.Sprintf("%s was moved or deleted.", m.Name()), "Drop it again, or remove it.")
		case MediaLimited:
			if m.Note != "" {
				add(AtReferences, i, Warning, fmt.Sprintf("%s: %s", m.Name(), m.Note), "")
			}
		}
		if r.Sound.State == MediaBroken || r.Sound.State == MediaMissing {
			add(AtReferences, i, Error, fmt.Sprintf("The sound paired with %s (%s) can't be used: %s", m.Name(), r.Sound.Name(), r.Sound.Note), "Pair another sound file, or remove the pairing.")
		}
	}
	// … and the release's reference rules, from the media layer (the same
	// function the engine applies), on everything known so far.
	ps = append(ps, referenceRules(d)...)

	ps = append(ps, checkSettings(d.Settings)...)
	ps = append(ps, checkPromptLabels(d)...)
	return ps
}

// referenceRules runs media.CheckReferences on the list. A file not read
// yet (or that this build can't read) counts with the shortest legal
// length, a lower bound, so totals are never flagged wrongly.
func referenceRules(d Draft) []Problem {
	if len(d.References) == 0 {
		return nil
	}
	refs := make([]media.Ref, len(d.References))
	for i, r := range d.References {
		m := r.Media
		ref := media.Ref{Kind: m.Kind, Path: m.Path, Info: m.Info}
		if m.State != MediaReady {
			ref.Info = media.Info{}
		}
		if m.Kind != media.KindImage && ref.Info.Duration == 0 {
			ref.Info.Kind, ref.Info.Duration = m.Kind, media.DefaultLimits.MinClip
			ref.Info.HasAudio = m.Kind == media.KindAudio || !r.Silent
		}
		if m.Kind == media.KindVideo {
			ref.Soundtrack = !r.Silent && r.Sound.Empty()
			if !r.Sound.Empty() {
				ref.AudioPath, ref.AudioInfo = r.Sound.Path, r.Sound.Info
				if r.Sound.State != MediaReady || r.Sound.Info.Duration == 0 {
					ref.AudioInfo = media.Info{Kind: media.KindAudio, HasAudio: true, Duration: media.DefaultLimits.MinClip}
				}
			}
		}
		refs[i] = ref
	}
	err := media.CheckReferences(refs, !d.First.Empty() || !d.Last.Empty(), media.DefaultLimits)
	var re *media.RefError
	if !errors.As(err, &re) {
		return nil
	}
	var ps []Problem
	for _, p := range re.Problems {
		msg := sentence(p.Rule)
		if p.Index >= 0 && p.Index < len(d.References) {
			name := d.References[p.Index].Media.Name()
			if p.Path != "" && p.Path != d.References[p.Index].Media.Path {
				name = filepath.Base(p.Path)
			}
			msg = name + " " + strings.TrimSuffix(p.Rule, ".") + "."
			if !startsWithVerb(p.Rule) {
				msg = name + ": " + strings.TrimSuffix(p.Rule, ".") + "."
			}
		}
		ps = append(ps, Problem{Where: AtReferences, Index: p.Index, Severity: Error, Message: msg, Fix: p.Fix})
	}
	return ps
}

func sentence(s string) string {
	s = strings.TrimSuffix(s, ".")
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:] + "."
}

func startsWithVerb(rule string) bool {
	for _, v := range []string{"is ", "has ", "must "} {
		if strings.HasPrefix(rule, v) {
			return true
		}
	}
	return false
}

func checkSettings(s Settings) []Problem {
	var ps []Problem
	bad := func(msg, fix string) {
		ps = append(ps, Problem{Where: AtSettings, Index: -1, Severity: Error, Message: msg, Fix: fix})
	}
	w, h := s.Width, s.Height
	switch {
	case w < canvasMultiple || h < canvasMultiple || w%canvasMultiple != 0 || h%canvasMultiple != 0:
		bad(fmt.Sprintf("Canvas %d×%d: both sides must be multiples of 32, at least 32.", w, h), "Pick a canvas from the list.")
	case w*h > MaxCanvasPixels:
		bad(fmt.Sprintf("Canvas %d×%d is larger than the model allows (768·1344 pixels).", w, h), "Pick a canvas from the list.")
	}
	if s.Frames < MinFrames || s.Frames > MaxFrames || (s.Frames-5)%17 != 0 {
		bad(fmt.Sprintf("Length %d frames is not a legal length (17n+5 frames, 22 to 362).", s.Frames), "Pick a length from the list.")
	}
	sp := s.Speed
	inRange := func(name string, v int, r Range) {
		if v < r.Min || v > r.Max {
			bad(fmt.Sprintf("%s %d is out of range (%d to %d).", name, v, r.Min, r.Max), "Change it under Advanced, or pick a quality preset.")
		}
	}
	inRange("Steps", sp.Steps, StepsRange)
	inRange("Reuse", sp.Reuse, ReuseRange)
	inRange("Layers", sp.Layers, LayersRange)
	inRange("Core reuse", sp.CoreReuse, CoreReuseRange)
	if sp.Reuse > 1 && sp.CoreReuse > 1 {
		bad("Reuse and core reuse can't both be above 1.", "Set one of them to 1 under Advanced.")
	}
	if s.RenderWidth != 0 || s.RenderHeight != 0 {
		rw, rh := s.RenderWidth, s.RenderHeight
		switch {
		case rw%canvasMultiple != 0 || rh%canvasMultiple != 0 || rw < canvasMultiple || rh < canvasMultiple:
			bad(fmt.Sprintf("Render size %d×%d: both sides must be multiples of 32.", rw, rh), "Clear it under Advanced.")
		case rw > w || rh > h:
			bad(fmt.Sprintf("Render size %d×%d is larger than the canvas %d×%d.", rw, rh, w, h), "Use a smaller render size.")
		case rw*h != rh*w:
			bad(fmt.Sprintf("Render size %d×%d has another aspect than the canvas %d×%d.", rw, rh, w, h), "Use the canvas's aspect.")
		}
	}
	return ps
}

var labelRE = regexp.MustCompile(`<(Picture|Video|Audio) (\d+)>`)

// checkPromptLabels warns when the prompt names a reference the list does
// not have ("<Picture 3>" with two pictures).
func checkPromptLabels(d Draft) []Problem {
	have := map[string]int{}
	for _, r := range d.References {
		have[LabelKind(r.Media.Kind)]++
	}
	if len(d.References) == 0 {
		// Base modes: <Picture 1> is the first (or last) frame, and with
		// both, Picture 2 the last.
		n := 0
		if !d.First.Empty() {
			n++
		}
		if !d.Last.Empty() {
			n++
		}
		have[LabelPicture] = n
	}
	var ps []Problem
	seen := map[string]bool{}
	for _, m := range labelRE.FindAllStringSubmatch(d.Prompt, -1) {
		n, _ := strconv.Atoi(m[2])
		if n <= have[m[1]] || seen[m[0]] || n > maxPromptLabelNo {
			continue
		}
		seen[m[0]] = true
		ps = append(ps, Problem{Where: AtPrompt, Index: -1, Severity: Warning,
			Message: fmt.Sprintf("The prompt mentions %s, but there %s.", m[0], countNoun(have[m[1]], m[1])),
			Fix:     "Add the reference, or change the prompt."})
	}
	return ps
}

// countNoun says "is no picture", "is only 1 video", "are only 2 sound clips".
func countNoun(n int, kind string) string {
	noun := map[string]string{LabelPicture: "picture", LabelVideo: "video", LabelAudio: "sound clip"}[kind]
	switch n {
	case 0:
		return "is no " + noun
	case 1:
		return "is only 1 " + noun
	}
	return fmt.Sprintf("are only %d %ss", n, noun)
}

// Blocking reports whether any problem is an error.
func Blocking(ps []Problem) bool {
	for _, p := range ps {
		if p.Severity == Error {
			return true
		}
	}
	return false
}
