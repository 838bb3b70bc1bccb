// Package request is a generation request and the rules that resolve it into
// a Plan before anything is loaded: the request, plan, event and result
// types, the limits and presets, and one named check per rule (task,
// canvas, duration, speed, conditions, prompt, references). The engine
// façade re-exports its types; Session.Plan adds the prediction.
package request

import (
	"fmt"
	"image"
	"time"

	"h3studio/engine/denoise"
	"h3studio/engine/dit"
	"h3studio/engine/layout"
	"h3studio/engine/media"
	"h3studio/engine/plan"
)

// Task is a generation task.
type Task string

// Tasks.
const (
	TaskT2VA   Task = "t2va"   // text to video+audio
	TaskFL2VA  Task = "fl2va"  // first and/or last frame
	TaskRef2VA Task = "ref2va" // ordered image/video/audio references
)

// Preset names a quality preset; it fills the speed controls a request
// leaves at zero.
type Preset string

// Quality presets.
const (
	PresetReference Preset = "reference" // 50 steps, exact path
	PresetDefault   Preset = "default"   // 20 steps, exact path
	PresetFast      Preset = "fast"
	PresetPreview   Preset = "preview"
)

// ReferenceKind is the kind of a Ref2VA reference.
type ReferenceKind string

// Reference kinds (h3.c's --ref-* flags).
const (
	RefImage       ReferenceKind = "image"
	RefVideo       ReferenceKind = "video"        // video with its sound track (if any)
	RefSilentVideo ReferenceKind = "silent-video" // video, sound track ignored
	RefVideoAudio  ReferenceKind = "video-audio"  // video paired with a separate audio file
	RefAudio       ReferenceKind = "audio"
)

// Reference is one ordered Ref2VA input. Its position in Request.References
// is the model's <Picture i>/<Video k>/<Audio j> numbering.
type Reference struct {
	Kind  ReferenceKind `json:"kind"`
	Path  string        `json:"path"`            // image, video or audio file
	Audio string        `json:"audio,omitempty"` // RefVideoAudio: the separate sound file
}

// MemoryMode chooses what stays resident and the precision of the DiT's
// weights (the names of engine/plan's modes; the engine's memorymode.go
// resolves the automatic one).
type MemoryMode string

// Memory modes.
const (
	MemoryAuto          MemoryMode = ""               // pick the fastest mode that fits (plan.Pick)
	MemoryResident      MemoryMode = "resident"       // every component stays loaded
	MemoryResidentInt8  MemoryMode = "resident-int8"  // resident, the DiT's block weights int8
	MemoryResidentInt4  MemoryMode = "resident-int4"  // resident, the DiT's block weights int4
	MemoryStreaming     MemoryMode = "streaming"      // DiT blocks / text layers streamed from disk
	MemoryStreamingInt8 MemoryMode = "streaming-int8" // streaming, the DiT's block weights int8
	MemoryStreamingInt4 MemoryMode = "streaming-int4" // streaming, the DiT's block weights int4
)

// QualityFloor bounds how much precision the automatic memory mode may
// trade for speed (plan.QualityFloor: best, balanced, fastest).
type QualityFloor = plan.QualityFloor

// Quality floors.
const (
	BestQuality    = plan.BestQuality    // BF16 weights only
	Balanced       = plan.Balanced       // resident in the most bits that fit, else BF16 streaming (default)
	FastestThatFit = plan.FastestThatFit // the fastest mode that fits, quantized streaming included
)

// Request is one generation. The zero value of every optional field means
// "default" (h3.c's defaults: 864×480, 56 frames, 20 steps, seed 42).
type Request struct {
	Prompt string `json:"prompt"`

	Width   int     `json:"width"`             // output canvas; multiples of 32, ≥ 32, ≤ 768·1344 pixels
	Height  int     `json:"height"`            //
	Frames  int     `json:"frames"`            // rounded up to 17n+5 (22..362)
	Seconds float64 `json:"seconds,omitempty"` // alternative to Frames: rounded up to the next legal frame count at 24 fps

	Steps int    `json:"steps"` // denoising passes (model evaluations), 2..1000
	Seed  uint64 `json:"seed"`  // noise seed; see SeedSet
	// SeedSet distinguishes seed 0 from "default seed 42".
	SeedSet bool `json:"-"`

	Preset         Preset `json:"preset"`
	Reuse          int    `json:"reuse"`                   // 1..3: velocity reuse (h3.c --reuse)
	Layers         int    `json:"layers"`                  // 35..50 of the released 50 blocks (scaled for other depths): gate-ranked block thinning
	CoreReuse      int    `json:"core_reuse"`              // 1..6: reuse of the blocks' residual (not with Reuse > 1)
	TokenReduction bool   `json:"token_reduction"`         // h3.c --token-reduction
	RenderWidth    int    `json:"render_width,omitempty"`  // render canvas (same aspect, ≤ output); 0 = output canvas
	RenderHeight   int    `json:"render_height,omitempty"` //

	First      string      `json:"first_frame,omitempty"` // FL2VA keyframe image files
	Last       string      `json:"last_frame,omitempty"`
	FirstImage image.Image `json:"-"` // in-memory keyframes (GUI); override First/Last paths
	LastImage  image.Image `json:"-"`
	References []Reference `json:"references,omitempty"` // Ref2VA, ordered; exclusive with First/Last
	// RefImageSize sizes picture references: "" the reference's 2048-px
	// short edge, "match" the canvas's area (h3.c's default), "max" at most
	// 2048 px (never enlarged).
	RefImageSize media.RefImagePolicy `json:"ref_image_size,omitempty"`
	// RefVideoCanvas sizes video references: "" the reference's 768-class
	// canvas of the video's aspect, "h3c" never enlarged.
	RefVideoCanvas media.RefVideoPolicy `json:"ref_video_canvas,omitempty"`

	// LoRAs are applied to the transformer at run time, in order, each
	// with its strength (docs/lora.md).
	LoRAs []LoRA `json:"loras,omitempty"`
	// Turbo (4, 6 or 8) selects the Turbo preset for a distilled LoRA:
	// that many passes, the Turbo shifts, exact path; explicit controls win.
	Turbo int `json:"turbo,omitempty"`
	// VideoShift and AudioShift replace the released sigma shifts (12, 3);
	// 0 keeps them (or the Turbo preset's).
	VideoShift float64 `json:"video_shift,omitempty"`
	AudioShift float64 `json:"audio_shift,omitempty"`

	Memory MemoryMode `json:"memory,omitempty"`
	// Quality is the floor of the automatic memory mode ("": the session's
	// Options.Quality, else balanced).
	Quality QualityFloor `json:"quality_floor,omitempty"`
	Preview bool         `json:"preview,omitempty"` // decode a middle-frame preview after every denoising step, and report final frames
}

// Plan is a validated, resolved request plus predictions, computed without
// mapping any weight.
type Plan struct {
	Request Request // every default filled in, frames aligned
	Task    Task
	Notes   []string // human-readable adjustments ("frames rounded up from 50 to 56")

	LatentFrames, LatentHeight, LatentWidth int
	AudioLatents                            int
	TextRows                                int // text encoder tokens (prompt, labels, vision blocks)
	Rows                                    int // packed sequence rows of one DiT forward (0: unknown)

	// References describes each Ref2VA reference as it will be encoded.
	References []ReferencePlan

	Forwards int // DiT evaluations
	// Predicted peak storage (bytes of weights and activations on the
	// backend) of the memory mode, and the time estimate for this device
	// from the session's own measurements. Zero means unknown.
	PeakBytes int64
	// DevicePeakBytes is PeakBytes without the decoders' host buffers:
	// what the backend's own accounting can measure.
	DevicePeakBytes int64
	// Memory is the memory mode the generation runs in (the automatic
	// choice resolved) and MemoryWhy why it was chosen.
	Memory    MemoryMode
	MemoryWhy string
	// MemoryBudget is the device's memory budget the mode was chosen
	// against (the working set less headroom; 0: unknown): a PeakBytes
	// above it may swap.
	MemoryBudget int64
	Estimate     time.Duration

	// Prediction is the predicted work behind PeakBytes and Estimate (set
	// by the engine's Session.Plan; Generate's progress estimate uses it).
	Prediction Prediction `json:"-"`
}

// Prediction is the predicted work of a plan's phases.
type Prediction struct {
	Work plan.Work[Phase]
	// Memory is the chosen mode's phases and end-to-end peak (zero:
	// unknown); the session follows its residency choices.
	Memory plan.ModePlan
	Notes  []string
}

// ReferencePlan is one reference as the plan sees it from its file's
// header.
type ReferencePlan struct {
	Label         string // "Picture 1", "Video 2", "Audio 1"
	Kind          ReferenceKind
	Width, Height int  // the size it is encoded at (pictures, videos)
	QwenFrames    int  // normalised 24 fps frames the text encoder samples (videos)
	VAEFrames     int  // frames the video VAE encodes (videos)
	LatentFrames  int  // their latent frames
	Sound         bool // its sound conditions the generation
	AudioLatents  int  // latents of its sound per stereo channel (approximate before decoding)
}

// Anchors lists an FL2VA plan's keyframes in packed order.
func (p Plan) Anchors() []layout.Anchor {
	var a []layout.Anchor
	r := p.Request
	if r.First != "" || r.FirstImage != nil {
		a = append(a, layout.First)
	}
	if r.Last != "" || r.LastImage != nil {
		a = append(a, layout.Last)
	}
	return a
}

// Phase is a stage of a generation.
type Phase string

// Phases in order.
const (
	PhaseLoad        Phase = "load"
	PhaseText        Phase = "text"       // tokenizer + text encoder layers
	PhaseReferences  Phase = "references" // vision tower / VAE encode of conditions
	PhaseDenoise     Phase = "denoise"
	PhaseVideoDecode Phase = "video-decode"
	PhaseAudioDecode Phase = "audio-decode"
	PhaseExport      Phase = "export"
	PhaseDone        Phase = "done"
)

// Event reports progress. Done/Total count the phase's units (text layers,
// steps, tiles, audio blocks, frames written).
type Event struct {
	Phase       Phase
	Done, Total int
	Elapsed     time.Duration // since Generate started
	ETA         time.Duration // remaining, 0 when unknown
	Preview     *image.RGBA   // denoise previews (Request.Preview) and final frames
	Frame       int           // frame index of Preview
	Message     string
}

// Result summarises a finished generation.
type Result struct {
	Plan      Plan
	Seed      uint64
	Frames    int
	Timings   map[Phase]time.Duration
	PeakBytes int64
	Model     string // model description (e.g. "MiniMax-H3 (demo)")
	ModelID   string // what identifies the weights: a hash of the transformer's config and shard index
	Cached    bool   // text conditioning came from the session cache
	// LoRAs records each LoRA the take applied.
	LoRAs []AppliedLoRA
	// Profile is each phase's wall time, work, dispatches and peak storage.
	Profile []PhaseProfile
	// Forwards aggregates the DiT forwards' profiles (dispatches, device
	// time, peak storage per forward) when Options.ProfileForwards is set.
	Forwards *dit.ProfileSummary `json:"-"`
}

// ReferenceLabel is a reference with the label the model sees.
type ReferenceLabel struct {
	Label string // "Picture 1", "Video 2", "Audio 1"
	Kind  ReferenceKind
	Path  string
	Audio string
}

// ReferenceLabels numbers references per kind in request order: images are
// Pictures, videos are Videos and standalone audio clips are Audios.
func ReferenceLabels(refs []Reference) []ReferenceLabel {
	var pic, vid, aud int
	out := make([]ReferenceLabel, 0, len(refs))
	for _, r := range refs {
		var l string
		switch r.Kind {
		case RefImage:
			pic++
			l = fmt.Sprintf("Picture %d", pic)
		case RefVideo, RefSilentVideo, RefVideoAudio:
			vid++
			l = fmt.Sprintf("Video %d", vid)
		case RefAudio:
			aud++
			l = fmt.Sprintf("Audio %d", aud)
		}
		out = append(out, ReferenceLabel{Label: l, Kind: r.Kind, Path: r.Path, Audio: r.Audio})
	}
	return out
}

// Controls are the request's speed controls as the denoising loop takes
// them.
func (r Request) Controls() denoise.Controls {
	return denoise.Controls{Steps: r.Steps, Reuse: r.Reuse, Layers: r.Layers, CoreReuse: r.CoreReuse, TokenReduction: r.TokenReduction,
		VideoShift: r.VideoShift, AudioShift: r.AudioShift}
}

// PhaseProfile is what one phase of a generation cost (h3studio generate
// --profile).
type PhaseProfile struct {
	Phase Phase
	Wall  time.Duration
	// Units and Unit count the phase's work ("steps", "tiles", …).
	Units int
	Unit  string
	// Dispatches and FLOPs are the backend's counters over the phase;
	// PeakBytes the peak tracked storage during it: weights and
	// activations on the backend, allocated or mapped
	// (compute.Stats.FootprintPeak).
	Dispatches int64
	FLOPs      float64
	PeakBytes  int64
}

// LatentSpec is a reference's place in the packed sequence.
func (rp ReferencePlan) LatentSpec() layout.Reference {
	switch rp.Kind {
	case RefAudio:
		return layout.Reference{Kind: layout.RefAudio, AudioLatents: rp.AudioLatents}
	case RefImage:
		return layout.Reference{Kind: layout.RefImage, Latent: layout.Grid{T: 1, H: rp.Height / 16, W: rp.Width / 16}}
	}
	return layout.Reference{Kind: layout.RefVideo, Latent: layout.Grid{T: rp.LatentFrames, H: rp.Height / 16, W: rp.Width / 16}, AudioLatents: rp.AudioLatents}
}
