package qwen3vl

import (
	"h3studio/engine/compute"
)

// ReleasedConfig is the released MiniMax-H3 text encoder configuration
// (Qwen3-VL-32B; H3-ENCODERS-VAES.md §2.3), for planning without the files.
func ReleasedConfig() *Config {
	theta := 5e6
	return &Config{
		Text: TextConfig{
			HiddenSize: 5120, NumLayers: 64, NumHeads: 64, NumKVHeads: 8, HeadDim: 128, IntermediateSize: 25600,
			VocabSize: 151936, RMSNormEps: 1e-6, HiddenAct: "silu", MaxPositions: 262144, RopeTheta: theta,
			RopeScaling: &Rope{RopeType: "default", MropeSection: []int{24, 20, 20}, MropeInterleaved: true},
		},
		Vision: VisionConfig{
			Depth: 27, HiddenSize: 1152, IntermediateSize: 4304, NumHeads: 16, HiddenAct: "gelu_pytorch_tanh",
			InChannels: 3, PatchSize: 16, TemporalPatchSize: 2, SpatialMergeSize: 2, NumPositions: 2304,
			OutHiddenSize: 5120, DeepstackIndexes: []int{8, 16, 24},
		},
		ImageTokenID: 151655, VideoTokenID: 151656, VisionStartTokenID: 151652, VisionEndTokenID: 151653,
	}
}

// PlanInput describes one Encode for planning.
type PlanInput struct {
	Tokens    int           // sequence length L
	Blocks    []Grid        // vision blocks (grid_t = 1 each), in sequence order
	Precision compute.DType // activation dtype (BF16 or F32)
	Layers    int           // decoder layers run (0: Config.TapLayers())
	// WeightDType is the stored weight dtype (BF16 in the release).
	WeightDType compute.DType
}

// Footprint is the predicted backend storage of one Encode: what the
// compute backend holds (weights bound to it and activations), not the
// memory-mapped checkpoint pages or the CPU reference's kernel scratch.
type Footprint struct {
	Residency compute.Residency
	// LayerBytes is one decoder layer's weights; VisionBytes the vision
	// tower's (the position table is also kept as a float32 host copy).
	LayerBytes, VisionBytes int64
	// Weights held during the vision phase and during the decoder phase.
	VisionPhaseWeights, TextPhaseWeights int64
	// Activations at the peak of each phase.
	VisionActivations, TextActivations int64
	// Peak is the largest phase total (weights + activations).
	Peak int64
	// Streamed is the weight bytes read from disk per Encode (streaming).
	Streamed int64
}

// Plan predicts the storage of an Encode with the decoder layers held as r.
// It mirrors Encode's allocation order exactly (a test checks it against the
// CPU backend's measured peak).
func Plan(c *Config, r compute.Residency, in PlanInput) Footprint {
	layers := in.Layers
	if layers == 0 {
		layers = c.TapLayers()
	}
	wdt := in.WeightDType
	if wdt == compute.Invalid {
		wdt = compute.BF16
	}
	act := in.Precision
	if act == compute.Invalid {
		act = compute.BF16
	}
	f := Footprint{Residency: r, LayerBytes: SpecBytes(c.LayerSpecs(0), wdt), VisionBytes: SpecBytes(c.VisionSpecs(), wdt)}
	if len(in.Blocks) == 0 && r == compute.Streaming {
		f.VisionBytes = 0 // the tower is never bound
	}
	f.VisionActivations, f.TextActivations = planActivations(c, in, act, wdt)
	switch r {
	case compute.Streaming:
		f.VisionPhaseWeights = f.VisionBytes
		f.TextPhaseWeights = 2 * f.LayerBytes
		if layers < 2 {
			f.TextPhaseWeights = int64(layers) * f.LayerBytes
		}
		f.Streamed = int64(layers) * f.LayerBytes
	default:
		f.VisionBytes = SpecBytes(c.VisionSpecs(), wdt)
		f.VisionPhaseWeights = int64(layers)*f.LayerBytes + f.VisionBytes
		f.TextPhaseWeights = f.VisionPhaseWeights
	}
	f.Peak = max(f.VisionPhaseWeights+f.VisionActivations, f.TextPhaseWeights+f.TextActivations)
	return f
}

// planActivations returns the activation peaks of the vision phase and of
// the decoder phase.
func planActivations(c *Config, in PlanInput, act, wdt compute.DType) (vision, text int64) {
	s := int64(act.Size())
	v, t := c.Vision, c.Text
	C, I, H, hd := int64(v.HiddenSize), int64(v.IntermediateSize), int64(v.NumHeads), int64(c.VisionHeadDim())
	m2 := int64(v.SpatialMergeSize * v.SpatialMergeSize)
	dm, D := int64(c.MergedWidth()), int64(t.HiddenSize)
	K := int64(len(v.DeepstackIndexes))
	var held, P int64
	for _, g := range in.Blocks {
		N := int64(g.H * g.W)
		T := N / m2
		out := (1 + K) * T * D * s
		transient := N*int64(c.PatchInputs())*s + // pixels
			2*N*C*s + // x, pos
			2*N*(hd/2)*4 + // rotary tables (float32)
			N*C*s + N*3*C*s + 3*N*C*s + // y, qkv, qkvT
			H*N*hd*4 + // float32 rotation scratch
			3*N*C*s + N*I*s + // att, attT, o, h1
			(1+K)*2*T*dm*s // each merger's norm and fc1 outputs
		vision = max(vision, held+transient+out)
		held += out
		P += T
	}
	L := int64(in.Tokens)
	Hq, Hkv, Dh, Fi := int64(t.NumHeads), int64(t.NumKVHeads), int64(t.HeadDim), int64(t.IntermediateSize)
	h := L * D * s
	ws := (2*L*D + 2*L*Hq*Dh + 2*L*Hkv*Dh + 2*L*Hkv*Dh + 2*L*Hq*Dh + 2*L*Fi + 2*L*(Dh/2)) * s
	embedTemp := int64(0)
	if act != wdt { // the table's rows are staged in its dtype before conversion
		embedTemp = L * D * int64(wdt.Size())
	}
	text = max(held+h+embedTemp, held+h+ws)
	if P > 0 {
		text = held + h + ws + P*8 + P*D*s + K*P*D*s
	}
	return vision, text
}

// TextFLOPs is the work of the decoder layers of one Encode over L tokens
// running layers of them (0: Config.TapLayers()): the projections, the
// SwiGLU MLP and the attention scores and mix (a multiply-add is 2 FLOPs;
// norms, RoPE and the vision tower, small next to these, are left out).
func TextFLOPs(c *Config, tokens, layers int) float64 {
	if layers == 0 {
		layers = c.TapLayers()
	}
	t := c.Text
	L := float64(tokens)
	q, kv := t.NumHeads*t.HeadDim, t.NumKVHeads*t.HeadDim
	perLayer := 2*L*float64(t.HiddenSize*(q+2*kv)+q*t.HiddenSize+3*t.HiddenSize*t.IntermediateSize) + 4*L*L*float64(q)
	return perLayer * float64(layers)
}
