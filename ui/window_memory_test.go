package ui

import (
	"strings"
	"testing"

	"h3studio/engine"
	"h3studio/ui/studio"
	"h3studio/ui/studio/fakeengine"
)

// TestMemoryFloorThroughTheWindow: Compose ▸ Memory carries the quality
// floor to the engine's plan, shows the mode the engine chose and why, and
// warns inline before a take that would swap.
func TestMemoryFloorThroughTheWindow(t *testing.T) {
	h := newHarness(t, fakeengine.Options{}, false)
	c := h.w.compose
	h.s.SetPrompt("A fox.")
	sn := h.settle(func(sn studio.Snapshot) bool { return sn.Plan != nil && sn.Plan.PeakBytes > 0 })
	h.eng.Gen.Opts.MemoryBudget = sn.Plan.PeakBytes * 7 / 10 // resident no longer fits

	c.memQualitySel.SetSelected("Best quality")
	sn = h.settle(func(sn studio.Snapshot) bool {
		return sn.Plan != nil && sn.Plan.Request.Quality == engine.BestQuality && sn.Plan.Memory == engine.MemoryStreaming
	})
	if !strings.Contains(c.memoryNote.Text, "streaming (chosen automatically, Best quality)") {
		t.Errorf("best quality: memory note %q", c.memoryNote.Text)
	}
	c.memQualitySel.SetSelected("Balanced")
	sn = h.settle(func(sn studio.Snapshot) bool { return sn.Plan != nil && sn.Plan.Memory == engine.MemoryResidentInt4 })
	if n := c.memoryNote.Text; !strings.Contains(n, "resident-int4 (chosen automatically, Balanced)") || !strings.Contains(n, "resident would not fit") {
		t.Errorf("balanced: memory note %q", n)
	}
	if h.w.status.memory.Text != "Memory mode: automatic (resident-int4)" {
		t.Errorf("status bar %q", h.w.status.memory.Text)
	}
	if labelsContain(c.settingsMsgs, "would swap") {
		t.Error("a take that fits is warned")
	}

	c.memorySel.SetSelected("Resident — fastest, most memory")
	sn = h.settle(func(sn studio.Snapshot) bool { return sn.Plan != nil && sn.Plan.Memory == engine.MemoryResident })
	if !labelsContain(c.settingsMsgs, "would swap") || c.generate.Disabled() || !c.memQualitySel.Disabled() {
		t.Errorf("explicit resident over the budget: swap warning shown %v, generate disabled %v, floor disabled %v",
			labelsContain(c.settingsMsgs, "would swap"), c.generate.Disabled(), c.memQualitySel.Disabled())
	}
}
