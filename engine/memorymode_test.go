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

// TestAutoMemoryModeQuantizes: the automatic memory mode is plan.Pick's
// choice over the session's own predictions of each candidate mode: on a
// device whose budget lies between the demo's int8 and BF16 resident
// peaks it runs resident-int8 without --quant (recorded with why, the
// frames differ from BF16's), the best-quality floor streams BF16 instead,
// explicit modes and --quant win.
func TestAutoMemoryModeQuantizes(t *testing.T) {
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
	t.Logf("demo 64²×22 predicted peaks: %v", peaks)
	res, int8, int4 := peaks[engine.MemoryResident], peaks[engine.MemoryResidentInt8], peaks[engine.MemoryResidentInt4]
	if !(res > int8 && int8 > int4) {
		t.Fatalf("peaks resident %d, int8 %d, int4 %d: want them falling with the bits", res, int8, int4)
	}
	if p, err := big.Plan(r); err != nil || p.Memory != engine.MemoryResident || !strings.Contains(p.MemoryWhy, "fits the budget") {
		t.Errorf("auto with room: %q (%q), %v", p.Memory, p.MemoryWhy, err)
	}

	ws := workingSetFor((res + int8) / 2)
	s := openOn(t, ws, engine.Options{})
	p, err := s.Plan(r)
	if err != nil {
		t.Fatal(err)
	}
	if p.Memory != engine.MemoryResidentInt8 || p.PeakBytes != int8 || !strings.Contains(p.MemoryWhy, "resident (") || p.MemoryBudget != plan.Budget(ws) {
		t.Errorf("auto between int8 and BF16: %q peak %d budget %d, why %q", p.Memory, p.PeakBytes, p.MemoryBudget, p.MemoryWhy)
	}
	q := r
	q.Quality = engine.BestQuality
	if p, _ := s.Plan(q); p.Memory != engine.MemoryStreaming {
		t.Errorf("best quality between int8 and BF16: %q (%q)", p.Memory, p.MemoryWhy)
	}
	q = r
	q.Memory = engine.MemoryResident
	if p, _ := s.Plan(q); p.Memory != engine.MemoryResident || p.PeakBytes != res {
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

	// The take runs quantized without --quant, and says so.
	got, gs := generate(t, s, r)
	if got.Plan.Memory != engine.MemoryResidentInt8 || got.Plan.MemoryWhy == "" {
		t.Errorf("generated in %q (%q)", got.Plan.Memory, got.Plan.MemoryWhy)
	}
	_, bs := generate(t, big, r)
	if sameFrames(gs.Frames, bs.Frames) {
		t.Error("the int8 take's frames equal the BF16 take's: the weights were not quantized")
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
// device's budget is planned with a note saying so: in auto mode the mode
// chosen and why (BF16 streaming when no resident mode fits), else that it
// may run out of memory and what needs less.
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
	resident, streaming := plan(0, engine.MemoryResident).PeakBytes, plan(0, engine.MemoryStreaming).PeakBytes
	if streaming <= 0 || resident <= streaming {
		t.Fatalf("demo peaks: resident %d, streaming %d", resident, streaming)
	}
	notes := func(p engine.Plan) string { return strings.Join(p.Notes, "\n") }
	if n := notes(plan(0, engine.MemoryAuto)); strings.Contains(n, "more than this device") || strings.Contains(n, "exceeds this device") {
		t.Errorf("a request that fits got %q", n)
	}
	between := (resident + streaming) / 2
	if n := notes(plan(between, engine.MemoryAuto)); !strings.Contains(n, "memory mode streaming: streaming is the fastest mode") {
		t.Errorf("auto, resident does not fit but streaming does: notes %q", n)
	}
	if n := notes(plan(between, engine.MemoryResident)); !strings.Contains(n, "--ssd-streaming") {
		t.Errorf("resident that does not fit: notes %q", n)
	}
	for _, mode := range []engine.MemoryMode{engine.MemoryAuto, engine.MemoryStreaming} {
		if n := notes(plan(streaming/2, mode)); !strings.Contains(n, "may run out of memory") {
			t.Errorf("%q, nothing fits: notes %q", mode, n)
		}
	}
	// Auto on that device streams, and the result reports the streaming
	// prediction it ran under.
	s, err := engine.Open(engine.Options{ModelDir: demoModel(t), Backend: smallDevice{cpu.New(cpu.Options{}), workingSetFor(between)}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	res, err := s.Generate(context.Background(), r, &recSink{}, nil)
	if err != nil || res.Plan.Memory != engine.MemoryStreaming || res.Plan.PeakBytes != streaming {
		t.Errorf("auto on a small device: %v, mode %q, predicted peak %d (streaming %d, resident %d)", err, res.Plan.Memory, res.Plan.PeakBytes, streaming, resident)
	}
}
