package studio

import (
	"fmt"

	"h3studio/engine"
)

// MemoryQuality is one choice of the automatic memory mode's quality floor
// (Settings ▸ Memory): how much weight precision the engine may trade for
// speed to fit this Mac.
type MemoryQuality struct {
	Floor engine.QualityFloor
	Label string
	Note  string
}

// MemoryQualities lists the floors, the default (Balanced) first.
var MemoryQualities = []MemoryQuality{
	{engine.Balanced, "Balanced", "Resident in the most bits that fit (BF16, int8, int4), else streamed from disk."},
	{engine.BestQuality, "Best quality", "BF16 weights only: resident when they fit, else streamed from disk (slower)."},
	{engine.FastestThatFit, "Fastest that fits", "The fastest mode that fits, quantized streaming included."},
}

// MemoryQualityOf returns the floor's entry (Balanced for "").
func MemoryQualityOf(f engine.QualityFloor) MemoryQuality {
	for _, q := range MemoryQualities {
		if q.Floor == f {
			return q
		}
	}
	return MemoryQualities[0]
}

// SetMemoryQuality sets the automatic memory mode's quality floor.
func (c Compose) SetMemoryQuality(f engine.QualityFloor) {
	c.s.editDraft(func(d *Draft) { d.Settings.MemoryQuality = f })
}

// MemoryLine is the plan line before a take: the memory mode the engine
// will run in, whether it chose it, its predicted peak against the
// device's budget, and why ("" without a plan).
func MemoryLine(p *engine.Plan, st Settings) string {
	if p == nil || p.Memory == "" {
		return ""
	}
	line := "Memory: " + string(p.Memory)
	if st.Memory == engine.MemoryAuto {
		line += " (chosen automatically, " + MemoryQualityOf(st.MemoryQuality).Label + ")"
	}
	if p.PeakBytes > 0 {
		line += fmt.Sprintf(" · peak about %s", gb(p.PeakBytes))
		if p.MemoryBudget > 0 {
			line += fmt.Sprintf(" of the %s this Mac's GPU can use", gb(p.MemoryBudget))
		}
	}
	if st.Memory == engine.MemoryAuto && p.MemoryWhy != "" {
		line += ". " + p.MemoryWhy + "."
	}
	return line
}

// WouldSwap reports whether the plan's predicted peak exceeds the device's
// budget: the take would page to disk and run far slower, or fail.
func WouldSwap(p *engine.Plan) bool {
	return p != nil && p.MemoryBudget > 0 && p.PeakBytes > p.MemoryBudget
}

// swapProblem is the warning before a take that would swap.
func swapProblem(p *engine.Plan, st Settings) Problem {
	fix := "Choose a smaller canvas or a shorter length."
	switch {
	case st.Memory != engine.MemoryAuto:
		fix = "Choose Automatic under Memory, a smaller canvas, or a shorter length."
	case st.MemoryQuality == engine.BestQuality:
		fix = "Choose Balanced or Fastest that fits under Memory, a smaller canvas, or a shorter length."
	}
	return Problem{Where: AtSettings, Index: -1, Severity: Warning,
		Message: fmt.Sprintf("This take needs about %s at its peak in %s mode, more than the %s this Mac's GPU can use: it would swap (far slower) or run out of memory.",
			gb(p.PeakBytes), memoryWord(p.Memory), gb(p.MemoryBudget)),
		Fix: fix}
}

func gb(n int64) string { return fmt.Sprintf("%.1f GB", float64(n)/1e9) }
