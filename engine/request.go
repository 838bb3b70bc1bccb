package engine

import "h3studio/engine/request"

// The request, plan, event and result types, limits and presets are
// engine/request's (with the rules that resolve a request into a Plan);
// the façade re-exports them so callers need only the engine.
type (
	Event          = request.Event
	MemoryMode     = request.MemoryMode
	ModelFacts     = request.ModelFacts
	Phase          = request.Phase
	PhaseProfile   = request.PhaseProfile
	Plan           = request.Plan
	QualityFloor   = request.QualityFloor
	Prediction     = request.Prediction
	Preset         = request.Preset
	PresetSettings = request.PresetSettings
	Prober         = request.Prober
	Reference      = request.Reference
	ReferenceKind  = request.ReferenceKind
	ReferenceLabel = request.ReferenceLabel
	ReferencePlan  = request.ReferencePlan
	Request        = request.Request
	RequestError   = request.RequestError
	Result         = request.Result
	Task           = request.Task
)

// Limits, presets, memory modes, phases, reference kinds and tasks.
const (
	CanvasAlign         = request.CanvasAlign
	DefaultFrames       = request.DefaultFrames
	DefaultHeight       = request.DefaultHeight
	DefaultSeed         = request.DefaultSeed
	DefaultSteps        = request.DefaultSteps
	DefaultWidth        = request.DefaultWidth
	MaxCoreReuse        = request.MaxCoreReuse
	MaxFrames           = request.MaxFrames
	MaxLayers           = request.MaxLayers
	MaxPixels           = request.MaxPixels
	MaxReferenceAudio   = request.MaxReferenceAudio
	MaxReferenceImages  = request.MaxReferenceImages
	MaxReferenceVideos  = request.MaxReferenceVideos
	MaxReferences       = request.MaxReferences
	MaxReuse            = request.MaxReuse
	MaxSteps            = request.MaxSteps
	MemoryAuto          = request.MemoryAuto
	MemoryResident      = request.MemoryResident
	MemoryResidentInt8  = request.MemoryResidentInt8
	MemoryResidentInt4  = request.MemoryResidentInt4
	MemoryStreaming     = request.MemoryStreaming
	MemoryStreamingInt8 = request.MemoryStreamingInt8
	MemoryStreamingInt4 = request.MemoryStreamingInt4
	BestQuality         = request.BestQuality
	Balanced            = request.Balanced
	FastestThatFit      = request.FastestThatFit
	MinFrames           = request.MinFrames
	MinLayers           = request.MinLayers
	MinSteps            = request.MinSteps
	PhaseAudioDecode    = request.PhaseAudioDecode
	PhaseDenoise        = request.PhaseDenoise
	PhaseDone           = request.PhaseDone
	PhaseExport         = request.PhaseExport
	PhaseLoad           = request.PhaseLoad
	PhaseReferences     = request.PhaseReferences
	PhaseText           = request.PhaseText
	PhaseVideoDecode    = request.PhaseVideoDecode
	PresetDefault       = request.PresetDefault
	PresetFast          = request.PresetFast
	PresetPreview       = request.PresetPreview
	PresetReference     = request.PresetReference
	RefAudio            = request.RefAudio
	RefImage            = request.RefImage
	RefSilentVideo      = request.RefSilentVideo
	RefVideo            = request.RefVideo
	RefVideoAudio       = request.RefVideoAudio
	TaskFL2VA           = request.TaskFL2VA
	TaskRef2VA          = request.TaskRef2VA
	TaskT2VA            = request.TaskT2VA
	TurboAudioShift     = request.TurboAudioShift
	TurboVideoShift544  = request.TurboVideoShift544
	TurboVideoShift768  = request.TurboVideoShift768
)

// Preset tables.
var (
	Presets    = request.Presets
	TurboSteps = request.TurboSteps
)

// Request helpers.
var (
	AlignFrames     = request.AlignFrames
	IsRequestError  = request.IsRequestError
	ReferenceLabels = request.ReferenceLabels
	SecondsToFrames = request.SecondsToFrames
)
