// Package fakeengine is a development stand-in for the MiniMax-H3 engine.
// It plans requests with the engine's rules (the subset the UI needs to
// exercise, with rough estimates) and "generates" synthetic frames and
// sound, going through every phase with progress events, previews and
// cancellation like the real engine.
//
// It exists for tests and for the `h3studio -fake-engine` developer flag. Its
// output is never presented as the model's: it inspects every folder as
// "development fake engine", every frame carries a "fake engine" mark, and
// take.json records the engine.
package fakeengine

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"image"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"

	"h3studio/engine"
	"h3studio/engine/media"
	"h3studio/ui/studio"
)

// Name is how the fake names itself wherever a model name would appear.
const Name = "development fake engine"

// ModelID is the fake weights' identity (engine.Result.ModelID).
const ModelID = "fake:0"

// Options tune the fake.
type Options struct {
	// Delay is slept per unit of work (a text layer, a step, a tile, a
	// frame); 0 runs as fast as possible.
	Delay time.Duration
	// Hold, when set, makes every unit of work wait for a token, so tests
	// can step a generation without sleeping.
	Hold chan struct{}
	// FailAt makes Generate fail when that phase starts.
	FailAt engine.Phase
	// Started, when set, receives the request when Generate starts.
	Started chan engine.Request
	// MemoryBudget, when set, is the device's memory budget the plan's
	// automatic memory mode is chosen against (a mimic of plan.Pick: int4
	// weights need 60 % of the resident peak, streaming 40 %).
	MemoryBudget int64
}

// Engine is a studio.Engine over the fake.
type Engine struct {
	Opts Options
	// Gen is the generator Open returns (shared, so tests can read its
	// counters).
	Gen *Generator
	// DemoDir is where Demo "writes" its checkpoint (a marker folder);
	// empty: a folder under the system's temporary folder.
	DemoDir string
}

// New returns a fake engine.
func New(o Options) *Engine { return &Engine{Opts: o, Gen: &Generator{Opts: o}} }

// Inspect accepts any existing folder (its Demo folder as the demo).
func (e *Engine) Inspect(dir string) studio.ModelInfo {
	info := studio.ModelInfo{Dir: dir, Name: "Fake model (" + Name + ")", Engine: Name,
		Tasks: []engine.Task{engine.TaskT2VA, engine.TaskFL2VA, engine.TaskRef2VA}, Demo: dir == e.demoDir()}
	st, err := os.Stat(dir)
	switch {
	case err != nil:
		info.Problem = fmt.Sprintf("%s can't be read: %v", dir, err)
	case !st.IsDir():
		info.Problem = dir + " is not a folder"
	default:
		info.Usable = true
		info.Report = "model folder: " + dir + "\nengine: " + Name + " (synthetic output for UI development; no weights are read)\n"
	}
	return info
}

// Open returns the shared fake generator.
func (e *Engine) Open(dir string) (studio.Generator, error) { return e.Gen, nil }

// Demo makes an empty marker folder and returns it.
func (e *Engine) Demo() (string, error) {
	dir := e.demoDir()
	return dir, os.MkdirAll(dir, 0o755)
}

func (e *Engine) demoDir() string {
	if e.DemoDir == "" {
		return filepath.Join(os.TempDir(), "h3studio-fake-model")
	}
	return e.DemoDir
}

// Generator is the fake session.
type Generator struct {
	Opts Options

	mu        sync.Mutex
	Plans     int // Plan calls
	Runs      int // Generate calls
	Active    int // Generate calls in progress (must never exceed 1)
	MaxActive int
}

// ErrRefused is wrapped by every Plan refusal.
var ErrRefused = errors.New("request refused")

// Plan validates and resolves a request.
func (g *Generator) Plan(r engine.Request) (engine.Plan, error) {
	g.mu.Lock()
	g.Plans++
	g.mu.Unlock()
	p := engine.Plan{Request: r}
	q := &p.Request
	if q.Width == 0 && q.Height == 0 {
		q.Width, q.Height = 864, 480
	}
	if q.Frames == 0 && q.Seconds > 0 {
		q.Frames = studio.FramesForSeconds(q.Seconds)
	}
	if q.Frames == 0 {
		q.Frames = 56
	}
	if a := studio.AlignFrames(q.Frames); a != q.Frames && q.Frames >= studio.MinFrames && q.Frames <= studio.MaxFrames {
		p.Notes = append(p.Notes, fmt.Sprintf("frames rounded up from %d to %d", q.Frames, a))
		q.Frames = a
	}
	if q.Steps == 0 {
		q.Steps = 20
	}
	for _, c := range []struct {
		ok   bool
		rule string
	}{
		{q.Width%32 == 0 && q.Height%32 == 0 && q.Width >= 32 && q.Height >= 32, fmt.Sprintf("canvas %d×%d: width and height must be multiples of 32, at least 32", q.Width, q.Height)},
		{q.Width*q.Height <= 768*1344, fmt.Sprintf("canvas %d×%d: at most 768·1344 pixels", q.Width, q.Height)},
		{q.Frames >= studio.MinFrames && q.Frames <= studio.MaxFrames, fmt.Sprintf("frames %d: 22..362", q.Frames)},
		{q.Steps >= 2 && q.Steps <= 1000, fmt.Sprintf("steps %d: 2..1000", q.Steps)},
		{!(q.Reuse > 1 && q.CoreReuse > 1), "reuse and core reuse can't both be above 1"},
		{len(q.References) == 0 || (q.First == "" && q.Last == ""), "references can't be combined with first/last frames"},
	} {
		if !c.ok {
			return engine.Plan{}, fmt.Errorf("fakeengine: %w: %s", ErrRefused, c.rule)
		}
	}
	switch {
	case len(q.References) > 0:
		p.Task = engine.TaskRef2VA
	case q.First != "" || q.Last != "":
		p.Task = engine.TaskFL2VA
	default:
		p.Task = engine.TaskT2VA
	}
	p.Forwards = q.Steps
	if q.Reuse > 1 {
		p.Forwards = (q.Steps + q.Reuse - 1) / q.Reuse
	}
	p.LatentFrames = (q.Frames-1)/4 + 1
	p.LatentHeight, p.LatentWidth = q.Height/16, q.Width/16
	p.Rows = p.LatentFrames * p.LatentHeight * p.LatentWidth / 4
	p.PeakBytes = int64(q.Width*q.Height*q.Frames)*12 + 2<<30
	p.Memory = q.Memory
	if p.Memory == engine.MemoryAuto {
		p.Memory = engine.MemoryResident
		if b := g.Opts.MemoryBudget; b > 0 {
			p.MemoryWhy = "resident fits the budget"
			switch {
			case p.PeakBytes <= b:
			case q.Quality != engine.BestQuality && p.PeakBytes*6/10 <= b:
				p.Memory, p.PeakBytes, p.MemoryWhy = engine.MemoryResidentInt4, p.PeakBytes*6/10, "resident-int4 is the fastest mode that fits; resident would not fit"
			default:
				p.Memory, p.PeakBytes, p.MemoryWhy = engine.MemoryStreaming, p.PeakBytes*4/10, "streaming is the fastest mode that fits"
			}
		}
	}
	p.MemoryBudget = g.Opts.MemoryBudget
	unit := g.Opts.Delay
	if unit == 0 {
		unit = time.Millisecond
	}
	p.Estimate = time.Duration(units(p)) * unit
	return p, nil
}

type phaseUnits struct {
	phase engine.Phase
	n     int
}

func phases(p engine.Plan) []phaseUnits {
	ps := []phaseUnits{{engine.PhaseLoad, 2}, {engine.PhaseText, 4}}
	if n := len(p.Request.References); n > 0 {
		ps = append(ps, phaseUnits{engine.PhaseReferences, n})
	} else if p.Request.First != "" || p.Request.Last != "" {
		ps = append(ps, phaseUnits{engine.PhaseReferences, 1})
	}
	return append(ps, phaseUnits{engine.PhaseDenoise, p.Forwards}, phaseUnits{engine.PhaseVideoDecode, 4},
		phaseUnits{engine.PhaseAudioDecode, 2}, phaseUnits{engine.PhaseExport, p.Request.Frames})
}

func units(p engine.Plan) int {
	n := 0
	for _, ph := range phases(p) {
		n += ph.n
	}
	return n
}

// Generate runs a request: progress through every phase, previews during
// denoising when asked, then frames and sound into out.
func (g *Generator) Generate(ctx context.Context, r engine.Request, out media.Sink, progress func(engine.Event)) (res engine.Result, err error) {
	g.mu.Lock()
	g.Runs++
	g.Active++
	g.MaxActive = max(g.MaxActive, g.Active)
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		g.Active--
		g.mu.Unlock()
	}()
	if g.Opts.Started != nil {
		g.Opts.Started <- r
	}
	p, err := g.Plan(r)
	if err != nil {
		return res, err
	}
	q := p.Request
	start := time.Now()
	res = engine.Result{Plan: p, Seed: q.Seed, Frames: q.Frames, Timings: map[engine.Phase]time.Duration{}, PeakBytes: p.PeakBytes, Model: "Fake model (" + Name + ")", ModelID: ModelID}
	if !q.SeedSet {
		res.Seed = 42
	}
	draw := newPainter(q, res.Seed)
	wait := func() error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if g.Opts.Hold != nil {
			select {
			case <-g.Opts.Hold:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		if g.Opts.Delay > 0 {
			select {
			case <-time.After(g.Opts.Delay):
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	}
	begun := false
	abort := func(e error) (engine.Result, error) {
		if begun {
			out.Abort()
		}
		return engine.Result{}, e
	}
	for _, ph := range phases(p) {
		t0 := time.Now()
		if g.Opts.FailAt == ph.phase {
			return abort(fmt.Errorf("fakeengine: simulated failure in %s", ph.phase))
		}
		if ph.phase == engine.PhaseExport {
			if err := out.Begin(media.Format{Width: q.Width, Height: q.Height, FPS: media.FPS, Frames: q.Frames, SampleRate: media.SampleRate, Channels: media.NumChannels}); err != nil {
				return abort(err)
			}
			begun = true
		}
		for i := 0; i < ph.n; i++ {
			if err := wait(); err != nil {
				return abort(err)
			}
			ev := engine.Event{Phase: ph.phase, Done: i + 1, Total: ph.n, Elapsed: time.Since(start)}
			switch ph.phase {
			case engine.PhaseDenoise:
				if q.Preview {
					ev.Preview = draw.frame(q.Frames/2, 1-float64(i+1)/float64(ph.n))
					ev.Frame = q.Frames / 2
				}
			case engine.PhaseExport:
				f := draw.frame(i, 0)
				if err := out.WriteFrame(f); err != nil {
					return abort(err)
				}
				if i == ph.n-1 {
					if err := out.WriteAudio(draw.sound(q.Frames)); err != nil {
						return abort(err)
					}
				}
			}
			progress(ev)
		}
		res.Timings[ph.phase] = time.Since(t0)
	}
	if err := out.Close(); err != nil {
		return engine.Result{}, err
	}
	progress(engine.Event{Phase: engine.PhaseDone, Done: 1, Total: 1, Elapsed: time.Since(start)})
	return res, nil
}

// painter draws the fake's frames: soft moving colour fields chosen by the
// seed and the prompt, with a "fake engine" mark in a corner.
type painter struct {
	w, h   int
	hue    [3]float64
	phase  [3]float64
	frames int
}

func newPainter(r engine.Request, seed uint64) *painter {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d|%s", seed, r.Prompt)
	v := h.Sum64()
	p := &painter{w: r.Width, h: r.Height, frames: r.Frames}
	for i := range p.hue {
		p.hue[i] = float64((v>>(i*16))&0xffff) / 0xffff
		p.phase[i] = float64((v>>(i*8+40))&0xff) / 255 * 2 * math.Pi
	}
	return p
}

func (p *painter) frame(i int, noise float64) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, p.w, p.h))
	t := float64(i) / float64(max(1, p.frames))
	for y := 0; y < p.h; y++ {
		fy := float64(y) / float64(p.h)
		for x := 0; x < p.w; x++ {
			fx := float64(x) / float64(p.w)
			var c [3]float64
			for k := 0; k < 3; k++ {
				c[k] = 0.5 + 0.5*math.Sin(2*math.Pi*(fx*(1+p.hue[k])+fy*(1.5-p.hue[k])+t)+p.phase[k])
			}
			// A light disc drifting across.
			dx, dy := fx-(0.2+0.6*t), fy-0.5
			if d := math.Sqrt(dx*dx + dy*dy); d < 0.18 {
				for k := range c {
					c[k] = c[k]*0.4 + 0.6
				}
			}
			if noise > 0 {
				n := hashNoise(x, y, i)
				for k := range c {
					c[k] = c[k]*(1-noise) + n*noise
				}
			}
			o := y*img.Stride + 4*x
			img.Pix[o], img.Pix[o+1], img.Pix[o+2], img.Pix[o+3] = u8(c[0]), u8(c[1]), u8(c[2]), 255
		}
	}
	mark(img, "fake engine")
	return img
}

func (p *painter) sound(frames int) media.Audio {
	n := frames * media.SampleRate / media.FPS
	a := media.Audio{Rate: media.SampleRate, Channels: 2, Samples: make([]float32, 2*n)}
	f := 220 * (1 + p.hue[0])
	for i := 0; i < n; i++ {
		t := float64(i) / media.SampleRate
		env := 0.25 * math.Min(1, t*8) * math.Min(1, float64(n-i)/media.SampleRate*8)
		v := env * (math.Sin(2*math.Pi*f*t) + 0.3*math.Sin(2*math.Pi*f*1.5*t))
		a.Samples[2*i] = float32(v * (0.6 + 0.4*math.Sin(t)))
		a.Samples[2*i+1] = float32(v * (0.6 - 0.4*math.Sin(t)))
	}
	return a
}

func hashNoise(x, y, i int) float64 {
	v := uint32(x*73856093 ^ y*19349663 ^ i*83492791)
	v ^= v >> 13
	v *= 0x5bd1e995
	v ^= v >> 15
	return float64(v&0xffff) / 0xffff
}

func u8(v float64) uint8 { return uint8(math.Max(0, math.Min(255, math.Round(v*255)))) }

// mark writes a small label in the bottom-right corner on a dark plate.
func mark(img *image.RGBA, text string) {
	face := basicfont.Face7x13
	w := font.MeasureString(face, text).Ceil() + 8
	h := 17
	b := img.Bounds()
	if b.Dx() < w+8 || b.Dy() < h+8 {
		return
	}
	x0, y0 := b.Max.X-w-6, b.Max.Y-h-6
	for y := y0; y < y0+h; y++ {
		for x := x0; x < x0+w; x++ {
			o := img.PixOffset(x, y)
			for k := 0; k < 3; k++ {
				img.Pix[o+k] = img.Pix[o+k] / 3
			}
		}
	}
	d := font.Drawer{Dst: img, Src: image.NewUniform(color.RGBA{255, 210, 120, 255}), Face: face,
		Dot: fixed.P(x0+4, y0+13)}
	d.DrawString(text)
}
