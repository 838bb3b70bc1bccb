package testmodel

import (
	"context"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"h3studio/engine/audiovae"
	"h3studio/engine/compute/cpu"
	"h3studio/engine/videovae"
)

// The demo's shaped decoders are judged on what they make of random
// latents (the DiT's output on the demo model is noise moved by a random
// velocity): a smooth, colourful, slowly moving picture and a soft chord.
// Each test also runs the unshaped test model (videovae/audiovae
// WriteTestModel) through the same measure, so the bounds are shown to
// fail on noise.

// picture measures decoded frames [3, F, H, W] in [0, 1] pixels: the mean
// absolute difference of horizontally and vertically neighbouring pixels
// across a 16-px patch border and inside a patch, of successive frames,
// and the spread (std) of the pixels of a frame.
type picture struct {
	border, inside, frameStep, spread float64
}

func measure(v *videovae.Volume) picture {
	var p picture
	var nb, ni, nf int
	px := func(c, t, y, x int) float64 { return float64(v.Data[((c*v.T+t)*v.H+y)*v.W+x]) }
	for c := 0; c < v.C; c++ {
		for t := 0; t < v.T; t++ {
			var sum, sq float64
			for y := 0; y < v.H; y++ {
				for x := 0; x < v.W; x++ {
					a := px(c, t, y, x)
					sum += a
					sq += a * a
					for _, d := range [][2]int{{0, 1}, {1, 0}} {
						y2, x2 := y+d[0], x+d[1]
						if y2 >= v.H || x2 >= v.W {
							continue
						}
						diff := math.Abs(px(c, t, y2, x2) - a)
						if (d[0] == 1 && y2%16 == 0) || (d[1] == 1 && x2%16 == 0) {
							p.border += diff
							nb++
						} else {
							p.inside += diff
							ni++
						}
					}
					if t+1 < v.T {
						p.frameStep += math.Abs(px(c, t+1, y, x) - a)
						nf++
					}
				}
			}
			n := float64(v.H * v.W)
			p.spread += math.Sqrt(max(sq/n-(sum/n)*(sum/n), 0))
		}
	}
	p.border /= float64(nb)
	p.inside /= float64(ni)
	p.frameStep /= float64(nf)
	p.spread /= float64(v.C * v.T)
	return p
}

// noise returns n values N(0, 1) drawn from seed.
func noise(n int, seed uint64) []float32 {
	rng := rand.New(rand.NewPCG(seed, 7))
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	return v
}

func decodeVideo(t *testing.T, dir string, seed uint64) *videovae.Volume {
	t.Helper()
	m, err := videovae.Open(cpu.New(cpu.Options{}), dir, dir+"/source", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	// One 256×256 tile, one 7-latent window: 22 frames.
	z, err := videovae.WrapVolume(24, 7, 16, 16, noise(24*7*16*16, seed))
	if err != nil {
		t.Fatal(err)
	}
	v, err := m.DecodeToPixels(context.Background(), z, nil)
	if err != nil {
		t.Fatal(err)
	}
	if v.C != 3 || v.T != 22 || v.H != 256 || v.W != 256 {
		t.Fatalf("decoded %v", v.Shape())
	}
	return v
}

// TestShapedVideoDecoder: random latents decode to a smooth picture (at a
// patch border neighbouring pixels differ by < 1.5 levels of 255 on
// average, at most 3× as much as inside a patch), with colour (a frame's
// pixels spread > 10 levels), that moves slowly (successive frames differ
// by 0.1–6 levels) and follows the latents (other latents, another
// picture). The unshaped test model fails the smoothness bounds.
func TestShapedVideoDecoder(t *testing.T) {
	shaped := filepath.Join(t.TempDir(), "shaped")
	cfg := VideoVAEConfig()
	weights, err := entries(videoVAEInventory(cfg, Seed))
	if err != nil {
		t.Fatal(err)
	}
	if err := videovae.WriteModel(shaped, cfg, weights); err != nil {
		t.Fatal(err)
	}
	v := decodeVideo(t, shaped, 1)
	p := measure(v)
	const level = 1.0 / 255
	t.Logf("shaped: border %.2f, inside %.2f, frame step %.2f, spread %.1f (levels of 255)", p.border/level, p.inside/level, p.frameStep/level, p.spread/level)
	if p.border > 1.5*level || p.border > 3*p.inside {
		t.Errorf("patch borders show: neighbours differ by %.2f levels across a border, %.2f inside", p.border/level, p.inside/level)
	}
	if p.spread < 10*level {
		t.Errorf("a frame's pixels spread by only %.1f levels: no picture", p.spread/level)
	}
	if p.frameStep < 0.1*level || p.frameStep > 6*level {
		t.Errorf("successive frames differ by %.2f levels, want a slow movement (0.1–6)", p.frameStep/level)
	}
	w := decodeVideo(t, shaped, 2)
	var d float64
	for i := range v.Data {
		d += math.Abs(float64(v.Data[i] - w.Data[i]))
	}
	if d /= float64(len(v.Data)); d < 10*level {
		t.Errorf("other latents change the picture by %.1f levels on average", d/level)
	}

	plain := filepath.Join(t.TempDir(), "plain")
	if err := videovae.WriteTestModel(plain, videovae.TinyConfig(), Seed); err != nil {
		t.Fatal(err)
	}
	q := measure(decodeVideo(t, plain, 1))
	t.Logf("unshaped: border %.2f, inside %.2f (levels of 255)", q.border/level, q.inside/level)
	if q.border <= 1.5*level {
		t.Errorf("the unshaped test model passes the smoothness bound (%.2f levels): the bound cannot fail", q.border/level)
	}
}

// band returns the share of x's energy between lo and hi Hz (a direct DFT
// of the bins in the band against Parseval's total).
func band(x []float32, rate int, lo, hi float64) float64 {
	n := len(x)
	var total float64
	for _, v := range x {
		total += float64(v) * float64(v)
	}
	var in float64
	for k := int(math.Ceil(lo * float64(n) / float64(rate))); float64(k) < hi*float64(n)/float64(rate); k++ {
		var re, im float64
		for i, v := range x {
			a := 2 * math.Pi * float64(k) * float64(i) / float64(n)
			re += float64(v) * math.Cos(a)
			im -= float64(v) * math.Sin(a)
		}
		in += 2 * (re*re + im*im) / float64(n) // positive and negative bins
	}
	return in / total
}

func decodeAudio(t *testing.T, dir string, seed uint64) *audiovae.Wave {
	t.Helper()
	m, err := audiovae.Open(cpu.New(cpu.Options{}), dir, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	// One second of stereo latents.
	l := &audiovae.Latents{Channels: 2, C: 32, A: 40, Data: noise(2*32*40, seed)}
	w, err := m.DecodeToWaveform(context.Background(), l, nil)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// TestShapedAudioDecoder: random latents decode to a soft sound (RMS
// 0.03–0.25, peaks < 0.6) whose energy lies almost all (> 90 %) between 100
// and 300 Hz, where the chord's 160, 200 and 240 Hz are. The unshaped test
// model's output is broadband.
func TestShapedAudioDecoder(t *testing.T) {
	shaped := filepath.Join(t.TempDir(), "shaped")
	cfg := audiovae.TinyConfig()
	weights, err := entries(audioVAEInventory(cfg, Seed))
	if err != nil {
		t.Fatal(err)
	}
	if err := audiovae.WriteModel(shaped, cfg, weights); err != nil {
		t.Fatal(err)
	}
	w := decodeAudio(t, shaped, 1)
	for ch := 0; ch < w.Channels; ch++ {
		x := w.Data[ch*w.Samples : (ch+1)*w.Samples]
		var ss, peak float64
		for _, v := range x {
			ss += float64(v) * float64(v)
			peak = max(peak, math.Abs(float64(v)))
		}
		rms := math.Sqrt(ss / float64(len(x)))
		chord := band(x, cfg.SampleRate, 100, 300)
		t.Logf("shaped channel %d: RMS %.3f, peak %.3f, %.1f %% of the energy in 100–300 Hz", ch, rms, peak, 100*chord)
		if rms < 0.03 || rms > 0.25 || peak > 0.6 {
			t.Errorf("channel %d: RMS %.3f, peak %.3f: want a soft sound", ch, rms, peak)
		}
		if chord < 0.9 {
			t.Errorf("channel %d: %.1f %% of the energy in 100–300 Hz, want the chord (> 90 %%)", ch, 100*chord)
		}
	}

	plain := filepath.Join(t.TempDir(), "plain")
	if err := audiovae.WriteTestModel(plain, cfg, Seed); err != nil {
		t.Fatal(err)
	}
	p := decodeAudio(t, plain, 1)
	if chord := band(p.Data[:p.Samples], cfg.SampleRate, 100, 300); chord >= 0.9 {
		t.Errorf("the unshaped test model has %.1f %% of its energy in 100–300 Hz: the bound cannot fail", 100*chord)
	}
}

// TestDiTTextScale: every block's AdaLN bias carries textScale on the text
// rows' attention scale (and nothing else changed).
func TestDiTTextScale(t *testing.T) {
	c := DiTConfig()
	H := c.HiddenSize
	n := 0
	for _, s := range ditInventory(c, Seed) {
		if !strings.HasSuffix(s.Name, ".adaln_proj.linear.bias") || !strings.HasPrefix(s.Name, "blocks.") {
			continue
		}
		n++
		v := s.Values(Seed)
		for j, x := range v {
			inSlot := j >= 7*H && j < 8*H // modality 1 (text), slot 1 (scale_msa)
			if inSlot != (x > textScale/2) {
				t.Fatalf("%s[%d] = %v", s.Name, j, x)
			}
		}
	}
	if n != c.NumLayers {
		t.Errorf("%d blocks shaped, want %d", n, c.NumLayers)
	}
}
