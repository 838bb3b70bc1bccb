// Package plan predicts, without any weights, what a generation request
// costs: packed rows, work per model evaluation, weight traffic and peak
// tracked storage of each pipeline component, resident and streamed. Each
// component contributes an Estimator (registered from its own file, e.g.
// dit.go) that runs the component's real model code shape-only: over the
// engine/compute/meta backend with a data-less checkpoint inventory built
// from the released configuration.
//
// `h3studio plan` prints these estimates (app/cmd_plan.go). The same
// package predicts a resolved request for Session.Plan (request.go: the
// snapshot's own configs, the whole denoising loop shape-only), keeps the
// session's measured rates and their file (rates.go, ratesfile.go) and the
// prediction cache.
package plan

import (
	"fmt"
	"h3studio/engine/lora"
	"sort"
	"sync"

	"h3studio/engine/compute"
	"h3studio/engine/denoise"
	"h3studio/engine/layout"
	"h3studio/engine/prompt"
)

// Query is what an estimate is computed for. Zero values mean defaults.
type Query struct {
	Canvas layout.Canvas // output canvas (render canvas when one is used); default 864×480
	Frames int           // requested frames, aligned up to 17n+5; default 56
	// Keyframes is the number of FL2VA keyframes (0 for t2va, 1 or 2).
	Keyframes int
	// TextRows is the number of text rows (prompt tokens and vision
	// blocks); default 128.
	TextRows int
	// Controls are the speed controls (steps, reuse, layers, core reuse,
	// token reduction).
	Controls denoise.Controls
	// LoRAs are the files (and strengths) whose low-rank branch the DiT
	// row counts, read from their headers.
	LoRAs []lora.Use
	// Quant quantizes the DiT's block weights (dit.Options.Quant); the zero
	// value is BF16.
	Quant compute.QuantFormat
}

// Defaults of a Query.
const (
	DefaultWidth, DefaultHeight = 864, 480
	DefaultFrames               = 56
	DefaultTextRows             = 128
	// MaxTextRows is the longest presentation the released text encoder
	// takes (prompt.DefaultMaxTokens, its max_position_embeddings).
	MaxTextRows = prompt.DefaultMaxTokens
)

// Normalize fills the defaults and checks the query.
func (q Query) Normalize() (Query, error) {
	if q.Canvas == (layout.Canvas{}) {
		q.Canvas = layout.Canvas{Width: DefaultWidth, Height: DefaultHeight}
	}
	if err := q.Canvas.Validate(); err != nil {
		return q, fmt.Errorf("plan: %w", err)
	}
	if q.Frames == 0 {
		q.Frames = DefaultFrames
	}
	f, err := layout.AlignFrames(q.Frames)
	if err != nil {
		return q, fmt.Errorf("plan: %w", err)
	}
	if f > layout.MaxFrames {
		return q, fmt.Errorf("plan: %d frames align to %d, beyond the released %d", q.Frames, f, layout.MaxFrames)
	}
	if f < layout.MinGenerateFrames {
		return q, fmt.Errorf("plan: %d frames align to %d, below the %d frames of the shortest generation (one video VAE decoder chunk)", q.Frames, f, layout.MinGenerateFrames)
	}
	q.Frames = f
	if q.TextRows == 0 {
		q.TextRows = DefaultTextRows
	}
	if q.TextRows < 1 || q.TextRows > MaxTextRows {
		return q, fmt.Errorf("plan: text rows %d: must be in 1..%d (the text encoder's max_position_embeddings)", q.TextRows, MaxTextRows)
	}
	if q.Keyframes < 0 || q.Keyframes > 2 {
		return q, fmt.Errorf("plan: %d keyframes: fl2va takes a first and/or a last frame", q.Keyframes)
	}
	q.Controls = q.Controls.Normalize()
	if err := q.Controls.Validate(); err != nil {
		return q, err
	}
	return q, nil
}

// Storage is peak tracked storage in bytes: the peak of weights plus
// activations (tables, caches and scratch included), split at that moment.
type Storage struct {
	Peak        int64
	Weights     int64 // weights live at the peak
	Activations int64 // everything else live at the peak
	// Host is the part of Activations in host buffers (the decoders'
	// canvases), which a backend does not track.
	Host int64
}

// Estimate is one component's prediction.
type Estimate struct {
	Component string
	// Rows is the packed sequence length (DiT) or the component's natural
	// unit count (tiles, text tokens …), with RowsUnit naming it.
	Rows     int
	RowsUnit string
	// Evaluations is the number of model evaluations of the request.
	Evaluations int
	// FLOPs and WeightBytes are the work and the distinct weight bytes one
	// evaluation reads (one exact forward for the DiT).
	FLOPs       float64
	WeightBytes float64
	// TotalFLOPs is the work of the whole request.
	TotalFLOPs float64
	// Resident and Streaming are the peaks with every weight resident and
	// with weights streamed (the DiT keeps two blocks).
	Resident, Streaming Storage
	Notes               []string
}

// Estimator computes one component's estimate for a normalized query.
type Estimator func(q Query) (Estimate, error)

type entry struct {
	name  string
	order int
	est   Estimator
}

var (
	mu         sync.Mutex
	estimators []entry
)

// Register adds a component estimator; order sorts the rows (pipeline
// order: text encoder 10, DiT 20, video VAE 30, audio VAE 40). It panics on
// a duplicate name. Call it from init in the component's file.
func Register(name string, order int, e Estimator) {
	mu.Lock()
	defer mu.Unlock()
	for _, x := range estimators {
		if x.name == name {
			panic("plan: component registered twice: " + name)
		}
	}
	estimators = append(estimators, entry{name, order, e})
	sort.SliceStable(estimators, func(i, j int) bool { return estimators[i].order < estimators[j].order })
}

// Components lists the registered component names in pipeline order.
func Components() []string {
	mu.Lock()
	defer mu.Unlock()
	out := make([]string, len(estimators))
	for i, e := range estimators {
		out[i] = e.name
	}
	return out
}

// Run runs every registered estimator (or only those named in only).
func Run(q Query, only ...string) ([]Estimate, error) {
	q, err := q.Normalize()
	if err != nil {
		return nil, err
	}
	mu.Lock()
	es := append([]entry(nil), estimators...)
	mu.Unlock()
	want := map[string]bool{}
	for _, o := range only {
		want[o] = true
	}
	var out []Estimate
	for _, e := range es {
		if len(want) > 0 && !want[e.name] {
			continue
		}
		est, err := e.est(q)
		if err != nil {
			return out, fmt.Errorf("plan: %s: %w", e.name, err)
		}
		if est.Component == "" {
			est.Component = e.name
		}
		out = append(out, est)
	}
	for o := range want {
		found := false
		for _, e := range es {
			found = found || e.name == o
		}
		if !found {
			return out, fmt.Errorf("plan: no component %q (known: %v)", o, Components())
		}
	}
	return out, nil
}
