// Package engine runs MiniMax-H3 text/image/video/audio-to-video+audio
// generation: the façade the GUI, the CLI and tests drive the same way.
// Phases mirror diffusers' modular pipeline: encode, prepare, denoise,
// decode.
//
// This file defines the request, plan, event and result types; the session
// that executes them is in session.go.
package engine

import (
	"image"
	"time"
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
	Kind  ReferenceKind
	Path  string // image, video or audio file
	Audio string // RefVideoAudio: the separate sound file
}

// MemoryMode chooses what stays resident.
type MemoryMode string

// Memory modes.
const (
	MemoryAuto      MemoryMode = ""          // pick the fastest mode that fits
	MemoryResident  MemoryMode = "resident"  // every component stays loaded
	MemoryStreaming MemoryMode = "streaming" // DiT blocks / text layers streamed from disk
)

// Request is one generation. The zero value of every optional field means
// "default" (h3.c's defaults: 864×480, 56 frames, 20 steps, seed 42).
type Request struct {
	Prompt string

	Width, Height int     // output canvas; multiples of 32, ≥ 32, ≤ 768·1344 pixels
	Frames        int     // rounded up to 17n+5 (22..362)
	Seconds       float64 // alternative to Frames: rounded up to the next legal frame count at 24 fps

	Steps int    // denoising passes (model evaluations), 2..1000
	Seed  uint64 // noise seed; see SeedSet
	// SeedSet distinguishes seed 0 from "default seed 42".
	SeedSet bool

	Preset         Preset
	Reuse          int  // 1..3: velocity reuse (h3.c --reuse)
	Layers         int  // 35..50 (released model; scaled for others): gate-ranked block thinning
	CoreReuse      int  // 1..6: reuse of the blocks' residual (not with Reuse > 1)
	TokenReduction bool // h3.c --token-reduction
	RenderWidth    int  // render canvas (same aspect, ≤ output); 0 = output canvas
	RenderHeight   int

	First, Last string      // FL2VA keyframe image files
	FirstImage  image.Image `json:"-"` // in-memory keyframes (GUI); override First/Last paths
	LastImage   image.Image `json:"-"`
	References  []Reference // Ref2VA, ordered; exclusive with First/Last

	Memory  MemoryMode
	Preview bool // decode a middle-frame preview after every denoising step
}

// Plan is a validated, resolved request plus predictions, computed without
// mapping any weight.
type Plan struct {
	Request Request // every default filled in, frames aligned
	Task    Task
	Notes   []string // human-readable adjustments ("frames rounded up from 50 to 56")

	LatentFrames, LatentHeight, LatentWidth int
	AudioLatents                            int
	Rows                                    int // packed sequence rows of one DiT forward

	Forwards int // DiT evaluations
	// Predicted peak memory (bytes) of the chosen memory mode, and the time
	// estimate for this device.
	PeakBytes int64
	Memory    MemoryMode
	Estimate  time.Duration
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
	Cached    bool   // text conditioning came from the session cache
}
