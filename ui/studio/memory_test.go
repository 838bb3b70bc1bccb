package studio_test

import (
	"path/filepath"
	"strings"
	"testing"

	"h3studio/engine"
	"h3studio/ui/internal/uitest"
	"h3studio/ui/studio"
	"h3studio/ui/studio/fakeengine"
)

// memoryStudio opens a studio over a fake engine whose device has budget
// bytes for a take (0: unknown) and plans the default draft.
func memoryStudio(t *testing.T, budget int64) (*studio.Studio, *uitest.Queue) {
	t.Helper()
	dir := t.TempDir()
	lib, _ := studio.OpenLibrary(filepath.Join(dir, "lib"), nil)
	x := &uitest.Queue{}
	s, err := studio.New(studio.Options{Engine: fakeengine.New(fakeengine.Options{MemoryBudget: budget}), Library: lib, Go: x.Go})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	s.Model().Use(dir)
	s.Compose().SetPrompt("A fox.")
	x.Drain()
	return s, x
}

func swapWarning(sn studio.Snapshot) *studio.Problem {
	for i, p := range sn.Problems {
		if p.Severity == studio.Warning && strings.Contains(p.Message, "would swap") {
			return &sn.Problems[i]
		}
	}
	return nil
}

// TestMemoryModeShownAndSwapWarned: the plan line shows the mode the
// engine chose and why, under the quality floor the settings carry to the
// request; a take whose predicted peak exceeds the device's budget is
// warned about before it starts (and can still be generated).
func TestMemoryModeShownAndSwapWarned(t *testing.T) {
	s, _ := memoryStudio(t, 0)
	sn := s.Snapshot()
	if sn.Plan == nil || sn.Plan.PeakBytes <= 0 {
		t.Fatalf("no plan: %+v", sn.Plan)
	}
	resident := sn.Plan.PeakBytes

	s, x := memoryStudio(t, resident*7/10)
	sn = s.Snapshot()
	line := studio.MemoryLine(sn.Plan, sn.Draft.Settings)
	if sn.Plan.Memory != engine.MemoryResidentInt4 || !strings.Contains(line, "resident-int4 (chosen automatically, Balanced)") ||
		!strings.Contains(line, "resident would not fit") || !strings.Contains(line, "this Mac's GPU can use") {
		t.Errorf("balanced: mode %q, line %q", sn.Plan.Memory, line)
	}
	if w := swapWarning(sn); w != nil {
		t.Errorf("a take that fits is warned: %+v", w)
	}

	s.Compose().SetMemoryQuality(engine.BestQuality)
	x.Drain()
	sn = s.Snapshot()
	if line := studio.MemoryLine(sn.Plan, sn.Draft.Settings); sn.Plan.Memory != engine.MemoryStreaming || !strings.Contains(line, "Best quality") {
		t.Errorf("best quality: mode %q, line %q", sn.Plan.Memory, line)
	}
	if q := sn.Draft.Settings.MemoryQuality; q != engine.BestQuality || studio.MemoryQualityOf(q).Label != "Best quality" {
		t.Errorf("settings keep floor %q", q)
	}

	s.Compose().SetMemory(engine.MemoryResident)
	x.Drain()
	sn = s.Snapshot()
	w := swapWarning(sn)
	if !studio.WouldSwap(sn.Plan) || w == nil || !strings.Contains(w.Fix, "Automatic") || !sn.CanGenerate {
		t.Errorf("explicit resident over the budget: swap %v, warning %+v, can generate %v", studio.WouldSwap(sn.Plan), w, sn.CanGenerate)
	}
	if line := studio.MemoryLine(sn.Plan, sn.Draft.Settings); strings.Contains(line, "automatically") {
		t.Errorf("explicit mode's line %q", line)
	}
}

// TestTakeRecordsMemoryMode: a take made under Automatic records the mode
// the engine chose for it, why, and the peak predicted for that mode,
// beside the setting (Automatic) it was made with.
func TestTakeRecordsMemoryMode(t *testing.T) {
	s, x := memoryStudio(t, 0)
	s, x = memoryStudio(t, s.Snapshot().Plan.PeakBytes*7/10)
	sn := s.Snapshot()
	if sn.Plan.Memory != engine.MemoryResidentInt4 {
		t.Fatalf("the plan chose %q", sn.Plan.Memory)
	}
	if _, err := s.Queue().Generate(); err != nil {
		t.Fatal(err)
	}
	var tk studio.Take
	sn = waitState(t, "the take", s, x, nil, func(sn studio.Snapshot) bool {
		if len(sn.Takes) == 1 {
			tk = sn.Takes[0]
		}
		return len(sn.Takes) == 1
	})
	m := tk.Meta
	if m.Settings.Memory != engine.MemoryAuto || m.Memory != engine.MemoryResidentInt4 || !strings.Contains(m.MemoryWhy, "resident would not fit") || m.PredictedPeakBytes <= 0 {
		t.Errorf("take records setting %q, mode %q (%q), predicted peak %d", m.Settings.Memory, m.Memory, m.MemoryWhy, m.PredictedPeakBytes)
	}
}
