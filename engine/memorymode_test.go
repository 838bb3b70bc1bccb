package engine_test

import (
	"context"
	"errors"
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
	generate(t, s3, r)
	if _, err := os.Stat(filepath.Join(cache, quant.ManifestName)); err != nil {
		t.Errorf("the next take did not finish the cache: %v", err)
	}
}
