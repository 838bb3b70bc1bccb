package studio

import (
	"fmt"
	"image"
	"path/filepath"

	"h3studio/engine"
	"h3studio/engine/media"
	"h3studio/engine/take"
)

// MediaState says how far a dropped file has been read.
type MediaState uint8

// Media states.
const (
	MediaProbing MediaState = iota // being read (thumbnail, duration, hash)
	MediaReady                     // read; Info, Thumb and Hash are set
	MediaLimited                   // accepted, but this build cannot preview it (no decoder)
	MediaBroken                    // unreadable or not what its name says
	MediaMissing                   // deleted or moved since it was added
)

// Media is one input file in a slot or the reference list. Values are
// immutable once published in a Snapshot: updates replace the whole value.
type Media struct {
	Path  string
	Kind  media.Kind
	State MediaState
	Info  media.Info  // valid when State is MediaReady
	Thumb image.Image // picture or first video frame, ≤ 320 px; nil for audio
	Peaks []float32   // sound envelope (0..1) for a waveform; nil when silent/unknown
	Hash  string      // take.HashFile of the file's bytes (hex SHA-256)
	Note  string      // why it is Broken/Missing/Limited, in the user's words
	Gen   int         // increments on every reload (file edited on disk)
}

// Name is the file's base name.
func (m Media) Name() string { return filepath.Base(m.Path) }

// Empty reports whether the slot holds nothing.
func (m Media) Empty() bool { return m.Path == "" }

// Usable reports whether the file can be handed to the engine.
func (m Media) Usable() bool {
	return m.Path != "" && (m.State == MediaReady || m.State == MediaLimited || m.State == MediaProbing)
}

// Reference is one entry of the ordered reference list.
type Reference struct {
	ID    int // stable across reorders (label lines follow it)
	Media Media
	// Silent: a video reference without its own sound track.
	Silent bool
	// Sound: a separate sound file paired with a video reference (h3.c
	// --ref-video-audio); empty for none.
	Sound Media
}

// EngineKind is the reference's kind for the engine.
func (r Reference) EngineKind() engine.ReferenceKind {
	switch r.Media.Kind {
	case media.KindImage:
		return engine.RefImage
	case media.KindAudio:
		return engine.RefAudio
	}
	switch {
	case !r.Sound.Empty():
		return engine.RefVideoAudio
	case r.Silent:
		return engine.RefSilentVideo
	}
	return engine.RefVideo
}

// Label kinds, as the model names them in prompts.
const (
	LabelPicture = "Picture"
	LabelVideo   = "Video"
	LabelAudio   = "Audio"
)

// LabelKind is the prompt label word of a media kind.
func LabelKind(k media.Kind) string {
	switch k {
	case media.KindVideo:
		return LabelVideo
	case media.KindAudio:
		return LabelAudio
	}
	return LabelPicture
}

// Labels numbers references per kind in list order: Picture 1, Video 1,
// Picture 2, Audio 1 … (the model's <Picture i>/<Video k>/<Audio j>).
func Labels(refs []Reference) []string {
	n := map[string]int{}
	out := make([]string, len(refs))
	for i, r := range refs {
		k := LabelKind(r.Media.Kind)
		n[k]++
		out[i] = fmt.Sprintf("%s %d", k, n[k])
	}
	return out
}

// Draft is what the Compose panel edits.
type Draft struct {
	Prompt     string
	First      Media // keyframe at 0 s (FL2VA)
	Last       Media // keyframe at the end (FL2VA)
	References []Reference
	Settings   Settings
	// KeepLabels keeps the prompt's label lines (and, in base mode, the
	// keyframe alignment line) in step with the slots; on by default.
	KeepLabels bool
}

// NewDraft returns an empty draft with default settings.
func NewDraft() Draft { return Draft{Settings: DefaultSettings(), KeepLabels: true} }

// Clone copies the draft's slices so the copy can be changed freely.
func (d Draft) Clone() Draft {
	d.References = append([]Reference(nil), d.References...)
	return d
}

// Task follows the slots: any reference makes it ref2va, a first or last
// frame fl2va, nothing t2va. (References together with frames are a rule
// violation that Problems reports; the task is then ref2va.)
func (d Draft) Task() engine.Task {
	switch {
	case len(d.References) > 0:
		return engine.TaskRef2VA
	case !d.First.Empty() || !d.Last.Empty():
		return engine.TaskFL2VA
	}
	return engine.TaskT2VA
}

// Request turns the draft into an engine request: every setting explicit,
// references in list order.
func (d Draft) Request() engine.Request {
	s := d.Settings
	rw, rh := s.Render()
	if rw == s.Width && rh == s.Height {
		rw, rh = 0, 0
	}
	r := engine.Request{
		Prompt: d.Prompt,
		Width:  s.Width, Height: s.Height,
		Frames: s.Frames,
		Steps:  s.Speed.Steps, Seed: s.Seed, SeedSet: true,
		Preset: s.Quality,
		Reuse:  s.Speed.Reuse, Layers: s.Speed.Layers, CoreReuse: s.Speed.CoreReuse,
		TokenReduction: s.Speed.TokenReduction,
		RenderWidth:    rw, RenderHeight: rh,
		First: d.First.Path, Last: d.Last.Path,
		Memory:       s.Memory,
		Quality:      s.MemoryQuality,
		Preview:      s.Preview,
		RefImageSize: s.RefImageSize, RefVideoCanvas: s.RefVideoCanvas,
	}
	for _, ref := range d.References {
		r.References = append(r.References, engine.Reference{Kind: ref.EngineKind(), Path: ref.Media.Path, Audio: ref.Sound.Path})
	}
	r.LoRAs, r.Turbo = s.loraRequest(), s.Turbo
	if s.Turbo != 0 && !s.Custom() {
		// The Turbo preset fills the speed controls (the engine's rule:
		// explicit controls win, so only hand-set ones are passed).
		r.Steps, r.Reuse, r.Layers, r.CoreReuse = 0, 0, 0, 0
	}
	return r
}

// Title is a short description of the draft for lists ("A red fox walks…").
func Title(prompt string) string { return take.Title(prompt) }
