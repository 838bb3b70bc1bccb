package engine_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"h3studio/engine"
	"h3studio/engine/compute/cpu"
	"h3studio/engine/media"
)

// The demo generation the issue sizes the demo checkpoint by: 256×256,
// 22 frames, 4 steps, on the CPU backend (target ≤ 10 s on 2 cores).
func demoRequest(seed uint64) engine.Request {
	return engine.Request{Prompt: "A red fox walks through fresh snow.", Width: 256, Height: 256, Frames: 22, Steps: 4, Seed: seed, SeedSet: true}
}

// BenchmarkDemoGenerate times the demo generation per phase: "cold" in a
// fresh session (components loaded, text encoded), "warm" a second seed in
// the same session (resident components, cached conditioning).
func BenchmarkDemoGenerate(b *testing.B) {
	dir := demoModel(b)
	for _, warm := range []bool{false, true} {
		name := map[bool]string{false: "cold", true: "warm"}[warm]
		b.Run(name, func(b *testing.B) {
			var phases map[engine.Phase]time.Duration
			var total time.Duration
			n := 0
			for b.Loop() {
				b.StopTimer()
				s, err := engine.Open(engine.Options{ModelDir: dir, Backend: cpu.New(cpu.Options{})})
				if err != nil {
					b.Fatal(err)
				}
				if warm {
					if _, err := s.Generate(context.Background(), demoRequest(1), &media.MemorySink{}, nil); err != nil {
						b.Fatal(err)
					}
				}
				b.StartTimer()
				start := time.Now()
				res, err := s.Generate(context.Background(), demoRequest(2), &media.MemorySink{}, nil)
				if err != nil {
					b.Fatal(err)
				}
				total += time.Since(start)
				if phases == nil {
					phases = map[engine.Phase]time.Duration{}
				}
				for ph, d := range res.Timings {
					phases[ph] += d
				}
				n++
				s.Close()
			}
			for ph, d := range phases {
				b.ReportMetric(d.Seconds()/float64(n), string(ph)+"-s")
			}
			b.ReportMetric(total.Seconds()/float64(n), "total-s")
		})
	}
}

// BenchmarkCancelLatency cancels the demo generation in the middle of a
// unit of each phase (half a layer, step, tile or block after the phase
// began, from a timer on another goroutine, as a user's click would) and
// reports how long Generate took to return after the cancel: the
// granularity of the checks at step, layer, tile and block boundaries.
func BenchmarkCancelLatency(b *testing.B) {
	dir := demoModel(b)
	s, err := engine.Open(engine.Options{ModelDir: dir, Backend: cpu.New(cpu.Options{})})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	// Calibrate: one unit of each phase, cold (the text encoder runs).
	s.Release(true)
	res, err := s.Generate(context.Background(), demoRequest(3), &media.MemorySink{}, nil)
	if err != nil {
		b.Fatal(err)
	}
	unit := map[engine.Phase]time.Duration{}
	for _, p := range res.Profile {
		unit[p.Phase] = p.Wall / time.Duration(max(p.Units, 1))
	}
	for _, ph := range []engine.Phase{engine.PhaseText, engine.PhaseDenoise, engine.PhaseVideoDecode, engine.PhaseAudioDecode} {
		b.Run(string(ph), func(b *testing.B) {
			var worst, sum time.Duration
			n := 0
			for b.Loop() {
				s.Release(true)
				ctx, cancel := context.WithCancel(context.Background())
				var mu sync.Mutex
				var at time.Time
				started := false
				_, err := s.Generate(ctx, demoRequest(3), &media.MemorySink{}, func(e engine.Event) {
					if !started && e.Phase == ph {
						started = true
						time.AfterFunc(unit[ph]/2, func() {
							mu.Lock()
							at = time.Now()
							mu.Unlock()
							cancel()
						})
					}
				})
				end := time.Now()
				cancel()
				mu.Lock()
				lat := end.Sub(at)
				fired := !at.IsZero()
				mu.Unlock()
				if !fired || !errors.Is(err, context.Canceled) {
					b.Fatalf("no cancellation in %s (the timer fired: %v): %v", ph, fired, err)
				}
				sum += lat
				worst = max(worst, lat)
				n++
			}
			b.ReportMetric(float64(sum.Microseconds())/float64(n)/1000, "ms-mean")
			b.ReportMetric(float64(worst.Microseconds())/1000, "ms-worst")
			b.ReportMetric(float64(unit[ph].Microseconds())/1000, "ms-per-unit")
		})
	}
}
