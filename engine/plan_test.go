package engine_test

// Tests of Session.Plan: what it predicts before a take (rows, peak
// storage, what does not fit) and the time estimate from measured rates.

import (
	"context"
	"encoding/json"
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"h3studio/engine"
	"h3studio/engine/compute/cpu"
	"h3studio/engine/media"
)

// TestPlanOnDemo checks what Plan predicts without loading anything: rows,
// text rows, peak storage, and a time estimate only once the session has
// measured this device.
func TestPlanOnDemo(t *testing.T) {
	s := openSession(t)
	r := base("A red fox walks through fresh snow.", 1)
	p, err := s.Plan(r)
	if err != nil {
		t.Fatal(err)
	}
	if p.TextRows < 5 || p.Rows != p.TextRows+2*p.AudioLatents+p.LatentFrames*(64/32)*(64/32) {
		t.Errorf("rows %d, text rows %d", p.Rows, p.TextRows)
	}
	if p.PeakBytes <= 0 || p.Estimate != 0 {
		t.Errorf("peak %d, estimate %v before any measurement", p.PeakBytes, p.Estimate)
	}
	if c := s.Counters(); c.Loads != 0 {
		t.Errorf("Plan loaded %d components", c.Loads)
	}
	res, _ := generate(t, s, r)
	if res.PeakBytes <= 0 {
		t.Error("no measured peak")
	}
	p2, err := s.Plan(r)
	if err != nil || p2.Estimate <= 0 {
		t.Errorf("estimate after a generation: %v %v", p2.Estimate, err)
	}
	// Labels must name existing references.
	if _, err := s.Plan(base("<Picture 1> dances", 1)); err == nil || !engine.IsRequestError(err) || !strings.Contains(err.Error(), "<Picture 1>") {
		t.Errorf("an unknown label: %v", err)
	}
}

// TestEstimateCountsPreviews: the estimate of a take with per-step
// previews includes their decodes (it was the same as without them).
func TestEstimateCountsPreviews(t *testing.T) {
	s := openSession(t)
	r := base("a lamp", 1)
	generate(t, s, r) // the session measures its rates
	r.Steps = 8
	without, err := s.Plan(r)
	if err != nil {
		t.Fatal(err)
	}
	r.Preview = true
	with, err := s.Plan(r)
	if err != nil {
		t.Fatal(err)
	}
	if without.Estimate <= 0 || with.Estimate <= without.Estimate {
		t.Errorf("estimate without previews %v, with %v: the previews are not counted", without.Estimate, with.Estimate)
	}
}

// TestRatesFile: a session with a rates file leaves the throughputs it
// measured there, and a new session (a new process) on the same device and
// model estimates its first take's time from them before running anything;
// without the file, or with an unusable one, the estimate stays unknown
// (zero) and the file is rewritten after the next take.
func TestRatesFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cache", "rates.json")
	open := func() *engine.Session {
		t.Helper()
		s, err := engine.Open(engine.Options{ModelDir: demoModel(t), Backend: cpu.New(cpu.Options{}), RatesFile: path})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	r := base("A kettle on a stove, steam rising.", 3)
	estimate := func(s *engine.Session) engine.Plan {
		t.Helper()
		p, err := s.Plan(r)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	take := func(s *engine.Session) {
		t.Helper()
		if _, err := s.Generate(context.Background(), r, &media.MemorySink{}, nil); err != nil {
			t.Fatal(err)
		}
	}

	s1 := open()
	if p := estimate(s1); p.Estimate != 0 {
		t.Fatalf("a session that measured nothing estimates %v", p.Estimate)
	}
	take(s1)
	var f struct {
		Version int                        `json:"version"`
		Entries map[string]json.RawMessage `json:"entries"`
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no rates file after a take: %v", err)
	}
	if err := json.Unmarshal(b, &f); err != nil || f.Version != 1 || len(f.Entries) != 1 {
		t.Fatalf("rates file %s: %v", b, err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o644 {
		t.Errorf("rates file mode %v", st.Mode().Perm())
	}

	// A new session starts from the file: its first plan has an estimate.
	if p := estimate(open()); p.Estimate <= 0 {
		t.Errorf("a new session on the same device and model estimates %v, want the measured time", p.Estimate)
	}

	// An entry for another model (its key changed) is not used.
	other := strings.Replace(string(b), "MiniMax-H3", "Another-Model", 1)
	if err := os.WriteFile(path, []byte(other), 0o644); err != nil {
		t.Fatal(err)
	}
	if p := estimate(open()); p.Estimate != 0 {
		t.Errorf("rates of another model gave the estimate %v", p.Estimate)
	}

	// A damaged file gives no head start and no error; the next take
	// rewrites it.
	if err := os.WriteFile(path, []byte("{\"version\": 1, \"entries\": {"), 0o644); err != nil {
		t.Fatal(err)
	}
	s4 := open()
	if p := estimate(s4); p.Estimate != 0 {
		t.Errorf("a damaged rates file gave the estimate %v", p.Estimate)
	}
	take(s4)
	if p := estimate(open()); p.Estimate <= 0 {
		t.Errorf("after the damaged file was rewritten: estimate %v", p.Estimate)
	}
	// Implausible values (negative, zero) are not a head start either.
	var raw map[string]any
	b, _ = os.ReadFile(path)
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	for _, e := range raw["entries"].(map[string]any) {
		rec := e.(map[string]any)
		for ph := range rec["seconds_per_unit"].(map[string]any) {
			rec["seconds_per_unit"].(map[string]any)[ph] = -1.0
		}
		rec["flop_wall_seconds"] = 0.0
	}
	b, _ = json.Marshal(raw)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if p := estimate(open()); p.Estimate != 0 {
		t.Errorf("negative rates gave the estimate %v", p.Estimate)
	}
}

// BenchmarkPeakVsPlan runs the demo checkpoint in each memory mode, each
// in a fresh session on a fresh CPU backend (its weights loaded by the
// take), and compares the measured end-to-end peak (Result.PeakBytes: the
// largest phase's footprint, allocations and mapped checkpoint views) with
// the plan's prediction of it for that mode (Plan.DevicePeakBytes: the
// decoders' host buffers left out, the backend does not track them). It
// reports measured/predicted as a metric and fails outside issue 18's
// 10 %; the log also gives each phase's peak, planned and measured. Run it
// with
// go test ./engine -run '^$' -bench PeakVsPlan -benchtime 1x.
func BenchmarkPeakVsPlan(b *testing.B) {
	for _, size := range []int{64, 128} {
		for _, m := range []engine.MemoryMode{engine.MemoryResident, engine.MemoryResidentInt8, engine.MemoryResidentInt4, engine.MemoryStreaming} {
			b.Run(fmt.Sprintf("%d/%s", size, m), func(b *testing.B) {
				r := base("A lighthouse in a storm, waves, wind.", 7)
				r.Width, r.Height, r.Memory = size, size, m
				var ratio float64
				for range b.N {
					be := cpu.New(cpu.Options{})
					s, err := engine.Open(engine.Options{ModelDir: demoModel(b), Backend: be})
					if err != nil {
						b.Fatal(err)
					}
					res, err := s.Generate(context.Background(), r, &recSink{}, nil)
					s.Close()
					if err != nil {
						b.Fatal(err)
					}
					pred, got := res.Plan.DevicePeakBytes, res.PeakBytes
					ratio = float64(got) / float64(pred)
					b.Logf("%d²×22 %-14s predicted %9d B (%9d B with host buffers), measured %9d B: measured/predicted %.3f",
						size, m, pred, res.Plan.PeakBytes, got, ratio)
					for _, ph := range res.Plan.Prediction.Memory.Phases {
						b.Logf("  plan %s (%s): %d B", ph.Name, ph.Residency, ph.Peak()-ph.Storage.Host)
					}
					for _, ph := range res.Profile {
						b.Logf("  measured %s: %d B", ph.Phase, ph.PeakBytes)
					}
					if pred <= 0 || ratio < 0.9 || ratio > 1.1 {
						b.Errorf("%d² %s: measured peak %d B is not within 10 %% of the predicted %d B", size, m, got, pred)
					}
				}
				b.ReportMetric(ratio, "measured/predicted")
			})
		}
	}
}

// TestEveryPhaseThatRunsIsEstimated: each phase in which a take does work
// (an event with units done) has predicted work in its plan (the estimate is their sum), for a
// text take with step previews, a first-frame take and a picture and sound
// reference take: no phase that runs is left out of the estimate.
func TestEveryPhaseThatRunsIsEstimated(t *testing.T) {
	s := openSession(t)
	dir := t.TempDir()
	pic := writePNG(t, filepath.Join(dir, "pic.png"), 96, 80, color.RGBA{R: 90})
	sound := writeWAV(t, filepath.Join(dir, "sound.wav"), 3, 32000, 2)
	preview := base("A lamp in the rain.", 1)
	preview.Preview = true
	first := base("The lamp flickers.", 2)
	first.First = pic
	refs := base("<Picture 1> hums <Audio 1>.", 3)
	refs.RefImageSize = media.RefImageMatch
	refs.References = []engine.Reference{{Kind: engine.RefImage, Path: pic}, {Kind: engine.RefAudio, Path: sound}}
	for name, r := range map[string]engine.Request{"t2va with previews": preview, "fl2va": first, "ref2va": refs} {
		p, err := s.Plan(r)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		ran := map[engine.Phase]bool{}
		if _, err := s.Generate(context.Background(), r, &media.MemorySink{}, func(e engine.Event) { ran[e.Phase] = ran[e.Phase] || e.Done > 0 }); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		// The load phase steps through the components even when they are
		// loaded already; its predicted work counts only those to load.
		delete(ran, engine.PhaseDone)
		delete(ran, engine.PhaseLoad)
		n := 0
		for ph, did := range ran {
			if !did {
				continue
			}
			n++
			if p.Prediction.Work[ph] <= 0 {
				t.Errorf("%s: phase %s runs but has no predicted work (%v)", name, ph, p.Prediction.Work)
			}
		}
		if n < 4 {
			t.Errorf("%s: work done in only %d phases", name, n)
		}
	}
}
