package engine_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"h3studio/engine"
	"h3studio/engine/compute"
	"h3studio/engine/compute/cpu"
	"h3studio/engine/plan"
	"h3studio/engine/quant"
)

// openOn opens the demo checkpoint on a CPU backend reporting the working
// set ws (0: the host's own memory).
func openOn(t *testing.T, ws int64, o engine.Options) *engine.Session {
	t.Helper()
	var b compute.Backend = cpu.New(cpu.Options{})
	if ws > 0 {
		b = smallDevice{b, ws}
	}
	o.ModelDir, o.Backend = demoModel(t), b
	s, err := engine.Open(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// workingSetFor is the working set whose budget (plan.Budget) is budget.
func workingSetFor(budget int64) int64 { return budget * 20 / 19 }

// TestAutoMemoryMode: the automatic memory mode is plan.Pick's choice
// over the session's own predictions of each candidate mode. With room,
// resident keeps every component loaded. On a device whose budget lies
// between the int8 and BF16 kept peaks the components no longer fit
// together: the session stays resident and releases each phase's
// component (plan.KeepWhenFits), at the lowest peak resident allows — the
// choice `h3studio plan` makes; the take's frames are the kept take's bit
// for bit. Explicit modes and --quant win. (Whether auto quantizes depends
// on whether a phase alone fits; in the demo the video decode is the
// largest phase in every resident mode, so quantizing never lowers its
// peak: plan.TestSessionKeepChoosesAsPlan checks the choice on the released
// model, where it does.)
func TestAutoMemoryMode(t *testing.T) {
	r := base("A lighthouse in a storm, waves, wind.", 7)
	peaks := map[engine.MemoryMode]int64{}
	big := openOn(t, 0, engine.Options{})
	for _, m := range []engine.MemoryMode{engine.MemoryResident, engine.MemoryResidentInt8, engine.MemoryResidentInt4, engine.MemoryStreaming} {
		q := r
		q.Memory = m
		p, err := big.Plan(q)
		if err != nil {
			t.Fatal(err)
		}
		if p.Memory != m || p.PeakBytes <= 0 {
			t.Fatalf("explicit %s: planned %q, peak %d", m, p.Memory, p.PeakBytes)
		}
		peaks[m] = p.PeakBytes
	}
	t.Logf("demo 64²×22 predicted peaks, kept: %v", peaks)
	res, int8, int4 := peaks[engine.MemoryResident], peaks[engine.MemoryResidentInt8], peaks[engine.MemoryResidentInt4]
	if !(res > int8 && int8 > int4) {
		t.Fatalf("peaks resident %d, int8 %d, int4 %d: want them falling with the bits", res, int8, int4)
	}
	p, err := big.Plan(r)
	if err != nil || p.Memory != engine.MemoryResident || !p.Prediction.Memory.Kept || !strings.Contains(p.MemoryWhy, "fits the budget") {
		t.Errorf("auto with room: %q kept %v (%q), %v", p.Memory, p.Prediction.Memory.Kept, p.MemoryWhy, err)
	}

	ws := workingSetFor((res + int8) / 2)
	s := openOn(t, ws, engine.Options{})
	p, err = s.Plan(r)
	if err != nil {
		t.Fatal(err)
	}
	released := p.PeakBytes
	t.Logf("budget %d: auto %s, kept %v, peak %d (%s)", p.MemoryBudget, p.Memory, p.Prediction.Memory.Kept, released, p.MemoryWhy)
	if p.Memory != engine.MemoryResident || p.Prediction.Memory.Kept || released >= int4 || released > p.MemoryBudget || p.MemoryBudget != plan.Budget(ws) {
		t.Errorf("auto between int8 and BF16: %q kept %v, peak %d, budget %d, why %q", p.Memory, p.Prediction.Memory.Kept, released, p.MemoryBudget, p.MemoryWhy)
	}
	q := r
	q.Quality = engine.BestQuality
	if p, _ := s.Plan(q); p.Memory != engine.MemoryResident {
		t.Errorf("best quality between int8 and BF16: %q (%q)", p.Memory, p.MemoryWhy)
	}
	q = r
	q.Memory = engine.MemoryResident
	if p, _ := s.Plan(q); p.Memory != engine.MemoryResident || p.PeakBytes != released {
		t.Errorf("explicit resident: %q, peak %d", p.Memory, p.PeakBytes)
	}
	if p, _ := openOn(t, ws, engine.Options{Quant: compute.Int4}).Plan(r); p.Memory != engine.MemoryResidentInt4 {
		t.Errorf("auto with --quant int4: %q (%q)", p.Memory, p.MemoryWhy)
	}
	if p, _ := openOn(t, 0, engine.Options{Quant: compute.Int8}).Plan(q); p.Memory != engine.MemoryResidentInt8 {
		t.Errorf("resident with --quant int8: %q", p.Memory)
	}
	q.Memory = "resident-int3"
	if _, err := s.Plan(q); err == nil || !strings.Contains(err.Error(), "resident-int3") {
		t.Errorf("unknown mode: %v", err)
	}

	// The take releases each component after its phase, within the
	// budget, and makes the kept take's frames.
	got, gs := generate(t, s, r)
	if got.Plan.Memory != engine.MemoryResident || got.Plan.Prediction.Memory.Kept || got.PeakBytes > got.Plan.MemoryBudget {
		t.Errorf("generated in %q kept %v, measured peak %d, budget %d", got.Plan.Memory, got.Plan.Prediction.Memory.Kept, got.PeakBytes, got.Plan.MemoryBudget)
	}
	_, bs := generate(t, big, r)
	if !sameFrames(gs.Frames, bs.Frames) {
		t.Error("the take that released its components made other frames than the one that kept them")
	}
}

// cancelOnMessage is a slog handler that cancels a take when the session
// logs msg.
type cancelOnMessage struct {
	slog.Handler
	msg    string
	cancel context.CancelFunc
}

func (h cancelOnMessage) Enabled(context.Context, slog.Level) bool { return true }
func (h cancelOnMessage) Handle(_ context.Context, r slog.Record) error {
	if r.Message == h.msg {
		h.cancel()
	}
	return nil
}

// TestCancelQuantizedCacheBuild: cancelling a take while its quantized
// cache is being built (after its first part) stops the build with the
// context's error, the manifest unwritten; the next take resumes the
// build and completes it.
func TestCancelQuantizedCacheBuild(t *testing.T) {
	dir := ownDemoModel(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := engine.Open(engine.Options{ModelDir: dir, Backend: cpu.New(cpu.Options{}),
		Logger: slog.New(cancelOnMessage{Handler: slog.DiscardHandler, msg: "quantized cache", cancel: cancel})})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r := base("A lighthouse in a storm.", 3)
	r.Memory = engine.MemoryResidentInt4
	_, err = s.Generate(ctx, r, &recSink{}, nil)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "quantized cache") {
		t.Fatalf("take cancelled in the cache build: %v", err)
	}
	var cache string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, _ error) error {
		if d != nil && d.IsDir() && strings.HasSuffix(p, ".h3studio-int4") {
			cache = p
		}
		return nil
	})
	parts, _ := filepath.Glob(filepath.Join(cache, "part-*.safetensors"))
	if _, err := os.Stat(filepath.Join(cache, quant.ManifestName)); cache == "" || len(parts) == 0 || !os.IsNotExist(err) {
		t.Fatalf("after the cancel: cache %q, %d parts, manifest %v", cache, len(parts), err)
	}
	s3, err := engine.Open(engine.Options{ModelDir: dir, Backend: cpu.New(cpu.Options{})})
	if err != nil {
		t.Fatal(err)
	}
	defer s3.Close()
	// takeMessages runs r on s and returns the take's quantizing messages.
	takeMessages := func(s *engine.Session) []string {
		var msgs []string
		if _, err := s.Generate(context.Background(), r, &recSink{}, func(e engine.Event) {
			if strings.HasPrefix(e.Message, "quantizing the transformer") {
				msgs = append(msgs, e.Message)
			}
		}); err != nil {
			t.Fatal(err)
		}
		return msgs
	}
	msgs := takeMessages(s3)
	if _, err := os.Stat(filepath.Join(cache, quant.ManifestName)); err != nil {
		t.Errorf("the next take did not finish the cache: %v", err)
	}
	// The build's progress reaches the take's events, part by part (the
	// parts kept from the cancelled build count as done).
	want := fmt.Sprintf("quantizing the transformer to int4 (once; kept beside it): part %d of %d", len(msgs), len(msgs))
	if len(msgs) < 2 || msgs[len(msgs)-1] != want {
		t.Errorf("the resumed build's progress messages: %q", msgs)
	}
	// A session opened later reuses the cache: nothing is quantized.
	s4, err := engine.Open(engine.Options{ModelDir: dir, Backend: cpu.New(cpu.Options{})})
	if err != nil {
		t.Fatal(err)
	}
	defer s4.Close()
	if msgs := takeMessages(s4); len(msgs) != 0 {
		t.Errorf("the cache was built again: %q", msgs)
	}
}

// smallDevice reports a device with a working set of budget bytes.
type smallDevice struct {
	compute.Backend
	budget int64
}

func (d smallDevice) Device() compute.DeviceInfo {
	i := d.Backend.Device()
	i.WorkingSetBytes = d.budget
	return i
}

// TestPlanNotesWhatDoesNotFit: a request whose predicted peak exceeds the
// device's budget is planned with a note saying so: in auto mode that no
// mode fits, with the mode chosen and its peak; for an explicit mode that
// it may run out of memory and what needs less. Before a resident mode
// stops fitting it releases each component after its phase
// (plan.KeepWhenFits), which needs no note. In the demo, whose video
// decode is the largest phase in every mode, resident's lowest peak is
// streaming's, so no budget makes auto stream where resident fails (on the
// released model one does: plan.TestSessionKeepChoosesAsPlan).
func TestPlanNotesWhatDoesNotFit(t *testing.T) {
	r := base("A red fox walks through fresh snow.", 1)
	plan := func(budget int64, mode engine.MemoryMode) engine.Plan {
		t.Helper()
		var b compute.Backend = cpu.New(cpu.Options{})
		if budget > 0 {
			b = smallDevice{b, workingSetFor(budget)}
		}
		s, err := engine.Open(engine.Options{ModelDir: demoModel(t), Backend: b})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		q := r
		q.Memory = mode
		p, err := s.Plan(q)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	kept, lowest, streaming := plan(0, engine.MemoryResident).PeakBytes, plan(1<<10, engine.MemoryResident).PeakBytes, plan(0, engine.MemoryStreaming).PeakBytes
	if streaming <= 0 || kept <= lowest || lowest < streaming {
		t.Fatalf("demo peaks: resident kept %d, lowest %d, streaming %d", kept, lowest, streaming)
	}
	notes := func(p engine.Plan) string { return strings.Join(p.Notes, "\n") }
	mid := (kept + lowest) / 2
	for _, budget := range []int64{0, mid} {
		for _, mode := range []engine.MemoryMode{engine.MemoryAuto, engine.MemoryResident} {
			if n := notes(plan(budget, mode)); strings.Contains(n, "may run out of memory") || strings.Contains(n, "exceeds this device") {
				t.Errorf("%q on a budget of %d, which it fits: %q", mode, budget, n)
			}
		}
	}
	for _, mode := range []engine.MemoryMode{engine.MemoryAuto, engine.MemoryResident, engine.MemoryStreaming} {
		if n := notes(plan(streaming/2, mode)); !strings.Contains(n, "may run out of memory") {
			t.Errorf("%q, nothing fits: notes %q", mode, n)
		}
	}
	// Auto on the mid device runs resident, each component released after
	// its phase, and the result reports the prediction it ran under.
	s, err := engine.Open(engine.Options{ModelDir: demoModel(t), Backend: smallDevice{cpu.New(cpu.Options{}), workingSetFor(mid)}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	res, err := s.Generate(context.Background(), r, &recSink{}, nil)
	if err != nil || res.Plan.Memory != engine.MemoryResident || res.Plan.Prediction.Memory.Kept || res.Plan.PeakBytes >= kept || res.PeakBytes > res.Plan.MemoryBudget {
		t.Errorf("auto on a small device: %v, mode %q kept %v, predicted peak %d (kept %d), measured %d, budget %d", err, res.Plan.Memory,
			res.Plan.Prediction.Memory.Kept, res.Plan.PeakBytes, kept, res.PeakBytes, res.Plan.MemoryBudget)
	}
	// Released per phase, the measured peak is the plan's, as kept
	// (BenchmarkPeakVsPlan's 10 %).
	if ratio := float64(res.PeakBytes) / float64(res.Plan.DevicePeakBytes); ratio < 0.9 || ratio > 1.1 {
		t.Errorf("released per phase: measured peak %d, predicted %d (%.3f)", res.PeakBytes, res.Plan.DevicePeakBytes, ratio)
	} else {
		t.Logf("released per phase: measured peak %d, predicted %d (%.3f)", res.PeakBytes, res.Plan.DevicePeakBytes, ratio)
	}
}
