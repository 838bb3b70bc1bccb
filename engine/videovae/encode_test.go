package videovae

import (
	"context"
	"errors"
	"image"
	"math"
	"strings"
	"testing"

	"h3studio/engine/compute"
	"h3studio/engine/compute/cpu"
)

// encoderTestConfig is small enough for unit tests: 4× spatial and
// temporal compression in two levels.
func encoderTestConfig() *Config {
	c := TinyConfig()
	c.BlockOutChannels = []int{32, 64}
	c.SpatialDownsample = []int{2, 2}
	c.TemporalDownsample = []int{2, 2}
	return c
}

func openConfig(t testing.TB, cfg *Config) *Model {
	t.Helper()
	dir := t.TempDir()
	if err := WriteTestModel(dir, cfg, 2); err != nil {
		t.Fatal(err)
	}
	m, err := Open(cpu.New(cpu.Options{}), dir, dir+"/source", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

func equalVolumes(t *testing.T, what string, got, want *Volume) {
	t.Helper()
	if got.C != want.C || got.T != want.T || got.H != want.H || got.W != want.W {
		t.Fatalf("%s: %v vs %v", what, got.Shape(), want.Shape())
	}
	for i := range want.Data {
		if got.Data[i] != want.Data[i] {
			t.Fatalf("%s: element %d = %v, want %v", what, i, got.Data[i], want.Data[i])
		}
	}
}

// The structure of AutoencoderKLMiniMaxH3._encode, checked bit for bit:
// causality (a clip's first latent sees only its first frame, so it equals
// the single-image encode), clip independence, last-frame padding and the
// token drop (F = 17n+5 → T = 5n+2).
func TestEncodeChunking(t *testing.T) {
	m := openConfig(t, encoderTestConfig())
	ctx := context.Background()
	x := randomVolume(3, 34, 16, 16, 5)
	all, err := m.EncodeMoments(ctx, x, nil)
	if err != nil {
		t.Fatal(err)
	}
	if all.C != 48 || all.T != 7 || all.H != 4 || all.W != 4 {
		t.Fatalf("34 frames → %v, want [48 7 4 4]", all.Shape())
	}
	img, err := m.EncodeMoments(ctx, x.Frames(0, 1), nil)
	if err != nil {
		t.Fatal(err)
	}
	equalVolumes(t, "single frame vs first latent of a clip", img, all.Frames(0, 1))
	second, err := m.EncodeMoments(ctx, x.Frames(17, 34), nil)
	if err != nil {
		t.Fatal(err)
	}
	equalVolumes(t, "second clip encoded alone", second, all.Frames(5, 7))
	// 22 frames pad with copies of frame 21 up to 34.
	x22 := x.Frames(0, 22)
	padded := ConcatFrames(x22, x22.Frames(21, 22), x22.Frames(21, 22), x22.Frames(21, 22), x22.Frames(21, 22), x22.Frames(21, 22), x22.Frames(21, 22),
		x22.Frames(21, 22), x22.Frames(21, 22), x22.Frames(21, 22), x22.Frames(21, 22), x22.Frames(21, 22), x22.Frames(21, 22))
	a, err := m.EncodeMoments(ctx, x22, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := m.EncodeMoments(ctx, padded, nil)
	if err != nil {
		t.Fatal(err)
	}
	equalVolumes(t, "22 frames vs explicitly padded 34", a, b)
}

type fixedNoise struct {
	seeds []uint64
}

func (f *fixedNoise) Normal(seed uint64, n int) []float32 {
	f.seeds = append(f.seeds, seed)
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(i%5) - 2
	}
	return v
}

func TestEncodeConditionRules(t *testing.T) {
	m := openConfig(t, encoderTestConfig())
	ctx := context.Background()
	img := image.NewRGBA(image.Rect(0, 0, 16, 8))
	for i := range img.Pix {
		img.Pix[i] = uint8(i * 7)
	}
	px, err := PixelsFromRGBA([]*image.RGBA{img})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := px.Data[px.index(1, 0, 0, 2)], (float32(img.Pix[4*2+1])/255-PixelMean[1])/PixelStd[1]; got != want {
		t.Fatalf("pixel conversion %v, want %v", got, want)
	}
	mo, err := m.EncodeMoments(ctx, px, nil)
	if err != nil {
		t.Fatal(err)
	}
	mean, err := m.EncodeCondition(ctx, px, &EncodeOptions{Posterior: PosteriorMean})
	if err != nil {
		t.Fatal(err)
	}
	wantMean, _ := m.Normalize(PosteriorMeanOf(mo))
	equalVolumes(t, "posterior mean rule", mean, wantMean)

	if _, err := m.EncodeCondition(ctx, px, nil); err == nil || !strings.Contains(err.Error(), "needs a NoiseSource") {
		t.Fatalf("sampling without noise: %v", err)
	}
	noise := &fixedNoise{}
	s, err := m.EncodeCondition(ctx, px, &EncodeOptions{Noise: noise})
	if err != nil {
		t.Fatal(err)
	}
	if len(noise.seeds) != 1 || noise.seeds[0] != 42 {
		t.Fatalf("noise drawn with seeds %v, want one fresh draw seeded 42", noise.seeds)
	}
	n := len(mo.Data) / 2
	eps := (&fixedNoise{}).Normal(42, n)
	for i := 0; i < n; i++ {
		lv := min(max(mo.Data[n+i], -30), 20)
		z := mo.Data[i] + float32(float32(math.Exp(float64(float32(0.5*lv))))*eps[i])
		z = compute.RoundF16(z)
		c := i / (mo.T * mo.H * mo.W)
		want := (z - m.Config.LatentsMean[c]) / m.Config.LatentsStd[c]
		if s.Data[i] != want {
			t.Fatalf("sampled condition element %d = %v, want %v", i, s.Data[i], want)
		}
	}
}

func TestEncodeProgressCancelAndBadInput(t *testing.T) {
	m := openConfig(t, encoderTestConfig())
	x := randomVolume(3, 1, 48, 48, 6)
	o := &EncodeOptions{TileSize: 16, TileOverlap: 8} // 5×5 tiles
	n := 0
	o.Progress = func(p Progress) { n++ }
	if _, err := m.EncodeMoments(context.Background(), x, o); err != nil || n != 25 {
		t.Fatalf("%d progress events, error %v; want 25 tiles", n, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	n = 0
	o.Progress = func(p Progress) {
		n++
		if p.Done == 3 {
			cancel()
		}
	}
	if _, err := m.EncodeMoments(ctx, x, o); !errors.Is(err, context.Canceled) || n != 3 {
		t.Fatalf("cancel after 3 tiles: %d tiles, error %v", n, err)
	}
	nan := randomVolume(3, 1, 16, 16, 1)
	nan.Data[5] = float32(math.NaN())
	for _, c := range []struct {
		name string
		x    *Volume
		rule string
	}{
		{"gray", randomVolume(1, 1, 16, 16, 1), "pixels have 1 channels; the encoder takes 3"},
		{"off-grid canvas", randomVolume(3, 1, 18, 16, 1), "multiples of 4 px"},
		{"NaN", nan, "pixels: non-finite value NaN at channel 0, frame 0, row 0, column 5"},
	} {
		if _, err := m.EncodeMoments(context.Background(), c.x, nil); err == nil || !strings.Contains(err.Error(), c.rule) {
			t.Errorf("%s: %v, want an error containing %q", c.name, err, c.rule)
		}
	}
}

// countdownCtx is a context that reports Canceled from its n-th Err call.
type countdownCtx struct {
	context.Context
	n int
}

func (c *countdownCtx) Err() error {
	c.n--
	if c.n <= 0 {
		return context.Canceled
	}
	return nil
}

// TestEncodeCancelsInsideATile: a cancel lands inside a tile's forward
// (between residual blocks), not only between tiles: one tile of a
// reference video takes seconds on the CPU.
func TestEncodeCancelsInsideATile(t *testing.T) {
	m := openConfig(t, encoderTestConfig())
	x := randomVolume(3, 1, 16, 16, 2) // one tile
	ctx := &countdownCtx{Context: context.Background(), n: 2}
	if _, err := m.EncodeMoments(ctx, x, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancel during the only tile: %v, want context.Canceled", err)
	}
}

// cancelAtConv is the CPU backend that cancels its run when the n-th
// convolution starts, before the kernel computes anything.
type cancelAtConv struct {
	*cpu.Backend
	n      int
	cancel context.CancelFunc
}

func (c *cancelAtConv) Conv(dst, x, w, bias *compute.Tensor, p compute.ConvParams) {
	if c.n--; c.n == 0 {
		c.cancel()
	}
	c.Backend.Conv(dst, x, w, bias, p)
}

// TestEncodeCancelsInsideAConvolution: a cancel that arrives while a
// convolution runs stops that convolution (the CPU backend's kernels check
// the watched context between pieces of their work), not only the next
// one: one convolution of a 768-class reference video's tile takes seconds
// on the CPU. The same encode uncancelled gives the moments bit for bit as
// on a backend nobody watches.
func TestEncodeCancelsInsideAConvolution(t *testing.T) {
	m := openConfig(t, encoderTestConfig())
	x := randomVolume(3, 5, 32, 32, 7)
	want, err := m.enc.Forward(m.b, x)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got, err := m.enc.ForwardContext(ctx, m.b, x)
	if err != nil {
		t.Fatal(err)
	}
	for i := range want.Data {
		if math.Float32bits(got.Data[i]) != math.Float32bits(want.Data[i]) {
			t.Fatalf("moment %d: %g watched, %g unwatched", i, got.Data[i], want.Data[i])
		}
	}
	for _, n := range []int{1, 3} {
		ctx, cancel := context.WithCancel(context.Background())
		b := &cancelAtConv{Backend: cpu.New(cpu.Options{}), n: n, cancel: cancel}
		_, err := m.enc.ForwardContext(ctx, b, x)
		cancel()
		if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "kernel stopped") {
			t.Errorf("cancelled as convolution %d starts: %v, want the kernel stopped by context.Canceled", n, err)
		}
		if b.n != 0 {
			t.Errorf("cancelled as convolution %d starts: %d more convolutions ran", n, -b.n)
		}
	}
}
