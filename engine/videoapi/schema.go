// Package videoapi is the one wire schema of the /v1/videos API that H3
// Studio serves and sends: OpenAI's videos API (prompt, model, seconds,
// size, input_reference) with SGLang Diffusion's MiniMax-H3 extension
// (task, conditions, target, quality, num_inference_steps, seed,
// flow shifts), plus an optional "h3studio" object for the controls only
// H3 Studio has. The same types are decoded by the server (Parse, Lower)
// and encoded by the client (Build), so the two directions cannot drift.
//
// This file holds the wire types; parse.go the strict decoder, lower.go
// the mapping to engine.Request, build.go the reverse mapping, server.go
// the HTTP handler and client.go the HTTP client.
package videoapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// CreateRequest is the body of POST /v1/videos. Pointer fields are
// optional; an absent field means the engine's default. Unknown fields
// are refused (as SGLang's H3 schema refuses them).
type CreateRequest struct {
	Prompt string `json:"prompt"`
	Model  string `json:"model,omitempty"`
	// Seconds is OpenAI's duration, a string ("4") in OpenAI's API and an
	// integer in SGLang's; both are accepted.
	Seconds *Number `json:"seconds,omitempty"`
	Size    string  `json:"size,omitempty"` // "WxH"
	Width   *int    `json:"width,omitempty"`
	Height  *int    `json:"height,omitempty"`
	// NumFrames and FPS are SGLang's frame controls (FPS must be 24).
	NumFrames *int `json:"num_frames,omitempty"`
	FPS       *int `json:"fps,omitempty"`
	// N and NumOutputsPerPrompt are SGLang's fan-out (1..10); H3 Studio
	// makes one take per request.
	N                   *int `json:"n,omitempty"`
	NumOutputsPerPrompt *int `json:"num_outputs_per_prompt,omitempty"`
	// NumInferenceSteps counts sigma grid points including the terminal
	// zero, as diffusers and SGLang do: N means N-1 model evaluations.
	NumInferenceSteps *int    `json:"num_inference_steps,omitempty"`
	Seed              *Number `json:"seed,omitempty"`

	Task       string      `json:"task,omitempty"` // t2va, fl2va, ref2va
	Conditions []Condition `json:"conditions,omitempty"`
	Target     *Target     `json:"target,omitempty"`
	// Quality is SGLang's sampling level: lossless (exact) or high (the
	// accelerated path; H3 Studio's "fast" preset).
	Quality        string   `json:"quality,omitempty"`
	FlowShift      *float64 `json:"flow_shift,omitempty"`
	AudioFlowShift *float64 `json:"audio_flow_shift,omitempty"`
	GuidanceScale  *float64 `json:"guidance_scale,omitempty"`
	NegativePrompt *string  `json:"negative_prompt,omitempty"`
	// GeneratorDevice is where SGLang draws its noise; H3 Studio draws it
	// on the host whatever is asked.
	GeneratorDevice *string `json:"generator_device,omitempty"`
	// OutputQuality is SGLang's file compression level; H3 Studio writes
	// its one MP4 profile.
	OutputQuality *string `json:"output_quality,omitempty"`

	// InputReference is OpenAI's single reference: in a multipart body
	// the uploaded file (see Upload); in JSON a URI string.
	InputReference string `json:"input_reference,omitempty"`

	// H3 carries H3 Studio's own controls; SGLang servers do not know it,
	// so Build leaves it out for them.
	H3 *H3Options `json:"h3studio,omitempty"`
}

// Condition is one SGLang MiniMax-H3 keyframe or reference.
type Condition struct {
	Type             string   `json:"type"` // image, video, video_audio, audio (H3 Studio adds silent_video)
	URI              string   `json:"uri"`
	Role             string   `json:"role"`                  // keyframe, reference
	FrameIndex       *int     `json:"frame_index,omitempty"` // keyframes: 0 first, -1 last
	StartTimeSeconds *float64 `json:"start_time_seconds,omitempty"`
	// AudioURI is H3 Studio's separate sound file paired with a video
	// reference (h3c's --ref-video-audio); SGLang has no such field.
	AudioURI string `json:"audio_uri,omitempty"`
}

// Target is SGLang's MiniMax-H3 canvas and duration.
type Target struct {
	ShortEdge       int      `json:"short_edge"`
	AspectRatio     string   `json:"aspect_ratio"` // "16:9", "1:1", … or "auto"
	DurationSeconds *float64 `json:"duration_seconds,omitempty"`
}

// H3Options are the controls of `h3studio generate` that neither OpenAI's
// nor SGLang's schema has.
type H3Options struct {
	Preset         string `json:"preset,omitempty"`     // reference, default, fast, preview
	Steps          int    `json:"steps,omitempty"`      // model evaluations (instead of num_inference_steps)
	Frames         int    `json:"frames,omitempty"`     // 17n+5 frames (instead of seconds)
	Reuse          int    `json:"reuse,omitempty"`      // velocity reuse 1..3
	Layers         int    `json:"layers,omitempty"`     // DiT blocks kept
	CoreReuse      int    `json:"core_reuse,omitempty"` // core refresh 1..6
	TokenReduction bool   `json:"token_reduction,omitempty"`
	RenderWidth    int    `json:"render_width,omitempty"`
	RenderHeight   int    `json:"render_height,omitempty"`
	Memory         string `json:"memory,omitempty"` // resident, streaming ("" auto)
	RefImageSize   string `json:"ref_image_size,omitempty"`
	RefVideoCanvas string `json:"ref_video_canvas,omitempty"`
}

// Number is a JSON number that may also arrive as a string ("4"), as
// OpenAI sends seconds and multipart forms send everything.
type Number string

// UnmarshalJSON accepts a number or a string holding one.
func (n *Number) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		b = []byte(s)
	}
	if _, err := strconv.ParseFloat(string(b), 64); err != nil {
		return fmt.Errorf("%q is not a number", b)
	}
	*n = Number(b)
	return nil
}

// MarshalJSON writes the number as a JSON number.
func (n Number) MarshalJSON() ([]byte, error) {
	if _, err := strconv.ParseFloat(string(n), 64); err != nil {
		return nil, fmt.Errorf("videoapi: %q is not a number", string(n))
	}
	return []byte(n), nil
}

// Float is the number's value.
func (n Number) Float() (float64, error) { return strconv.ParseFloat(string(n), 64) }

// Uint is the number as a non-negative integer.
func (n Number) Uint() (uint64, error) { return strconv.ParseUint(string(n), 10, 64) }

// Video statuses.
const (
	StatusQueued     = "queued"
	StatusInProgress = "in_progress"
	StatusCompleted  = "completed"
	StatusFailed     = "failed"
	StatusCancelled  = "cancelled"
	StatusDeleted    = "deleted"
)

// Video is the video object of OpenAI's API, with SGLang's timing fields.
type Video struct {
	ID          string      `json:"id"`
	Object      string      `json:"object"` // "video"
	Model       string      `json:"model"`
	Status      string      `json:"status"`
	Progress    int         `json:"progress"` // 0..100
	CreatedAt   int64       `json:"created_at"`
	CompletedAt *int64      `json:"completed_at"`
	ExpiresAt   *int64      `json:"expires_at"`
	Error       *VideoError `json:"error"`
	Seconds     string      `json:"seconds"`
	Size        string      `json:"size"`
	Prompt      string      `json:"prompt,omitempty"`
	// InferenceTimeS is SGLang's generation time in seconds.
	InferenceTimeS *float64 `json:"inference_time_s,omitempty"`
	PeakMemoryMB   *float64 `json:"peak_memory_mb,omitempty"`
	// Timings are H3 Studio's per-phase seconds (completed takes).
	Timings map[string]float64 `json:"timings,omitempty"`
	// Phase is the running phase (H3 Studio).
	Phase string `json:"phase,omitempty"`
	// NumOutputs is SGLang's output count (content variants 0..n-1).
	NumOutputs int `json:"num_outputs,omitempty"`
}

// VideoError says why a video failed.
type VideoError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// VideoList is GET /v1/videos.
type VideoList struct {
	Object  string  `json:"object"` // "list"
	Data    []Video `json:"data"`
	FirstID string  `json:"first_id,omitempty"`
	LastID  string  `json:"last_id,omitempty"`
	HasMore bool    `json:"has_more"`
}

// ErrorBody is a refusal: SGLang's {"detail": …} with OpenAI's
// {"error": {message, type, code}} beside it, so either client reads it.
type ErrorBody struct {
	Detail string      `json:"detail"`
	Error  ErrorDetail `json:"error"`
}

// ErrorDetail is OpenAI's error object.
type ErrorDetail struct {
	Message string `json:"message"`
	Type    string `json:"type"`
	Code    string `json:"code,omitempty"`
	Param   string `json:"param,omitempty"`
}
