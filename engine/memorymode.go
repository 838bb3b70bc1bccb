package engine

import (
	"fmt"
	"slices"

	"h3studio/engine/compute"
	"h3studio/engine/plan"
)

// The memory mode of a plan: explicit in the request (with the session's
// Options.Quant applied to a BF16 mode), or chosen automatically by
// plan.Pick — the choice `h3studio plan --device-memory` makes — over this
// session's own predictions of each candidate mode on this device.

// mode is m as engine/plan knows it (auto: resident).
func modeOf(m MemoryMode) plan.Mode {
	pm, err := plan.ParseMode(string(m))
	if err != nil {
		pm, _ = plan.ParseMode(string(MemoryResident))
	}
	return pm
}

// modeResidency is how m holds the DiT's blocks and the text encoder's
// layers: kept bound, or streamed from disk.
func modeResidency(m MemoryMode) compute.Residency { return modeOf(m).Residency }

// quant is the format of the DiT's block weights in m (zero: BF16).
func modeQuant(m MemoryMode) compute.QuantFormat { return modeOf(m).Quant }

// memoryMode names a plan mode.
func memoryMode(m plan.Mode) MemoryMode { return MemoryMode(m.Name) }

// resolveMemory resolves p's memory mode and predicts the plan in it. An
// explicit mode wins (a BF16 one takes Options.Quant's format); auto tries
// the candidates of the request's quality floor (only those of
// Options.Quant's format when set) and lets plan.Pick choose against the
// device's budget (memoryBudget).
func (s *Session) resolveMemory(p *Plan) {
	r := p.Request
	q := s.opts.Quant
	var restrict *compute.QuantFormat
	if q.Bits > 0 {
		restrict = &q
	}
	if r.Memory != MemoryAuto {
		m := modeOf(r.Memory)
		if m.Quant.Bits == 0 && restrict != nil {
			m = plan.Mode{Residency: m.Residency, Quant: q}
			m, _ = plan.ParseMode(modeName(m))
		}
		p.Memory, p.MemoryWhy = memoryMode(m), "the memory mode was set explicitly"
		s.predict(p)
		return
	}
	floor := r.Quality
	if floor == "" {
		floor = s.opts.Quality
	}
	floor, _ = plan.ParseQualityFloor(string(floor))
	cands := plan.CandidateModes(floor, restrict)
	ws := s.workingSet()
	base := *p
	var mps []plan.ModePlan
	var preds []Plan
	for _, m := range cands {
		c := base
		c.Notes = slices.Clone(base.Notes)
		c.References = slices.Clone(base.References)
		c.Memory = memoryMode(m)
		s.predict(&c)
		if c.PeakBytes <= 0 || ws <= 0 {
			// No estimate or no known memory: the fastest candidate.
			c.MemoryWhy = "no memory estimate for this device: " + string(c.Memory) + ", the fastest mode the quality floor allows"
			*p = c
			return
		}
		mps = append(mps, plan.ModePlan{Mode: m, Peak: c.PeakBytes})
		preds = append(preds, c)
		if c.PeakBytes <= plan.Budget(ws) {
			break // Pick takes the first that fits: the slower modes need no prediction
		}
	}
	chosen, why := plan.Pick(mps, ws, floor, restrict)
	i := slices.IndexFunc(mps, func(mp plan.ModePlan) bool { return mp.Mode == chosen.Mode })
	*p = preds[i]
	p.MemoryWhy = why
	if i > 0 {
		p.Notes = append(p.Notes, fmt.Sprintf("memory mode %s: %s", p.Memory, why))
	}
}

// modeName is the name of a mode of m's residency and quantization.
func modeName(m plan.Mode) string {
	for _, x := range plan.Modes() {
		if x.Residency == m.Residency && x.Quant == m.Quant {
			return x.Name
		}
	}
	return string(MemoryResident)
}

// workingSet is the working set the device reports (Metal's
// recommendedMaxWorkingSetSize), else plan.DefaultWorkingSet of its memory
// (0: unknown).
func (s *Session) workingSet() int64 {
	d := s.opts.Backend.Device()
	return plan.WorkingSet(d.MemoryBytes, d.WorkingSetBytes)
}

// memoryBudget is the storage a generation may use: the working set less
// plan.Budget's headroom (0: unknown).
func (s *Session) memoryBudget() int64 {
	if ws := s.workingSet(); ws > 0 {
		return plan.Budget(ws)
	}
	return 0
}
