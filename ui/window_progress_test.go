package ui

import (
	"strings"
	"testing"

	"h3studio/engine"
	"h3studio/ui/studio"
	"h3studio/ui/studio/fakeengine"
)

// heldTake makes a window over an engine that does one unit of work per
// send on hold, with the demo settings and a prompt ready to generate;
// steps is the plan's number of denoiser forwards.
func heldTake(t *testing.T) (h *harness, hold chan struct{}, steps int) {
	t.Helper()
	hold = make(chan struct{})
	h = newHarness(t, fakeengine.Options{Hold: hold}, true)
	h.s.Compose().SetSettings(studio.DemoSettings())
	h.s.Compose().SetPrompt("A red fox walks through fresh snow.")
	sn := h.settle(func(sn studio.Snapshot) bool { return sn.CanGenerate && sn.Plan != nil })
	return h, hold, sn.Plan.Forwards
}

// TestProgressEveryPhase steps the fake engine one unit of work at a time
// and reads the progress panel: every phase has its row with n/N and a bar
// (denoising and the video decode included), the foot gives the elapsed
// time and the time left, the viewer shows the latest preview frame while
// denoising, and a second Generate queues behind the running take.
func TestProgressEveryPhase(t *testing.T) {
	h, hold, steps := heldTake(t)
	if steps < 4 {
		t.Fatalf("plan has %d forwards", steps)
	}
	if _, err := h.s.Queue().Generate(); err != nil {
		t.Fatal(err)
	}
	step := func(n int) {
		for i := 0; i < n; i++ {
			hold <- struct{}{}
		}
	}
	phase := func(p engine.Phase, done int) studio.Snapshot {
		t.Helper()
		return h.settle(func(sn studio.Snapshot) bool {
			if sn.Running == nil || sn.Running.Current != p {
				return false
			}
			for _, ph := range sn.Running.Phases {
				if ph.Phase == p {
					return ph.Done == done
				}
			}
			return false
		})
	}
	row := func(p engine.Phase) *phaseRow {
		t.Helper()
		r := h.w.progress.rows[p]
		if r == nil {
			t.Fatalf("no progress row for %s", p)
		}
		return r
	}

	// Loading (2 units) and the prompt (4), then 3 denoising steps.
	step(2 + 4 + 3)
	sn := phase(engine.PhaseDenoise, 3)
	d := row(engine.PhaseDenoise)
	if want := "3/" + itoa(steps); d.count.Text != want {
		t.Errorf("denoise row says %q, want %q", d.count.Text, want)
	}
	if v := d.bar.Value(); v <= 0 || v >= 1 {
		t.Errorf("denoise bar at %v", v)
	}
	if r := row(engine.PhaseText); r.count.Text != "4/4" || r.bar.Value() != 1 {
		t.Errorf("prompt row %q at %v", r.count.Text, r.bar.Value())
	}
	foot := h.w.progress.foot.Text
	if !strings.HasPrefix(foot, "Elapsed ") || !strings.Contains(foot, " left") || sn.Running.ETA <= 0 {
		t.Errorf("foot %q (ETA %v)", foot, sn.Running.ETA)
	}
	if sn.Viewer.Live == nil || !h.w.viewer.live || h.w.viewer.below.Visible() {
		t.Errorf("the viewer does not show the live preview (live %v)", sn.Viewer.Live != nil)
	}
	// Generate again: queued behind the running take.
	if _, err := h.s.Queue().Generate(); err != nil {
		t.Fatal(err)
	}
	h.settle(func(sn studio.Snapshot) bool { return sn.Queued == 1 })
	if !strings.Contains(h.w.progress.queue.Text, "1 more waiting") || !h.w.progress.clearQ.Visible() {
		t.Errorf("queue line %q", h.w.progress.queue.Text)
	}
	if !strings.Contains(h.w.compose.generate.Text, "queue") {
		t.Errorf("Generate says %q while a take runs", h.w.compose.generate.Text)
	}
	// Cancel All: the running take and the queued one stop, nothing is
	// saved, and the panel says so.
	h.s.Queue().CancelAll()
	sn = h.settle(func(sn studio.Snapshot) bool { return sn.Running == nil && sn.Queued == 0 })
	for _, j := range sn.Jobs {
		if j.State != studio.JobCancelled {
			t.Errorf("job %d ended %v", j.ID, j.State)
		}
	}
	if !strings.Contains(h.w.progress.last.Text, "was cancelled; nothing was saved") || len(sn.Takes) != 0 {
		t.Errorf("after Cancel All: %q, %d takes", h.w.progress.last.Text, len(sn.Takes))
	}
}

// TestProgressDecodePhase runs a take to the video decode and reads its row.
func TestProgressDecodePhase(t *testing.T) {
	h, hold, steps := heldTake(t)
	if _, err := h.s.Queue().Generate(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2+4+steps+2; i++ {
		hold <- struct{}{}
	}
	sn := h.settle(func(sn studio.Snapshot) bool {
		if sn.Running == nil || sn.Running.Current != engine.PhaseVideoDecode {
			return false
		}
		for _, ph := range sn.Running.Phases {
			if ph.Phase == engine.PhaseVideoDecode {
				return ph.Done == 2
			}
		}
		return false
	})
	r := h.w.progress.rows[engine.PhaseVideoDecode]
	if r == nil || r.count.Text != "2/4" || r.bar.Value() != 0.5 {
		t.Fatalf("video decode row %+v", r)
	}
	if dn := h.w.progress.rows[engine.PhaseDenoise]; dn.bar.Value() != 1 {
		t.Errorf("denoise bar at %v after denoising", dn.bar.Value())
	}
	if !strings.Contains(h.w.progress.foot.Text, " left") {
		t.Errorf("no time left while decoding: %q", h.w.progress.foot.Text)
	}
	// The stage keeps the last preview frame until the take is ready.
	if sn.Viewer.Live == nil || !h.w.viewer.live {
		t.Error("the stage dropped the last preview while decoding")
	}
	// Saving: the estimate has run out (the fake engine gives none), and the
	// foot says the take is finishing rather than "estimating".
	for i := 0; i < 2+2+3; i++ {
		hold <- struct{}{}
	}
	h.settle(func(sn studio.Snapshot) bool { return sn.Running != nil && sn.Running.Current == engine.PhaseExport })
	if foot := h.w.progress.foot.Text; strings.Contains(foot, "estimating") {
		t.Errorf("foot while saving: %q", foot)
	}
	go func() {
		for {
			select {
			case hold <- struct{}{}:
			case <-t.Context().Done():
				return
			}
		}
	}()
	sn = h.settle(func(sn studio.Snapshot) bool { return len(sn.Takes) == 1 && sn.Viewer.Clip != nil })
	if sn.Viewer.Live != nil || h.w.viewer.live || !h.w.viewer.below.Visible() {
		t.Error("the finished take does not replace the live preview")
	}
}
