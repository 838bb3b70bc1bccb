package studio

import (
	"image"
	"math"
	"sync"

	"h3studio/engine/media"
)

// SampleTitle labels the sample take so nobody mistakes it for model output.
const SampleTitle = "Sample take — drawn by H3 Studio, not by the model"

// SampleClip draws the sample take shown in the viewer on a first start: a
// two-second loop of a calm sunset over the sea with the sound of waves, so
// the player, the frame strip and the waveform have something to show
// before the first generation. It is drawn in code (no asset), on all
// cores, in well under a second.
func SampleClip() *Clip {
	const (
		w, h   = 640, 360
		frames = 48
		rate   = media.SampleRate
	)
	jpegs := make([][]byte, frames)
	scene := newSunset(w, h)
	var wg sync.WaitGroup
	work := make(chan int)
	for k := 0; k < 4; k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				jpegs[i], _ = viewerFrame(scene.frame(float64(i) / frames))
			}
		}()
	}
	for i := 0; i < frames; i++ {
		work <- i
	}
	close(work)
	wg.Wait()
	return NewClip(w, h, jpegs, waves(frames*rate/media.FPS, rate))
}

// sunset draws the loop's frames: a static sky, sun, hills and sea drawn
// once, then per frame only the drifting cloud streaks and the sun's
// glitter on the water (where they are visible), with a sine table.
type sunset struct {
	w, h    int
	base    []float64 // rgb per pixel
	horizon int       // first sea row
	sunX    float64
}

var sinLUT = func() (t [4096]float64) {
	for i := range t {
		t[i] = math.Sin(2 * math.Pi * float64(i) / 4096)
	}
	return
}()

func fsin(x float64) float64 {
	i := int(x*4096/(2*math.Pi)) & 4095
	return sinLUT[i]
}

func newSunset(w, h int) *sunset {
	s := &sunset{w: w, h: h, base: make([]float64, 3*w*h), sunX: 0.63}
	horizon := 0.60
	s.horizon = int(horizon * float64(h))
	sunY, sunR := 0.47, 0.075
	aspect := float64(w) / float64(h)
	for py := 0; py < h; py++ {
		y := (float64(py) + 0.5) / float64(h)
		for px := 0; px < w; px++ {
			x := (float64(px) + 0.5) / float64(w)
			var c [3]float64
			if py < s.horizon {
				v := y / horizon
				c = mix3(mix3([3]float64{0.10, 0.12, 0.32}, [3]float64{0.45, 0.25, 0.55}, smoothstep(0, 0.6, v)),
					[3]float64{1.0, 0.62, 0.35}, smoothstep(0.45, 1, v))
				dx, dy := (x-s.sunX)*aspect, y-sunY
				d := math.Sqrt(dx*dx + dy*dy)
				c = mix3(c, [3]float64{1.0, 0.85, 0.55}, 0.55*math.Exp(-d*d/0.02))
				if d < sunR {
					c = mix3(c, [3]float64{1.0, 0.93, 0.72}, smoothstep(sunR, sunR-0.004, d))
				}
				ridge := horizon - 0.035 - 0.02*math.Sin(x*7.3+1) - 0.012*math.Sin(x*19+2)
				if y > ridge {
					c = mix3(c, [3]float64{0.22, 0.13, 0.30}, 0.85*smoothstep(ridge, ridge+0.003, y))
				}
			} else {
				v := (y - horizon) / (1 - horizon)
				c = mix3([3]float64{0.55, 0.38, 0.45}, [3]float64{0.05, 0.16, 0.26}, smoothstep(0, 0.7, v))
			}
			copy(s.base[3*(py*w+px):], c[:])
		}
	}
	return s
}

// frame draws the frame at loop time t ∈ [0, 1).
func (s *sunset) frame(t float64) *image.RGBA {
	w, h := s.w, s.h
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	aspect := float64(w) / float64(h)
	horizon := float64(s.horizon) / float64(h)
	for py := 0; py < h; py++ {
		y := (float64(py) + 0.5) / float64(h)
		var band, warp, v, halfPath float64
		if py < s.horizon {
			band = math.Exp(-math.Pow((y-0.30)/0.05, 2)) + 0.6*math.Exp(-math.Pow((y-0.42)/0.03, 2))
			warp = 0.8 * math.Sin(y*40)
		} else {
			v = (y - horizon) / (1 - horizon)
			halfPath = (0.05 + 0.25*v) * 2.2 / aspect // beyond this the glitter is invisible
		}
		for px := 0; px < w; px++ {
			x := (float64(px) + 0.5) / float64(w)
			o := 3 * (py*w + px)
			c := [3]float64{s.base[o], s.base[o+1], s.base[o+2]}
			if py < s.horizon {
				if band > 0.02 && c[0] < 0.99 {
					cl := 0.5 + 0.5*fsin(x*9+2*math.Pi*t+warp)
					c = mix3(c, [3]float64{1.0, 0.78, 0.70}, 0.35*band*cl)
				}
			} else if math.Abs(x-s.sunX) < halfPath {
				wave := fsin(y*220/(0.3+v)+2*math.Pi*t*2+fsin(x*30)) * 0.5
				q := (x - s.sunX) * aspect / (0.05 + 0.25*v)
				path := math.Exp(-q * q)
				glitter := math.Max(0, wave+0.2*fsin(x*170+2*math.Pi*t*3)) * path
				c = mix3(c, [3]float64{1.0, 0.80, 0.50}, math.Min(1, glitter*0.9))
				c = mix3(c, [3]float64{0.02, 0.08, 0.14}, 0.15*(0.5+0.5*wave)*v)
			}
			p := py*img.Stride + 4*px
			img.Pix[p], img.Pix[p+1], img.Pix[p+2], img.Pix[p+3] = unit8(c[0]), unit8(c[1]), unit8(c[2]), 255
		}
	}
	return img
}

// waves synthesises breaking waves: filtered noise swelling twice in the
// loop, over a low, soft chord.
func waves(n, rate int) media.Audio {
	a := media.Audio{Rate: rate, Channels: 2, Samples: make([]float32, 2*n)}
	var l1, l2, r1, r2 float64
	seed := uint32(12345)
	noise := func() float64 {
		seed ^= seed << 13
		seed ^= seed >> 17
		seed ^= seed << 5
		return float64(seed)/float64(math.MaxUint32)*2 - 1
	}
	for i := 0; i < n; i++ {
		t := float64(i) / float64(n)
		swell := 0.35 + 0.65*math.Pow(0.5-0.5*math.Cos(2*math.Pi*2*t), 2)
		l1 += 0.05 * (noise() - l1)
		l2 += 0.2 * (l1 - l2)
		r1 += 0.05 * (noise() - r1)
		r2 += 0.2 * (r1 - r2)
		sec := float64(i) / float64(rate)
		chord := 0.03 * (math.Sin(2*math.Pi*110*sec) + 0.7*math.Sin(2*math.Pi*164.8*sec) + 0.5*math.Sin(2*math.Pi*220*sec))
		fade := math.Min(1, math.Min(t, 1-t)*40) // no click at the loop point
		a.Samples[2*i] = float32((2.2*l2*swell + chord) * fade)
		a.Samples[2*i+1] = float32((2.2*r2*swell + chord) * fade)
	}
	return a
}

func mix3(a, b [3]float64, t float64) [3]float64 {
	t = math.Max(0, math.Min(1, t))
	return [3]float64{a[0] + (b[0]-a[0])*t, a[1] + (b[1]-a[1])*t, a[2] + (b[2]-a[2])*t}
}

func smoothstep(e0, e1, x float64) float64 {
	t := math.Max(0, math.Min(1, (x-e0)/(e1-e0)))
	return t * t * (3 - 2*t)
}

func unit8(v float64) uint8 { return uint8(math.Max(0, math.Min(255, math.Round(v*255)))) }

// The first start's real sample take: SampleClip is only the instant
// placeholder; RenderSampleTake then renders a take with the demo
// checkpoint through the job queue like any other (it lands in the
// library with its take.json) and shows it in place of the placeholder.
const (
	// SampleTakeTitle is the rendered sample take's title.
	SampleTakeTitle = "Sample take — made by the demo model (tiny random weights)"
	// SampleTakeNote is recorded in its take.json.
	SampleTakeNote = "Rendered by H3 Studio on its first start with the demo checkpoint, whose weights are random: it shows the whole pipeline working, not a meaningful video."
	samplePrompt   = "A calm evening sky over the sea, soft colours drifting slowly; gentle waves and a warm, sustained chord."
	sampleSeed     = 42
	sampleSteps    = 4
)

// SampleDraft is the sample take's request: the demo settings (256×256,
// 22 frames) with 4 steps and a fixed seed.
func SampleDraft() Draft {
	d := NewDraft()
	d.Prompt = samplePrompt
	d.Settings = DemoSettings()
	d.Settings.Speed.Steps = sampleSteps
	d.Settings.Seed = sampleSeed
	return d
}

// RenderSampleTake asks for the first start's sample take: as soon as the
// demo checkpoint is open and the library is read, and only if the library
// is empty, the studio queues SampleDraft as a job (shown as "Sample take"
// in the progress panel, cancelled by Close or Cancel like any job; the
// viewer keeps the placeholder until the take is saved, then shows it
// unless the user has chosen something else). It runs at most once.
func (q Queue) RenderSampleTake() {
	q.s.update(func() {
		q.s.sampleWanted = true
		q.s.maybeSampleLocked()
	})
}

// maybeSampleLocked queues the sample take when everything it needs is
// there.
func (s *Studio) maybeSampleLocked() {
	if !s.sampleWanted || s.closed || s.gen == nil || !s.model.Ready || !s.model.Info.Demo || !s.libLoaded {
		return
	}
	s.sampleWanted = false
	if len(s.takes) > 0 {
		return
	}
	s.enqueueJobLocked(SampleDraft(), nil, true)
}
