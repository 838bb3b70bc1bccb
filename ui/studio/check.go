package studio

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

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

// Reference limits of the released Ref2VA checkpoint.
const (
	MaxPictures      = 9
	MaxVideos        = 3
	MaxAudio         = 3
	MaxReferences    = 12
	MinClip          = 2 * time.Second  // shortest reference video or audio clip
	MaxClip          = 15 * time.Second // longest one
	MaxClipsTotal    = 15 * time.Second // videos together, and audio clips together
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
		add(AtPrompt, -1, Error, "The prompt is empty.", "Describe the clip, or start from a template in the Builder menu.")
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
		msg := "References can't be combined with a first or last frame."
		fix := "Remove the references or the frames."
		add(AtReferences, -1, Error, msg, fix)
		if !d.First.Empty() {
			add(AtFirst, -1, Error, msg, fix)
		}
		if !d.Last.Empty() {
			add(AtLast, -1, Error, msg, fix)
		}
	}
	var pics, vids, auds int
	var vidTotal, audTotal time.Duration
	visual := false
	for i, r := range d.References {
		m := r.Media
		switch m.Kind {
		case media.KindImage:
			pics++
			visual = true
		case media.KindVideo:
			vids++
			visual = true
		case media.KindAudio:
			auds++
		}
		switch m.State {
		case MediaBroken:
			add(AtReferences, i, Error, fmt.Sprintf("%s can't be read: %s", m.Name(), m.Note), "Replace or remove it.")
			continue
		case MediaMissing:
			add(AtReferences, i, Error, fmt.Sprintf("%s was moved or deleted.", m.Name()), "Drop it again, or remove it.")
			continue
		case MediaLimited:
			if m.Note != "" {
				add(AtReferences, i, Warning, fmt.Sprintf("%s: %s", m.Name(), m.Note), "")
			}
		}
		if r.Sound.State == MediaBroken || r.Sound.State == MediaMissing {
			add(AtReferences, i, Error, fmt.Sprintf("The sound paired with %s (%s) can't be used: %s", m.Name(), r.Sound.Name(), r.Sound.Note), "Pair another sound file, or remove the pairing.")
		}
		if m.Kind == media.KindVideo || m.Kind == media.KindAudio {
			dur := m.Info.Duration
			if m.State != MediaReady || dur == 0 {
				continue // unknown until read
			}
			what := "video"
			if m.Kind == media.KindAudio {
				what = "sound clip"
				audTotal += dur
			} else {
				vidTotal += dur
			}
			if dur < MinClip || dur > MaxClip {
				add(AtReferences, i, Error, fmt.Sprintf("%s is %s long; a reference %s must last 2 to 15 seconds.", m.Name(), fmtDur(dur), what), "Trim it, or use another clip.")
			}
		}
	}
	if pics > MaxPictures {
		add(AtReferences, -1, Error, fmt.Sprintf("Too many pictures: %d (at most %d).", pics, MaxPictures), "Remove some pictures.")
	}
	if vids > MaxVideos {
		add(AtReferences, -1, Error, fmt.Sprintf("Too many videos: %d (at most %d).", vids, MaxVideos), "Remove some videos.")
	}
	if auds > MaxAudio {
		add(AtReferences, -1, Error, fmt.Sprintf("Too many sound clips: %d (at most %d).", auds, MaxAudio), "Remove some sound clips.")
	}
	if n := len(d.References); n > MaxReferences {
		add(AtReferences, -1, Error, fmt.Sprintf("Too many references: %d (at most %d files).", n, MaxReferences), "Remove some references.")
	}
	if auds > 0 && !visual {
		add(AtReferences, -1, Error, "A sound reference needs a picture or video reference too.", "Add a picture or a video, or remove the sound.")
	}
	if vidTotal > MaxClipsTotal {
		add(AtReferences, -1, Error, fmt.Sprintf("The reference videos last %s together (at most 15 s).", fmtDur(vidTotal)), "Use shorter or fewer videos.")
	}
	if audTotal > MaxClipsTotal {
		add(AtReferences, -1, Error, fmt.Sprintf("The sound clips last %s together (at most 15 s).", fmtDur(audTotal)), "Use shorter or fewer clips.")
	}

	ps = append(ps, checkSettings(d.Settings)...)
	ps = append(ps, checkPromptLabels(d)...)
	return ps
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

func fmtDur(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + " s"
}
