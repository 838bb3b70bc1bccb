package engine_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"h3studio/engine"
	"h3studio/engine/compute/cpu"
	"h3studio/engine/media"
	"h3studio/engine/request/requesttest"
	"h3studio/engine/take"
	"h3studio/engine/testmodel"
)

// End-to-end tests on the demo checkpoint (engine/testmodel): every task runs the
// whole pipeline on the CPU backend at a tiny canvas. They check what the
// outputs must be (frame counts and sizes, 24 fps, 32 kHz stereo of the
// video's length), determinism per seed, the conditioning cache and
// resident components (by counters), cancellation in every phase (by
// counters and the sink's calls) and the sidecar.

var (
	demoOnce sync.Once
	demoDir  string
	demoErr  error
)

// demoModel writes the demo checkpoint once per test binary.
func demoModel(t testing.TB) string {
	t.Helper()
	demoOnce.Do(func() {
		dir, err := os.MkdirTemp("", "h3-e2e-demo-")
		if err != nil {
			demoErr = err
			return
		}
		demoDir = filepath.Join(dir, "model")
		demoErr = testmodel.Write(demoDir)
	})
	if demoErr != nil {
		t.Fatal(demoErr)
	}
	return demoDir
}

// ownDemoModel writes a demo checkpoint of the test's own, for a test that
// damages it or writes beside its weights.
func ownDemoModel(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "model")
	if err := testmodel.Write(dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if demoDir != "" {
		os.RemoveAll(filepath.Dir(demoDir))
	}
	os.Exit(code)
}

func openSession(t testing.TB) *engine.Session {
	t.Helper()
	s, err := engine.Open(engine.Options{ModelDir: demoModel(t), Backend: cpu.New(cpu.Options{})})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// recSink is a MemorySink that records the calls it gets.
type recSink struct {
	media.MemorySink
	begins, closes, aborts, audioCalls int
	frameCalls                         int
	failFrame                          int // fail WriteFrame number failFrame (1-based); 0 never
}

func (r *recSink) Begin(f media.Format) error { r.begins++; return r.MemorySink.Begin(f) }
func (r *recSink) WriteFrame(img *image.RGBA) error {
	r.frameCalls++
	if r.failFrame > 0 && r.frameCalls == r.failFrame {
		return errors.New("disk full (test)")
	}
	return r.MemorySink.WriteFrame(img)
}
func (r *recSink) WriteAudio(a media.Audio) error { r.audioCalls++; return r.MemorySink.WriteAudio(a) }
func (r *recSink) Close() error                   { r.closes++; return r.MemorySink.Close() }
func (r *recSink) Abort() error                   { r.aborts++; return r.MemorySink.Abort() }

// base is a tiny request: 64×64, 22 frames, 2 steps.
func base(prompt string, seed uint64) engine.Request {
	return engine.Request{Prompt: prompt, Width: 64, Height: 64, Frames: 22, Steps: 2, Seed: seed, SeedSet: true}
}

// generate runs r and checks the invariants every finished take has.
func generate(t *testing.T, s *engine.Session, r engine.Request) (engine.Result, *recSink) {
	t.Helper()
	sink := &recSink{}
	var phases []engine.Phase
	var last engine.Event
	res, err := s.Generate(context.Background(), r, sink, func(e engine.Event) {
		if len(phases) == 0 || phases[len(phases)-1] != e.Phase {
			phases = append(phases, e.Phase)
		}
		if e.Done > e.Total && e.Phase != engine.PhaseDone {
			t.Errorf("event %s %d/%d: done beyond total", e.Phase, e.Done, e.Total)
		}
		last = e
	})
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if last.Phase != engine.PhaseDone {
		t.Errorf("last event %+v, want done", last)
	}
	F := res.Plan.Request.Frames
	if sink.begins != 1 || sink.closes != 1 || sink.aborts != 0 {
		t.Errorf("sink calls: begin %d close %d abort %d", sink.begins, sink.closes, sink.aborts)
	}
	f := sink.Format
	if f.FPS != 24 || f.SampleRate != 32000 || f.Channels != 2 || f.Frames != F || f.Width != r.Width || f.Height != r.Height {
		t.Errorf("format %+v", f)
	}
	if len(sink.Frames) != F || res.Frames != F {
		t.Errorf("%d frames written, result says %d, want %d", len(sink.Frames), res.Frames, F)
	}
	for i, fr := range sink.Frames {
		if fr.Rect.Dx() != r.Width || fr.Rect.Dy() != r.Height {
			t.Fatalf("frame %d is %v", i, fr.Rect)
		}
	}
	a := sink.Audio
	if a.Rate != 32000 || a.Channels != 2 || a.Frames() != media.AudioSamplesFor(F, 32000) {
		t.Errorf("audio %d Hz × %d, %d sample frames; want 32000 × 2, %d (%.3f s for %.3f s of video)",
			a.Rate, a.Channels, a.Frames(), media.AudioSamplesFor(F, 32000), a.Duration().Seconds(), float64(F)/24)
	}
	peak := 0.0
	for _, v := range a.Samples {
		if math.IsNaN(float64(v)) || v < -1 || v > 1 {
			t.Fatalf("audio sample %v outside [-1, 1]", v)
		}
		peak = max(peak, math.Abs(float64(v)))
	}
	if peak == 0 {
		t.Error("the sound is silent")
	}
	want := []engine.Phase{engine.PhaseLoad}
	if res.Plan.Task != engine.TaskT2VA {
		want = append(want, engine.PhaseReferences)
	}
	want = append(want, engine.PhaseText, engine.PhaseDenoise, engine.PhaseVideoDecode, engine.PhaseAudioDecode, engine.PhaseExport, engine.PhaseDone)
	if fmt.Sprint(phases) != fmt.Sprint(want) {
		t.Errorf("phases %v, want %v", phases, want)
	}
	if len(res.Profile) != len(want)-1 || res.Timings[engine.PhaseDenoise] <= 0 {
		t.Errorf("profile %+v", res.Profile)
	}
	return res, sink
}

func writePNG(t testing.TB, path string, w, h int, tint color.RGBA) string {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.SetRGBA(x, y, color.RGBA{uint8(x * 255 / w), uint8(y * 255 / h), tint.B, 255})
		}
	}
	return requesttest.WritePNG(t, path, img)
}

func writeWAV(t testing.TB, path string, seconds float64, rate, channels int) string {
	t.Helper()
	n := int(seconds * float64(rate))
	a := media.Audio{Rate: rate, Channels: channels, Samples: make([]float32, n*channels)}
	for i := 0; i < n; i++ {
		for c := 0; c < channels; c++ {
			a.Samples[i*channels+c] = float32(0.3 * math.Sin(2*math.Pi*440*float64(i)/float64(rate)*float64(c+1)))
		}
	}
	return requesttest.WriteWAV(t, path, a)
}

// TestGenerateEveryTask runs t2va, fl2va with the first, the last and both
// keyframes, and ref2va with a picture and a sound, a video with its sound,
// a silent video and a video with a separate sound.
func TestGenerateEveryTask(t *testing.T) {
	dir := t.TempDir()
	first := writePNG(t, filepath.Join(dir, "first.png"), 96, 80, color.RGBA{B: 40})
	last := writePNG(t, filepath.Join(dir, "last.png"), 80, 96, color.RGBA{B: 200})
	sound := writeWAV(t, filepath.Join(dir, "sound.wav"), 3, 44100, 1)
	s := openSession(t)
	type tc struct {
		name  string
		r     engine.Request
		task  engine.Task
		video bool
	}
	cases := []tc{
		{"t2va", base("A red fox walks through fresh snow.", 1), engine.TaskT2VA, false},
		{"fl2va first", with(base("The fox turns around.", 2), func(r *engine.Request) { r.First = first }), engine.TaskFL2VA, false},
		{"fl2va last", with(base("The fox arrives.", 3), func(r *engine.Request) { r.Last = last }), engine.TaskFL2VA, false},
		{"fl2va both", with(base("From dawn to dusk.", 4), func(r *engine.Request) { r.First, r.Last = first, last }), engine.TaskFL2VA, false},
		{"ref2va picture and sound", with(base("<Picture 1> sings <Audio 1>.", 5), func(r *engine.Request) {
			r.RefImageSize = media.RefImageMatch
			r.References = []engine.Reference{{Kind: engine.RefImage, Path: first}, {Kind: engine.RefAudio, Path: sound}}
		}), engine.TaskRef2VA, false},
		{"ref2va video with sound", with(base("<Video 1> continues.", 6), func(r *engine.Request) {
			r.Frames, r.RefVideoCanvas = 56, media.RefVideoH3C
			r.References = []engine.Reference{{Kind: engine.RefVideo}}
		}), engine.TaskRef2VA, true},
		{"ref2va silent video", with(base("<Video 1> in silence.", 7), func(r *engine.Request) {
			r.RefVideoCanvas = media.RefVideoH3C
			r.References = []engine.Reference{{Kind: engine.RefSilentVideo}}
		}), engine.TaskRef2VA, true},
		{"ref2va video with a separate sound", with(base("<Video 1> with <Audio 1>.", 8), func(r *engine.Request) {
			r.Frames, r.RefVideoCanvas = 56, media.RefVideoH3C
			r.References = []engine.Reference{{Kind: engine.RefVideoAudio, Audio: sound}}
		}), engine.TaskRef2VA, true},
	}
	var video string
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.video {
				if video == "" {
					video = requesttest.WriteVideo(t, filepath.Join(dir, "ref.mp4"), 3, false)
				}
				c.r.References[0].Path = video
			}
			res, sink := generate(t, s, c.r)
			if res.Plan.Task != c.task {
				t.Errorf("task %s, want %s", res.Plan.Task, c.task)
			}
			if len(sink.Frames) != c.r.Frames {
				t.Errorf("%d frames", len(sink.Frames))
			}
			// The sidecar records the take.
			sc := take.FromResult(res, "test", s.Snapshot().Root, "CPU", "cpu")
			b, err := json.Marshal(sc)
			if err != nil {
				t.Fatal(err)
			}
			var back map[string]any
			json.Unmarshal(b, &back)
			if back["task"] != string(c.task) || back["fps"] != 24.0 || back["sample_rate"] != 32000.0 || back["channels"] != 2.0 ||
				back["frames"] != float64(c.r.Frames) || back["seed"] != float64(c.r.Seed) || math.Abs(back["seconds"].(float64)-float64(c.r.Frames)/24) > 1e-9 {
				t.Errorf("sidecar %s", b)
			}
			inputs := 0
			for _, in := range sc.Inputs() {
				if len(in.Hash) != 64 || in.Path == "" {
					t.Errorf("sidecar input %+v", in)
				}
				inputs++
			}
			if want := len(c.r.References) + map[bool]int{true: 1}[c.r.First != ""] + map[bool]int{true: 1}[c.r.Last != ""]; inputs < want {
				t.Errorf("sidecar lists %d inputs, want at least %d", inputs, want)
			}
		})
	}
}

func with(r engine.Request, f func(*engine.Request)) engine.Request { f(&r); return r }

// sameFrames reports whether two takes' frames are pixel for pixel equal.
func sameFrames(a, b []*image.RGBA) bool {
	return slices.EqualFunc(a, b, func(x, y *image.RGBA) bool { return bytes.Equal(x.Pix, y.Pix) })
}

// TestDeterminismAndResidentCache: the same seed gives identical frames and
// sound, another seed different ones; the second and third runs of a
// prompt load nothing and take the conditioning from the cache (the text
// encoder does not run), proved by the session's counters.
func TestDeterminismAndResidentCache(t *testing.T) {
	s := openSession(t)
	r := base("A lighthouse in a storm, waves, wind.", 11)
	res1, a := generate(t, s, r)
	c1 := s.Counters()
	if res1.Cached || c1.TextEncodes != 1 || c1.TextCacheHits != 0 || c1.Loads < 4 {
		t.Fatalf("first run: cached %v, counters %+v", res1.Cached, c1)
	}
	res2, b := generate(t, s, r)
	c2 := s.Counters()
	if !res2.Cached || c2.TextEncodes != 1 || c2.TextCacheHits != 1 || c2.Loads != c1.Loads {
		t.Errorf("same prompt again: cached %v, counters %+v (first %+v)", res2.Cached, c2, c1)
	}
	if !sameFrames(a.Frames, b.Frames) || !slicesEqual(a.Audio.Samples, b.Audio.Samples) {
		t.Error("the same seed gave different output")
	}
	r.Seed = 12
	_, c := generate(t, s, r)
	c3 := s.Counters()
	if c3.TextEncodes != 1 || c3.Loads != c1.Loads {
		t.Errorf("another seed: counters %+v", c3)
	}
	if sameFrames(a.Frames, c.Frames) {
		t.Error("a different seed gave identical frames")
	}
	rep := s.CacheReport()
	if rep.Conditionings != 1 || rep.Hits != 2 || len(rep.Loaded) != 4 || rep.Memory != engine.MemoryResident {
		t.Errorf("cache report %+v", rep)
	}
	// A fresh session (nothing resident, an empty cache) gives the same take.
	s2 := openSession(t)
	_, d := generate(t, s2, with(r, func(r *engine.Request) { r.Seed = 11 }))
	if !sameFrames(a.Frames, d.Frames) {
		t.Error("a new session gave different frames for the same request")
	}
	// Release and clear: everything is loaded and encoded again.
	if err := s.Release(true); err != nil {
		t.Fatal(err)
	}
	if rep := s.CacheReport(); rep.Conditionings != 0 || len(rep.Loaded) != 0 {
		t.Errorf("after Release: %+v", rep)
	}
	generate(t, s, r)
	if c4 := s.Counters(); c4.TextEncodes != 2 || c4.Loads <= c3.Loads {
		t.Errorf("after Release: counters %+v", c4)
	}
}

// TestPromptMovesThePicture: on the demo model (whose transformer weighs
// the text rows up, engine/testmodel) another prompt with the same seed gives a
// visibly different take: the mean absolute pixel difference is over 20
// levels of 255.
func TestPromptMovesThePicture(t *testing.T) {
	s := openSession(t)
	_, a := generate(t, s, base("A red fox in the snow.", 5))
	_, b := generate(t, s, base("Blue ocean waves at night.", 5))
	var d float64
	var n int
	for i := range a.Frames {
		for j, v := range a.Frames[i].Pix {
			if j%4 != 3 {
				d += math.Abs(float64(v) - float64(b.Frames[i].Pix[j]))
				n++
			}
		}
	}
	d /= float64(n)
	t.Logf("two prompts, one seed: frames differ by %.1f levels on average", d)
	if d < 20 {
		t.Errorf("two prompts with one seed differ by %.1f levels on average: the prompt hardly moves the picture", d)
	}
}

// slicesEqual reports whether two sample slices are bit for bit equal.
func slicesEqual(a, b []float32) bool {
	return slices.EqualFunc(a, b, func(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) })
}

// TestStreamingMode runs the streaming memory mode: same output as the
// resident mode, nothing resident afterwards.
func TestStreamingMode(t *testing.T) {
	s := openSession(t)
	r := base("Rain on a window.", 21)
	_, a := generate(t, s, r)
	r.Memory = engine.MemoryStreaming
	res, b := generate(t, s, r)
	if res.Plan.Memory != engine.MemoryStreaming {
		t.Errorf("memory mode %q", res.Plan.Memory)
	}
	if !sameFrames(a.Frames, b.Frames) {
		t.Error("streaming and resident modes gave different frames")
	}
	if rep := s.CacheReport(); len(rep.Loaded) != 0 {
		t.Errorf("streaming mode left %v resident", rep.Loaded)
	}
}

// TestCancelEveryPhase cancels at the first event of each phase (and in the
// middle of the denoising loop) and checks that the run stops there: the
// error is context.Canceled, the sink is aborted with nothing left, and the
// counters show no work past the boundary.
func TestCancelEveryPhase(t *testing.T) {
	dir := t.TempDir()
	first := writePNG(t, filepath.Join(dir, "first.png"), 64, 64, color.RGBA{B: 90})
	s := openSession(t)
	type tc struct {
		phase engine.Phase
		done  int // cancel at the event with this Done
		r     engine.Request
	}
	fl := with(base("cancel me", 31), func(r *engine.Request) { r.First = first; r.Steps = 3 })
	cases := []tc{
		{engine.PhaseLoad, 0, fl},
		{engine.PhaseReferences, 0, fl},
		{engine.PhaseText, 0, fl},
		{engine.PhaseDenoise, 0, fl},
		{engine.PhaseDenoise, 1, fl},
		{engine.PhaseVideoDecode, 0, fl},
		{engine.PhaseAudioDecode, 0, fl},
		{engine.PhaseAudioDecode, 3, fl},
		{engine.PhaseExport, 0, fl},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s at %d", c.phase, c.done), func(t *testing.T) {
			s.Release(true) // start cold, so every phase has work
			before := s.Counters()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			sink := &recSink{}
			var after []engine.Event
			cancelled := false
			_, err := s.Generate(ctx, c.r, sink, func(e engine.Event) {
				if cancelled {
					after = append(after, e)
					return
				}
				if e.Phase == c.phase && e.Done == c.done {
					cancel()
					cancelled = true
				}
			})
			if !cancelled {
				t.Fatalf("no %s event with done %d", c.phase, c.done)
			}
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("error %v, want context.Canceled", err)
			}
			if sink.aborts != 1 || sink.closes != 0 || len(sink.Frames) != 0 || len(sink.Audio.Samples) != 0 {
				t.Errorf("sink: %d aborts, %d closes, %d frames, %d samples kept", sink.aborts, sink.closes, len(sink.Frames), len(sink.Audio.Samples))
			}
			for _, e := range after {
				if e.Phase != c.phase {
					t.Errorf("after cancelling in %s: an event of %s", c.phase, e.Phase)
				}
			}
			d := s.Counters()
			steps := d.Steps - before.Steps
			frames := d.FramesWritten - before.FramesWritten
			switch c.phase {
			case engine.PhaseLoad, engine.PhaseReferences, engine.PhaseText:
				if steps != 0 || d.TextEncodes-before.TextEncodes != 0 && c.phase != engine.PhaseText {
					t.Errorf("cancelled in %s: %d steps, %d text encodes", c.phase, steps, d.TextEncodes-before.TextEncodes)
				}
			case engine.PhaseDenoise:
				if steps != int64(c.done) {
					t.Errorf("cancelled after %d steps: %d steps ran", c.done, steps)
				}
			case engine.PhaseVideoDecode:
				if steps != 3 || frames != 0 {
					t.Errorf("cancelled at the first tile: %d steps, %d frames written", steps, frames)
				}
			case engine.PhaseAudioDecode, engine.PhaseExport:
				if frames != 22 || sink.audioCalls != 0 {
					t.Errorf("cancelled in %s: %d frames, %d audio writes", c.phase, frames, sink.audioCalls)
				}
			}
			// The session still works after a cancellation.
			if c.phase == engine.PhaseExport {
				generate(t, s, c.r)
			}
		})
	}
}

// TestFailuresLeaveNothing: a sink that fails (a full disk) and missing or
// broken inputs fail cleanly, the sink aborted.
func TestFailuresLeaveNothing(t *testing.T) {
	s := openSession(t)
	sink := &recSink{failFrame: 5}
	_, err := s.Generate(context.Background(), base("full disk", 41), sink, nil)
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("failing sink: %v", err)
	}
	if sink.aborts != 1 || sink.closes != 0 {
		t.Errorf("failing sink: %d aborts, %d closes", sink.aborts, sink.closes)
	}
	dir := t.TempDir()
	broken := filepath.Join(dir, "broken.png")
	os.WriteFile(broken, []byte("\x89PNG\r\n\x1a\nnot really"), 0o644)
	for _, r := range []engine.Request{
		with(base("x", 1), func(r *engine.Request) { r.First = filepath.Join(dir, "missing.png") }),
		with(base("x", 1), func(r *engine.Request) { r.First = broken }),
	} {
		sink := &recSink{}
		_, err := s.Generate(context.Background(), r, sink, nil)
		if err == nil || sink.aborts != 1 || sink.begins != 0 {
			t.Errorf("%s: %v (sink %d aborts, %d begins)", r.First, err, sink.aborts, sink.begins)
		}
	}
	if _, err := engine.Open(engine.Options{ModelDir: dir, Backend: cpu.New(cpu.Options{})}); err == nil {
		t.Error("a folder without a model opened")
	}
	// A damaged weight file: Open (configs only) succeeds, Generate fails
	// at loading, naming the file, and leaves nothing.
	damaged := ownDemoModel(t)
	shard := filepath.Join(damaged, "FL2VA", "transformer", "model-00001-of-00004.safetensors")
	if err := os.Truncate(shard, 100); err != nil {
		t.Fatal(err)
	}
	bs, err := engine.Open(engine.Options{ModelDir: damaged, Backend: cpu.New(cpu.Options{})})
	if err != nil {
		t.Fatalf("Open reads configs only, yet: %v", err)
	}
	sink = &recSink{}
	_, err = bs.Generate(context.Background(), base("x", 1), sink, nil)
	if err == nil || !strings.Contains(err.Error(), "model-00001-of-00004.safetensors") || sink.aborts != 1 || sink.begins != 0 {
		t.Errorf("damaged transformer: %v (sink %d aborts, %d begins)", err, sink.aborts, sink.begins)
	}
	// A transformer config.json that does not describe its checkpoint (a
	// corrupt num_layers or latents_dim): Plan predicts from the config, so
	// it must be refused from the headers, naming the rule, not planned
	// until memory runs out.
	for _, c := range []struct{ key, want string }{
		{"num_layers", "num_layers 100000000"},
		{"latents_dim", "final_layer.video_out.weight: want shape [400000000 96]"},
	} {
		bad := ownDemoModel(t)
		cfgPath := filepath.Join(bad, "FL2VA", "transformer", "config.json")
		var cfg map[string]any
		b, _ := os.ReadFile(cfgPath)
		if err := json.Unmarshal(b, &cfg); err != nil {
			t.Fatal(err)
		}
		cfg[c.key] = 100_000_000
		b, _ = json.Marshal(cfg)
		os.WriteFile(cfgPath, b, 0o644)
		bs, err := engine.Open(engine.Options{ModelDir: bad, Backend: cpu.New(cpu.Options{})})
		if err != nil {
			t.Fatalf("%s: Open reads configs only, yet: %v", c.key, err)
		}
		p, err := bs.Plan(base("x", 1))
		if err != nil || p.PeakBytes != 0 || !strings.Contains(strings.Join(p.Notes, "\n"), c.want) {
			t.Errorf("%s: Plan: %v, peak %d, notes %q: want no prediction and a note naming %q", c.key, err, p.PeakBytes, p.Notes, c.want)
		}
		sink := &recSink{}
		_, err = bs.Generate(context.Background(), base("x", 1), sink, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) || sink.aborts != 1 || sink.begins != 0 {
			t.Errorf("%s: Generate: %v (sink %d aborts, %d begins), want an error naming %q", c.key, err, sink.aborts, sink.begins, c.want)
		}
		bs.Close()
	}
}

// TestRenderCanvasPreviewsAndBusy: a render canvas runs the model smaller
// and upscales the decoded frames to the output canvas; Preview reports a
// middle frame after every denoising step and every final frame; a second
// Generate while one runs gets ErrBusy.
func TestRenderCanvasPreviewsAndBusy(t *testing.T) {
	s := openSession(t)
	r := base("A paper boat on a pond.", 51)
	r.Width, r.Height, r.RenderWidth, r.RenderHeight = 192, 128, 96, 64
	r.Steps, r.Preview = 3, true
	p, err := s.Plan(r)
	if err != nil {
		t.Fatal(err)
	}
	if p.LatentWidth != 6 || p.LatentHeight != 4 {
		t.Errorf("latent grid %d×%d, want the render canvas's 6×4", p.LatentWidth, p.LatentHeight)
	}
	sink := &recSink{}
	var stepPreviews, finalFrames int
	var busy error
	res, err := s.Generate(context.Background(), r, sink, func(e engine.Event) {
		if e.Preview != nil {
			if e.Preview.Rect.Dx() != 192 || e.Preview.Rect.Dy() != 128 {
				t.Errorf("%s preview is %v", e.Phase, e.Preview.Rect)
			}
			switch e.Phase {
			case engine.PhaseDenoise:
				stepPreviews++
			case engine.PhaseVideoDecode:
				finalFrames++
			}
		}
		if busy == nil {
			_, busy = s.Generate(context.Background(), r, &recSink{}, nil)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(busy, engine.ErrBusy) {
		t.Errorf("a concurrent Generate: %v, want ErrBusy", busy)
	}
	if stepPreviews != 3 || finalFrames != 22 || s.Counters().Previews != 3 {
		t.Errorf("%d step previews, %d final frames, %d previews counted", stepPreviews, finalFrames, s.Counters().Previews)
	}
	if len(sink.Frames) != 22 || sink.Frames[0].Rect.Dx() != 192 || sink.Frames[0].Rect.Dy() != 128 || res.Plan.Request.RenderWidth != 96 {
		t.Errorf("frames %d of %v", len(sink.Frames), sink.Frames[0].Rect)
	}
}
