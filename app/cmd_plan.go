package main

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"h3studio/engine"
	"h3studio/engine/denoise"
	"h3studio/engine/layout"
	"h3studio/engine/plan"
)

func init() {
	register(&command{name: "plan", summary: "predict rows, work and memory of a request (no weights needed)", run: runPlan})
}

// planPreset is the speed controls of one of the engine's quality presets
// (engine.Presets, the ones `generate --preset` and the studio offer), so
// that a plan describes what the same preset runs.
func planPreset(name string) (denoise.Controls, bool) {
	ps, ok := engine.Presets[engine.Preset(name)]
	if !ok {
		return denoise.Controls{}, false
	}
	return denoise.Controls{
		Steps: ps.Steps, Reuse: ps.Reuse, CoreReuse: ps.CoreReuse,
		Layers: int(math.Ceil(ps.LayersFraction * engine.MaxLayers)),
	}, true
}

// presetNames lists the engine's presets in a stable order.
func presetNames() string {
	names := make([]string, 0, len(engine.Presets))
	for p := range engine.Presets {
		names = append(names, string(p))
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

func runPlan(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("plan", stderr,
		"usage: h3studio plan [flags]",
		"Runs the model code shape-only over the released configuration (no weights) and prints,",
		"per component: rows, work and weight bytes read per evaluation, and the peak tracked",
		"storage with every weight resident and with weights streamed.",
	)
	canvas := fs.String("canvas", "864x480", "output (or render) canvas `WxH`, multiples of 32")
	frames := fs.Int("frames", plan.DefaultFrames, "frames (rounded up to 17n+5)")
	preset := fs.String("preset", "default", "speed preset, as generate --preset: "+presetNames())
	steps := fs.Int("steps", 0, "denoising passes (overrides the preset)")
	layers := fs.Int("layers", 0, "active DiT blocks, 35..50 (overrides the preset)")
	reuse := fs.Int("reuse", 0, "velocity reuse interval 1..3 (overrides the preset)")
	coreReuse := fs.Int("core-reuse", 0, "core residual reuse interval 1..6 (overrides the preset)")
	tokenReduction := fs.Bool("token-reduction", false, "pool horizontal video tokens in the middle blocks")
	keyframes := fs.Int("keyframes", 0, "FL2VA keyframes (0, 1 or 2)")
	textRows := fs.Int("text-rows", plan.DefaultTextRows, "text rows (prompt tokens)")
	memory := fs.String("memory", "", "print only one residency mode: resident or streaming (default both)")
	var loras []engine.LoRA
	fs.Func("lora", "count a LoRA's low-rank branch: PATH[:STRENGTH] (repeatable)", func(v string) error {
		l, err := engine.ParseLoRA(v)
		loras = append(loras, l)
		return err
	})
	only := fs.String("component", "", "comma-separated components to plan (default all: "+strings.Join(plan.Components(), ", ")+")")
	mf := addMemoryFlags(fs) // cmd_plan_memory.go
	if !parseFlags(fs, args, func() bool { return fs.NArg() == 0 }) {
		return 2
	}
	c, err := parseCanvas(*canvas)
	if err != nil {
		fmt.Fprintln(stderr, "h3studio plan:", err)
		return 2
	}
	ctl, ok := planPreset(*preset)
	if !ok {
		fmt.Fprintf(stderr, "h3studio plan: unknown preset %q (allowed: %s)\n", *preset, presetNames())
		return 2
	}
	// 0 would silently mean the default to plan.Query.
	if *frames < 1 || *textRows < 1 {
		fmt.Fprintf(stderr, "h3studio plan: -frames and -text-rows must be positive (have %d, %d)\n", *frames, *textRows)
		return 2
	}
	for _, o := range []struct {
		v   int
		dst *int
	}{{*steps, &ctl.Steps}, {*layers, &ctl.Layers}, {*reuse, &ctl.Reuse}, {*coreReuse, &ctl.CoreReuse}} {
		if o.v != 0 {
			*o.dst = o.v
		}
	}
	if *reuse > 1 && *coreReuse == 0 {
		ctl.CoreReuse = 1
	}
	if *coreReuse > 1 && *reuse == 0 {
		ctl.Reuse = 1
	}
	ctl.TokenReduction = ctl.TokenReduction || *tokenReduction
	switch *memory {
	case "", "resident", "streaming":
	default:
		fmt.Fprintf(stderr, "h3studio plan: -memory must be resident or streaming, have %q\n", *memory)
		return 2
	}
	q := plan.Query{Canvas: c, Frames: *frames, Keyframes: *keyframes, TextRows: *textRows, Controls: ctl, LoRAs: loras}
	if code, done := mf.run(q, stdout, stderr); done {
		return code
	}
	if planQuery != nil {
		q, planQuery = *planQuery, nil
	}
	var names []string
	if *only != "" {
		names = strings.Split(*only, ",")
	}
	ests, err := plan.Run(q, names...)
	if err != nil {
		fmt.Fprintln(stderr, "h3studio plan:", err)
		return 2
	}
	nq, _ := q.Normalize()
	n := nq.Controls
	fmt.Fprintf(stdout, "request: %v, %d frames, %d text rows, %d keyframes; steps %d, layers %d, reuse %d, core-reuse %d, token reduction %v\n",
		nq.Canvas, nq.Frames, nq.TextRows, nq.Keyframes, n.Steps, n.Layers, n.Reuse, n.CoreReuse, n.TokenReduction)
	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', tabwriter.AlignRight)
	head := "component\trows\tevals\tTFLOP/eval\tweights read/eval\tTFLOP total\t"
	if *memory != "streaming" {
		head += "resident peak (weights + act.)\t"
	}
	if *memory != "resident" {
		head += "streaming peak (weights + act.)\t"
	}
	fmt.Fprintln(tw, head)
	for _, e := range ests {
		line := fmt.Sprintf("%s\t%d\t%d\t%.2f\t%s\t%.1f\t", e.Component, e.Rows, e.Evaluations, e.FLOPs/1e12, fmtGiB(int64(e.WeightBytes)), e.TotalFLOPs/1e12)
		if *memory != "streaming" {
			line += storage(e.Resident) + "\t"
		}
		if *memory != "resident" {
			line += storage(e.Streaming) + "\t"
		}
		fmt.Fprintln(tw, line)
	}
	tw.Flush()
	for _, e := range ests {
		for _, note := range e.Notes {
			fmt.Fprintf(stdout, "%s: %s\n", e.Component, note)
		}
	}
	return 0
}

func fmtGiB(b int64) string { return fmt.Sprintf("%.2f GiB", float64(b)/(1<<30)) }

func storage(s plan.Storage) string {
	return fmt.Sprintf("%s (%s + %s)", fmtGiB(s.Peak), fmtGiB(s.Weights), fmtGiB(s.Activations))
}

func parseCanvas(s string) (layout.Canvas, error) {
	w, h, ok := strings.Cut(strings.ToLower(s), "x")
	if !ok {
		return layout.Canvas{}, fmt.Errorf("canvas %q: want WIDTHxHEIGHT", s)
	}
	wi, err1 := strconv.Atoi(w)
	hi, err2 := strconv.Atoi(h)
	if err1 != nil || err2 != nil {
		return layout.Canvas{}, fmt.Errorf("canvas %q: want WIDTHxHEIGHT", s)
	}
	c := layout.Canvas{Width: wi, Height: hi}
	return c, c.Validate()
}
