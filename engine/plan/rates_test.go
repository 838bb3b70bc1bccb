package plan

import (
	"testing"
	"time"
)

// TestETAGroundedOnEnoughWork: a FLOP phase never run is predicted only
// from a rate measured over enough work. The demo's 5-ms text phase (about
// a million FLOPs, dominated by overheads) extrapolated to the denoising
// loop and the decoders (tens of billions) would predict the generation
// 10× too long, so the ETA stays unknown until the first denoising step
// has measured the loop, and then uses it.
func TestETAGroundedOnEnoughWork(t *testing.T) {
	w := Work[phase]{"text": 1e6, "denoise": 12e9, "video-decode": 9e9, "audio-decode": 3e9, "export": 39}
	r := NewRates(testPhases)
	e := NewProgress(r, w)
	if d := r.Total(w); d != 0 {
		t.Errorf("nothing measured: total %v, want unknown", d)
	}
	e.Observe("text", 5*time.Millisecond, 1e6) // 5 s per GFLOP
	if d := e.Remaining("denoise", 0, 0, 3); d != 0 {
		t.Errorf("denoise 0/3 after only the text phase: ETA %v, want unknown (24 GFLOP from 1 MFLOP)", d)
	}
	if d := r.Total(w); d != 0 {
		t.Errorf("only the text phase measured: total %v, want unknown", d)
	}
	// One of three steps took 1 s (4 GFLOP: 0.25 s/GFLOP): two more steps
	// (2 s) and the decoders at that rate (3 s).
	d := e.Remaining("denoise", time.Second, 1, 3)
	if d < 4900*time.Millisecond || d > 5100*time.Millisecond {
		t.Errorf("denoise 1/3 after 1 s: ETA %v, want about 5 s", d)
	}
	// Every phase measured: each predicts itself.
	e.Observe("denoise", 3*time.Second, 12e9)
	e.Observe("video-decode", 2*time.Second, 9e9)
	e.Observe("audio-decode", 4*time.Second, 3e9)
	e.Observe("export", 10*time.Millisecond, 39)
	if d := e.Remaining("video-decode", 0, 0, 2); d < 5999*time.Millisecond || d > 6011*time.Millisecond {
		t.Errorf("video decode 0/2 with every phase measured: ETA %v, want 6.01 s", d)
	}
}

type phase string

var testPhases = Phases[phase]{
	Order: []phase{"load", "references", "text", "denoise", "video-decode", "audio-decode", "export"},
	FLOPs: map[phase]bool{"text": true, "denoise": true, "video-decode": true, "audio-decode": true},
}
