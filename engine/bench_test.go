package engine_test

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"h3studio/engine"
	"h3studio/engine/compute/cpu"
	"h3studio/engine/media"
	"h3studio/engine/request/requesttest"
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

// BenchmarkCancelLatency cancels a generation in the middle of a unit of
// each phase (half a layer, step, tile, block or frame after the phase
// began, from a timer on another goroutine, as a user's click would) and
// reports how long Generate took to return after the cancel: the
// granularity of the checks at step, layer, tile, block and frame
// boundaries. The text, denoise and decode phases run the demo generation
// (256×256, 22 frames, 4 steps) into memory; the references phase encodes
// a 2-s 32×32 reference video on the canvas of the studio's demo settings
// (never enlarged; Ref2VA, the same 22 frames); export runs the demo generation into an MP4, a WAV and
// a folder of PNG frames, as the CLI writes them (it needs ffmpeg). A
// cancel at export may also let the take finish (the outputs are then
// complete): that counts too, as the time until Generate returned.
func BenchmarkCancelLatency(b *testing.B) {
	dir := demoModel(b)
	s, err := engine.Open(engine.Options{ModelDir: dir, Backend: cpu.New(cpu.Options{})})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	memory := func(testing.TB) media.Sink { return &media.MemorySink{} }
	files := func(tb testing.TB) media.Sink {
		if _, err := exec.LookPath("ffmpeg"); err != nil {
			tb.Skip("engine: the export phase's MP4 needs Debian's ffmpeg (make deps)")
		}
		out := tb.TempDir()
		mp4, err := media.NewMP4Sink(filepath.Join(out, "take.mp4"), media.MP4Options{})
		if err != nil {
			tb.Fatal(err)
		}
		frames, err := media.NewFrameSink(filepath.Join(out, "frames"))
		if err != nil {
			tb.Fatal(err)
		}
		wav, err := media.NewWAVSink(filepath.Join(out, "take.wav"), media.PCM16)
		if err != nil {
			tb.Fatal(err)
		}
		return media.MultiSink(mp4, frames, wav)
	}
	refVideo := func(tb testing.TB) engine.Request {
		r := demoRequest(3)
		r.Prompt = "<Video 1> continues in the snow."
		r.References = []engine.Reference{{Kind: engine.RefSilentVideo, Path: requesttest.WriteVideo(tb, filepath.Join(tb.TempDir(), "ref.mp4"), 2, true)}}
		r.RefVideoCanvas = media.RefVideoH3C // the studio's demo settings
		return r
	}
	demo := func(testing.TB) engine.Request { return demoRequest(3) }
	for _, c := range []struct {
		ph   engine.Phase
		req  func(testing.TB) engine.Request
		sink func(testing.TB) media.Sink
	}{
		{engine.PhaseReferences, refVideo, memory},
		{engine.PhaseText, demo, memory},
		{engine.PhaseDenoise, demo, memory},
		{engine.PhaseVideoDecode, demo, memory},
		{engine.PhaseAudioDecode, demo, memory},
		{engine.PhaseExport, demo, files},
	} {
		b.Run(string(c.ph), func(b *testing.B) {
			r := c.req(b)
			// Calibrate: the phase's wall time per unit, cold (the text
			// encoder runs), from its events; the run stops once the
			// phase is over.
			s.Release(true)
			ctx, cancel := context.WithCancel(context.Background())
			var began, ended time.Time
			units := 0
			_, err := s.Generate(ctx, r, c.sink(b), func(e engine.Event) {
				switch {
				case e.Phase == c.ph && began.IsZero():
					began, units = time.Now(), e.Total
				case e.Phase != c.ph && !began.IsZero() && ended.IsZero():
					ended = time.Now()
					cancel()
				}
			})
			cancel()
			if began.IsZero() || ended.IsZero() {
				b.Fatalf("calibration: the %s phase did not run to its end: %v", c.ph, err)
			}
			unit := ended.Sub(began) / time.Duration(max(units, 1))
			var worst, sum time.Duration
			n, finished := 0, 0
			for b.Loop() {
				s.Release(true)
				ctx, cancel := context.WithCancel(context.Background())
				var mu sync.Mutex
				var at time.Time
				started := false
				_, err := s.Generate(ctx, r, c.sink(b), func(e engine.Event) {
					if !started && e.Phase == c.ph {
						started = true
						time.AfterFunc(unit/2, func() {
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
				switch {
				case fired && err == nil && c.ph == engine.PhaseExport:
					finished++
				case !fired || !errors.Is(err, context.Canceled):
					b.Fatalf("no cancellation in %s (the timer fired: %v): %v", c.ph, fired, err)
				}
				sum += lat
				worst = max(worst, lat)
				n++
			}
			b.ReportMetric(float64(sum.Microseconds())/float64(n)/1000, "ms-mean")
			b.ReportMetric(float64(worst.Microseconds())/1000, "ms-worst")
			b.ReportMetric(float64(unit.Microseconds())/1000, "ms-per-unit")
			b.ReportMetric(float64(ended.Sub(began).Microseconds())/1000, "ms-phase")
			if c.ph == engine.PhaseExport {
				b.ReportMetric(float64(finished)/float64(n), "finished")
			}
		})
	}
}
