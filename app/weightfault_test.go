//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"h3studio/engine"
	"h3studio/ui/studio"
)

// TestStudioSurvivesWeightsTruncatedUnderATake: the model's weight files are
// truncated while a studio take runs on the real engine (an external disk
// dropping out, a tool rewriting the shards). The take fails with a message
// naming a weight file, the studio goes on (the draft intact, a notice shown)
// and answers the next take with an error rather than a crash.
func TestStudioSurvivesWeightsTruncatedUnderATake(t *testing.T) {
	s, until := demoStudio(t)
	sn := s.Snapshot()
	shards, _ := filepath.Glob(filepath.Join(sn.Model.Info.Dir, "*", "*", "*.safetensors"))
	more, _ := filepath.Glob(filepath.Join(sn.Model.Info.Dir, "*", "*", "*", "*.safetensors"))
	shards = append(shards, more...)
	if len(shards) == 0 {
		t.Fatalf("no weight files under %s", sn.Model.Info.Dir)
	}
	st := studio.DemoSettings()
	st.Speed.Steps, st.Speed.Reuse = 30, 1 // a denoise long enough to truncate the weights inside it
	s.Compose().SetSettings(st)
	const prompt = "A red fox walks through fresh snow."
	s.Compose().SetPrompt(prompt)
	until("the plan", func(sn studio.Snapshot) bool { return sn.Plan != nil && sn.CanGenerate })
	id, err := s.Queue().Generate()
	if err != nil {
		t.Fatal(err)
	}
	job := func(sn studio.Snapshot) (studio.JobView, bool) {
		for _, j := range sn.Jobs {
			if j.ID == id {
				return j, true
			}
		}
		return studio.JobView{}, false
	}
	until("the take denoising", func(sn studio.Snapshot) bool {
		j, ok := job(sn)
		return ok && (j.Current == engine.PhaseDenoise || (j.State != studio.JobQueued && j.State != studio.JobRunning))
	})
	for _, p := range shards {
		if err := os.Truncate(p, 4096); err != nil {
			t.Fatal(err)
		}
	}
	sn = until("the take's end", func(sn studio.Snapshot) bool {
		j, ok := job(sn)
		return ok && j.State != studio.JobQueued && j.State != studio.JobRunning
	})
	j, _ := job(sn)
	if j.State != studio.JobFailed || !strings.Contains(j.Message, ".safetensors") {
		t.Fatalf("the take ended %v: %q, want a failure naming the weight file", j.State, j.Message)
	}
	if sn.Draft.Prompt != prompt {
		t.Errorf("the draft's prompt is %q after the failure", sn.Draft.Prompt)
	}
	named := false
	for _, n := range sn.Notices {
		named = named || strings.Contains(n.Text, ".safetensors")
	}
	if !named {
		t.Errorf("no notice names the weight file: %+v", sn.Notices)
	}
	// The studio is still there: the next take is answered, not crashed.
	id, err = s.Queue().Generate()
	if err == nil {
		until("the second take's end", func(sn studio.Snapshot) bool {
			j, ok := job(sn)
			return ok && j.State != studio.JobQueued && j.State != studio.JobRunning
		})
		if j, _ := job(s.Snapshot()); j.State == studio.JobDone {
			t.Error("a take on the truncated weights succeeded")
		}
	}
}
