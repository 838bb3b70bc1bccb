//go:build unix

package engine_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"h3studio/engine"
	"h3studio/engine/compute/cpu"
)

// TestWeightsTruncatedUnderARun: the transformer's shards are truncated
// while the run is denoising (an external disk dropping out, a tool
// rewriting them). The run ends with an error naming a weight file, its
// output is aborted, the process survives, and the same session refuses the
// next request clearly instead of faulting again.
func TestWeightsTruncatedUnderARun(t *testing.T) {
	model := ownDemoModel(t)
	shards, _ := filepath.Glob(filepath.Join(model, "FL2VA", "transformer", "*.safetensors"))
	if len(shards) == 0 {
		t.Fatal("the demo checkpoint has no transformer shards")
	}
	s, err := engine.Open(engine.Options{ModelDir: model, Backend: cpu.New(cpu.Options{Threads: 2})})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	req := engine.Request{Prompt: "a lamp", Width: 64, Height: 64, Frames: 22, Steps: 3, Seed: 1, SeedSet: true}
	truncated := false
	sink := &recSink{}
	_, err = s.Generate(context.Background(), req, sink, func(e engine.Event) {
		if e.Phase == engine.PhaseDenoise && e.Done >= 1 && !truncated {
			truncated = true
			for _, p := range shards {
				if err := os.Truncate(p, 4096); err != nil {
					t.Error(err)
				}
			}
		}
	})
	if !truncated {
		t.Fatal("the run never reported a denoising step")
	}
	if err == nil || !engine.IsWeightFault(err) || !strings.Contains(err.Error(), ".safetensors") {
		t.Fatalf("got %v, want a weight-file fault naming the file", err)
	}
	if sink.aborts == 0 || sink.closes != 0 {
		t.Errorf("the output was not aborted (%d aborts, %d closes)", sink.aborts, sink.closes)
	}
	if _, err := s.Generate(context.Background(), req, &recSink{}, nil); err == nil {
		t.Error("a second run on the truncated weights succeeded")
	}
}
