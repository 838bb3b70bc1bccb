package plan

import (
	"context"
	"fmt"

	"h3studio/engine/audiovae"
	"h3studio/engine/compute"
	"h3studio/engine/compute/meta"
	"h3studio/engine/denoise"
	"h3studio/engine/dit"
	"h3studio/engine/layout"
	"h3studio/engine/prompt"
	"h3studio/engine/qwen3vl"
	"h3studio/engine/safetensors"
	"h3studio/engine/tokenizer"
	"h3studio/engine/videovae"
)

// A resolved generation request's prediction (what Session.Plan reports):
// the same component models as the `h3studio plan` rows, over the
// snapshot's own configs and the request's own shapes, with the whole
// denoising loop run shape-only through engine/denoise.

// Loop is a request's denoising loop: its packed sequence and controls.
type Loop struct {
	TextRows     int
	Target       layout.Grid // latent frames × latent height × width
	AudioLatents int
	Keyframes    []layout.Anchor    // FL2VA keyframes in packed order
	References   []layout.Reference // Ref2VA references in request order
	Controls     denoise.Controls
	// Adapters are the request's LoRA updates (shape-only suffices): their
	// low-rank branch's FLOPs and storage count in the prediction.
	Adapters dit.Adapters
}

// Request is what a request's prediction depends on: the model's configs
// (the decoders nil when the snapshot has none), the request's shapes, the
// memory mode and the device's budget.
type Request struct {
	Text  *qwen3vl.Config
	DiT   dit.Config
	Video *videovae.Config
	Audio *audiovae.Config
	// Grids are the vision blocks the text encoder reads (keyframes,
	// pictures, video blocks).
	Grids []qwen3vl.Grid
	Loop  Loop
	Mode  Mode
	// Budget is the device's memory budget (0: unknown): PlanMode's
	// residency choices depend on it.
	Budget int64
	// StreamVideoDecoder streams the video decoder's blocks whatever the
	// budget (the session's Options.StreamVideoDecoder).
	StreamVideoDecoder bool
}

// Prediction is a request's predicted work and peak storage.
type Prediction struct {
	// FLOPs of the text encoder's decoder layers (the vision tower is small
	// next to them), the denoising loop and the two decoders (zero when the
	// snapshot has no such decoder).
	TextFLOPs, DenoiseFLOPs, VideoDecodeFLOPs, AudioDecodeFLOPs float64
	Rows                                                        int // packed rows of one DiT forward
	// Memory is the mode's phases and end-to-end peak (PlanMode): Peak
	// counts the decoders' host buffers, DevicePeak leaves them out (the
	// storage a backend tracks: its allocations and mapped weights).
	Memory ModePlan
}

// Predict predicts a request's work and its phases' storage (PlanMode)
// over the snapshot's own configs, for the session: its DiT-resident modes
// keep every component loaded where they fit the budget together, else
// release each phase's component (KeepWhenFits).
func Predict(r Request) (Prediction, error) {
	var p Prediction
	L := r.Loop.TextRows
	p.TextFLOPs = qwen3vl.TextFLOPs(r.Text, L, 0)
	in := qwen3vl.PlanInput{Tokens: L, Blocks: r.Grids}
	c := Estimates{StreamVideoDecoder: r.StreamVideoDecoder}
	c.Text = Estimate{Component: "text-encoder",
		Resident:  footprintStorage(qwen3vl.Plan(r.Text, compute.Resident, in)),
		Streaming: footprintStorage(qwen3vl.Plan(r.Text, compute.Streaming, in))}
	du, rows, err := LoopUsage(r.DiT, r.Loop, r.Mode.Residency, r.Mode.Quant)
	if err != nil {
		return p, err
	}
	p.Rows, p.DenoiseFLOPs = rows, du.FLOPs
	ds := Storage{Peak: du.PeakTotal, Weights: du.WeightsAtPeak, Activations: du.PeakTotal - du.WeightsAtPeak}
	c.DiT = Estimate{Component: "dit", Resident: ds, Streaming: ds}
	if r.Video != nil {
		g := r.Loop.Target
		vc, err := videovae.EstimateDecode(r.Video, g.T, g.H, g.W, nil, compute.F32)
		if err != nil {
			return p, err
		}
		p.VideoDecodeFLOPs = vc.FLOPs
		c.Video = Estimate{Component: "video-vae"}
		c.Video.Resident, c.Video.Streaming = videoStorage(vc)
	}
	if r.Audio != nil {
		ac, err := audiovae.EstimateDecode(r.Audio, layout.AudioChannels, r.Loop.AudioLatents)
		if err != nil {
			return p, err
		}
		p.AudioDecodeFLOPs = ac.FLOPs
		as := audioStorage(ac)
		c.Audio = Estimate{Component: "audio-vae", Resident: as, Streaming: as}
	}
	p.Memory = PlanMode(r.Mode, c, r.Budget, KeepWhenFits)
	return p, nil
}

// LoopUsage runs a request's denoising loop shape-only: the model's own
// code on the meta backend over a data-less checkpoint of its config, its
// block weights held as residency in format q. It returns the loop's usage and the packed
// rows of one forward.
func LoopUsage(cfg dit.Config, l Loop, residency compute.Residency, q compute.QuantFormat) (u meta.Usage, rows int, err error) {
	defer compute.Recover(&err)
	mb := meta.New()
	m, err := dit.Load(mb, safetensors.NewBinder("dit", dit.PlanningSource(cfg, dit.OriginalLayout), mb.Weights()), &cfg,
		&dit.Options{Residency: residency, Adapters: l.Adapters, Quant: q})
	if err != nil {
		return u, 0, err
	}
	defer m.Close()
	text := compute.MustAlloc(mb, compute.BF16, l.TextRows, cfg.TextDim)
	tags := make([]int64, l.TextRows)
	for i := range tags {
		tags[i] = layout.TagText
	}
	g, C := l.Target, cfg.InChannels
	req := denoise.Request{Text: text, TextTags: tags, Target: g, AudioLatents: l.AudioLatents,
		VideoNoise: make([]float32, C*g.T*g.H*g.W), AudioNoise: make([]float32, layout.AudioChannels*cfg.AudioInChannels*l.AudioLatents),
		Controls: l.Controls}
	for _, a := range l.Keyframes {
		n := C * g.H * g.W
		req.Keyframes = append(req.Keyframes, denoise.Keyframe{Anchor: a, Latent: make([]float32, n), Noise: make([]float32, n)})
	}
	for _, spec := range l.References {
		dr := denoise.Reference{Spec: spec}
		if spec.Kind != layout.RefAudio {
			n := C * spec.Latent.T * spec.Latent.H * spec.Latent.W
			dr.Latent, dr.Noise = make([]float32, n), make([]float32, n)
		}
		if spec.AudioLatents > 0 {
			dr.Audio = make([]float32, layout.AudioChannels*spec.AudioLatents*cfg.AudioInChannels)
		}
		req.References = append(req.References, dr)
	}
	obs := denoise.Observer{Prepared: func(pp *denoise.Prepared) { rows = pp.Layout.Rows() }}
	if _, err := denoise.Run(context.Background(), m, req, obs); err != nil {
		return u, 0, fmt.Errorf("plan: the denoising loop: %w", err)
	}
	return mb.Usage(), rows, nil
}

// Text is a request's text-encoder input as the planner sees it, before
// any file is decoded.
type Text struct {
	Prompt string
	Task   prompt.Task
	// Keyframes is the number of FL2VA keyframes, each at Canvas (the model
	// canvas).
	Keyframes int
	Canvas    layout.Canvas
	// References are the Ref2VA references at the sizes they are encoded at.
	References []TextReference
}

// TextReference is one reference of a Text.
type TextReference struct {
	Kind          prompt.Kind
	Width, Height int
	QwenFrames    int  // normalised 24 fps frames the text encoder samples (videos)
	Sound         bool // a video's sound track conditions the generation
}

// TextRows predicts the text encoder's sequence: the prompt's tokens, the
// labels, and the vision blocks of the keyframes and references at the
// sizes the processor will give them. It returns the rows and the vision
// blocks' grids.
func TextRows(tok *tokenizer.Tokenizer, cfg *qwen3vl.Config, pcfg qwen3vl.ProcessorConfig, factor int, t Text) (int, []qwen3vl.Grid, error) {
	merge := cfg.Vision.SpatialMergeSize
	req := prompt.Request{Task: t.Task, Prompt: t.Prompt}
	var grids []qwen3vl.Grid
	imageGrid := func(w, h int) (prompt.Grid, error) {
		hh, ww, err := qwen3vl.SmartResizeImage(h, w, factor, pcfg.Image)
		if err != nil {
			return prompt.Grid{}, err
		}
		grids = append(grids, qwen3vl.Grid{T: 1, H: hh / (factor / merge), W: ww / (factor / merge)})
		return prompt.Grid{H: hh / factor, W: ww / factor}, nil
	}
	for range t.Keyframes {
		g, err := imageGrid(t.Canvas.Width, t.Canvas.Height)
		if err != nil {
			return 0, nil, err
		}
		req.Keyframes = append(req.Keyframes, g)
	}
	for _, rp := range t.References {
		switch rp.Kind {
		case prompt.Image:
			g, err := imageGrid(rp.Width, rp.Height)
			if err != nil {
				return 0, nil, err
			}
			req.References = append(req.References, prompt.Reference{Kind: prompt.Image, Grid: g})
		case prompt.Audio:
			req.References = append(req.References, prompt.Reference{Kind: prompt.Audio})
		default:
			blocks, err := prompt.SampleVideo(rp.QwenFrames)
			if err != nil {
				return 0, nil, err
			}
			hh, ww, err := qwen3vl.SmartResizeVideo(2*len(blocks), rp.Height, rp.Width, cfg.Vision.TemporalPatchSize, factor, pcfg.Video, false)
			if err != nil {
				return 0, nil, err
			}
			for range blocks {
				grids = append(grids, qwen3vl.Grid{T: 1, H: hh / (factor / merge), W: ww / (factor / merge)})
			}
			req.References = append(req.References, prompt.Reference{Kind: prompt.Video, Grid: prompt.Grid{H: hh / factor, W: ww / factor},
				Blocks: blocks, Soundtrack: rp.Sound})
		}
	}
	pres, err := prompt.Present(tok, req, prompt.Options{EmptyPrompt: prompt.PadEmpty})
	if err != nil {
		return 0, nil, err
	}
	return pres.Len(), grids, nil
}
