package main

import (
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"h3studio/engine/compute"
	"h3studio/engine/plan"
	"h3studio/engine/quant"
)

// planMemoryFlags are plan's memory-mode flags: --quant, --device-memory,
// --working-set, --quality and --json.
type planMemoryFlags struct {
	quant, deviceMemory, workingSet, quality string
	json                                     bool
}

func addMemoryFlags(fs *flag.FlagSet) *planMemoryFlags {
	f := &planMemoryFlags{}
	fs.StringVar(&f.quant, "quant", "", "int8 or int4: plan the DiT's block weights quantized (bf16: unquantized)")
	fs.StringVar(&f.deviceMemory, "device-memory", "", "choose the memory mode for a Mac with `BYTES` of memory (suffixes GB, GiB allowed)")
	fs.StringVar(&f.workingSet, "working-set", "", "the GPU's recommended working set in `BYTES` (default: 2/3 of memory up to 32 GiB, 3/4 above)")
	fs.StringVar(&f.quality, "quality", "balanced", "quality floor of the automatic choice: best, balanced or fastest")
	fs.BoolVar(&f.json, "json", false, "print the plan as one JSON document")
	return f
}

// parseBytes reads 17179869184, 16GiB or 16GB.
func parseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range []struct {
		suf string
		m   int64
	}{{"GiB", 1 << 30}, {"GB", 1e9}, {"MiB", 1 << 20}, {"MB", 1e6}} {
		if strings.HasSuffix(t, u.suf) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suf)), u.m
			break
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("%q: want a positive number of bytes (optionally GB or GiB)", s)
	}
	return int64(v * float64(mult)), nil
}

type jsonStorage struct {
	PeakBytes       int64 `json:"peak_bytes"`
	WeightBytes     int64 `json:"weight_bytes"`
	ActivationBytes int64 `json:"activation_bytes"`
}

func jstore(s plan.Storage) jsonStorage { return jsonStorage{s.Peak, s.Weights, s.Activations} }

type jsonComponent struct {
	Component      string      `json:"component"`
	Rows           int         `json:"rows"`
	RowsUnit       string      `json:"rows_unit"`
	Evaluations    int         `json:"evaluations"`
	FLOPsPerEval   float64     `json:"flops_per_eval"`
	WeightsReadPer float64     `json:"weight_bytes_read_per_eval"`
	TotalFLOPs     float64     `json:"total_flops"`
	Resident       jsonStorage `json:"resident"`
	Streaming      jsonStorage `json:"streaming"`
	Notes          []string    `json:"notes,omitempty"`
}

type jsonPhase struct {
	Phase     string `json:"phase"`
	Component string `json:"component"`
	Residency string `json:"residency"`
	jsonStorage
	// Held is the other components' storage the phase holds (a mode that
	// keeps them loaded, plan.Phase.Held): the phase's peak is
	// peak_bytes plus it.
	Held int64 `json:"held_by_other_components_bytes"`
}

type jsonMode struct {
	Mode               string      `json:"mode"`
	Fits               bool        `json:"fits"`
	EndToEndPeakBytes  int64       `json:"end_to_end_peak_bytes"`
	DiT                jsonStorage `json:"dit"`
	Phases             []jsonPhase `json:"phases"`
	DiTStreamingBlocks bool        `json:"dit_streamed"`
}

func jmode(mp plan.ModePlan) jsonMode {
	m := jsonMode{Mode: mp.Mode.Name, Fits: mp.Fits, EndToEndPeakBytes: mp.Peak, DiT: jstore(mp.DiT), DiTStreamingBlocks: mp.Mode.Residency == compute.Streaming}
	for _, p := range mp.Phases {
		m.Phases = append(m.Phases, jsonPhase{p.Name, p.Component, p.Residency.String(), jstore(p.Storage), p.Held})
	}
	return m
}

// run handles the memory flags: it returns done when it printed the plan
// (or an error) itself.
func (f *planMemoryFlags) run(q plan.Query, stdout, stderr io.Writer) (int, bool) {
	qf, err := quant.Parse(f.quant)
	if err != nil {
		fmt.Fprintln(stderr, "h3studio plan:", err)
		return 2, true
	}
	q.Quant = qf
	floor, err := plan.ParseQualityFloor(f.quality)
	if err != nil {
		fmt.Fprintln(stderr, "h3studio plan:", err)
		return 2, true
	}
	var restrict *compute.QuantFormat
	if f.quant != "" {
		restrict = &qf
	}
	if !f.json && f.deviceMemory == "" {
		if qf.Bits != 0 {
			// The table below then describes the quantized DiT.
			planQuery = &q
		}
		return 0, false
	}
	out := map[string]any{}
	nq, err := q.Normalize()
	if err != nil {
		fmt.Fprintln(stderr, "h3studio plan:", err)
		return 2, true
	}
	n := nq.Controls
	out["request"] = map[string]any{"width": nq.Canvas.Width, "height": nq.Canvas.Height, "frames": nq.Frames, "text_rows": nq.TextRows,
		"keyframes": nq.Keyframes, "steps": n.Steps, "layers": n.Layers, "reuse": n.Reuse, "core_reuse": n.CoreReuse, "token_reduction": n.TokenReduction}
	if f.quant != "" {
		out["quant"] = quant.Name(qf)
		if qf.Bits == 0 {
			out["quant"] = "bf16"
		}
	}
	ests, err := plan.Run(q)
	if err != nil {
		fmt.Fprintln(stderr, "h3studio plan:", err)
		return 2, true
	}
	var comps []jsonComponent
	for _, e := range ests {
		comps = append(comps, jsonComponent{e.Component, e.Rows, e.RowsUnit, e.Evaluations, e.FLOPs, e.WeightBytes, e.TotalFLOPs, jstore(e.Resident), jstore(e.Streaming), e.Notes})
	}
	out["components"] = comps
	var choice plan.Choice
	if f.deviceMemory != "" {
		mem, err := parseBytes(f.deviceMemory)
		if err != nil {
			fmt.Fprintln(stderr, "h3studio plan: --device-memory", err)
			return 2, true
		}
		var ws int64
		if f.workingSet != "" {
			if ws, err = parseBytes(f.workingSet); err != nil {
				fmt.Fprintln(stderr, "h3studio plan: --working-set", err)
				return 2, true
			}
		}
		if choice, err = plan.Choose(q, mem, ws, floor, restrict); err != nil {
			fmt.Fprintln(stderr, "h3studio plan:", err)
			return 2, true
		}
		out["device_memory_bytes"] = choice.DeviceBytes
		out["working_set_bytes"] = choice.WorkingSetBytes
		out["budget_bytes"] = choice.BudgetBytes
		out["quality_floor"] = string(choice.Floor)
		out["mode"] = choice.Chosen.Mode.Name
		out["end_to_end_peak_bytes"] = choice.Chosen.Peak
		out["fits"] = choice.Chosen.Fits
		out["why"] = choice.Why
		var modes []jsonMode
		for _, mp := range choice.Modes {
			modes = append(modes, jmode(mp))
		}
		out["modes"] = modes
	}
	if f.json {
		if err := printJSON(stdout, out); err != nil {
			fmt.Fprintln(stderr, "h3studio plan:", err)
			return 1, true
		}
		return 0, true
	}
	fmt.Fprintf(stdout, "device %s, working set %s, budget %s, quality floor %s\n", fmtGiB(choice.DeviceBytes), fmtGiB(choice.WorkingSetBytes), fmtGiB(choice.BudgetBytes), choice.Floor)
	for _, mp := range choice.Modes {
		mark := " "
		if mp.Mode == choice.Chosen.Mode {
			mark = "*"
		}
		fmt.Fprintf(stdout, "%s %-15s end-to-end peak %s (DiT %s weights), fits %v\n", mark, mp.Mode.Name, fmtGiB(mp.Peak), fmtGiB(mp.DiT.Weights), mp.Fits)
	}
	fmt.Fprintf(stdout, "mode: %s — %s\n", choice.Chosen.Mode.Name, choice.Why)
	return 0, true
}

// planQuery, when set by the memory flags, replaces the table's query (a
// --quant plan without --device-memory).
var planQuery *plan.Query
