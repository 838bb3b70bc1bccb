package audiovae

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"h3studio/engine/compute/cpu"
	"h3studio/engine/safetensors"
	"h3studio/engine/testkit"
)

func tinyModel(t testing.TB) *Model {
	t.Helper()
	dir := t.TempDir()
	if err := WriteTestModel(dir, TinyConfig(), 1); err != nil {
		t.Fatal(err)
	}
	m, err := Open(cpu.New(cpu.Options{}), dir, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

func randomLatents(ch, c, a int, seed uint64) *Latents {
	rng := rand.New(rand.NewPCG(seed, 3))
	l := &Latents{Channels: ch, C: c, A: a, Data: make([]float32, ch*c*a)}
	for i := range l.Data {
		l.Data[i] = float32(rng.NormFloat64())
	}
	return l
}

// The Kaiser taps computed from alias-free-torch's recipe equal the
// buffers stored in the (oracle) checkpoint.
func TestKaiserFilterMatchesCheckpoint(t *testing.T) {
	f := testkit.Open(t, "testdata/original/audio_vae/model.safetensors")
	stored, _ := testkit.Float32s(t, f, "decoder.activation_post.upsample.filter")
	got := KaiserSincFilter(0.25, 0.3, 12)
	for i := range stored {
		if math.Abs(float64(got[i]-stored[i])) > 1e-7 {
			t.Errorf("tap %d: %v, checkpoint %v", i, got[i], stored[i])
		}
	}
}

// TestEncoderBranchGainScaled: the test model's encoder residual branches
// end in a conv of gain U[0.8, 1.2)/√15 (15 residual units), the other
// convs keep weight_g 1 + 0.1·N (Inventory's rule against a chaotic
// random encoder).
func TestEncoderBranchGainScaled(t *testing.T) {
	dir := t.TempDir()
	cfg := TinyConfig()
	if err := WriteTestModel(dir, cfg, 1); err != nil {
		t.Fatal(err)
	}
	f, err := safetensors.Open(filepath.Join(dir, "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	beta := 1 / math.Sqrt(15)
	for s := range cfg.EncoderRates {
		for u := 0; u < 3; u++ {
			p := fmt.Sprintf("encoder.block.%d.block.%d.block.", s+1, u)
			g, _ := testkit.Float32s(t, f, p+"3.weight_g")
			for i, v := range g {
				if float64(v) < 0.8*beta-1e-7 || float64(v) >= 1.2*beta+1e-7 {
					t.Fatalf("%s3.weight_g[%d] = %v, want in [%.4f, %.4f)", p, i, v, 0.8*beta, 1.2*beta)
				}
			}
			g, _ = testkit.Float32s(t, f, p+"1.weight_g")
			var mean float64
			for _, v := range g {
				mean += float64(v) / float64(len(g))
			}
			if math.Abs(mean-1) > 0.15 {
				t.Errorf("%s1.weight_g mean %.3f, want 1 + 0.1·N", p, mean)
			}
		}
	}
}

func TestDecodeProgressCancelAndShape(t *testing.T) {
	m := tinyModel(t)
	z := randomLatents(2, 32, 37, 1)
	var events []Progress
	w, err := m.Decode(context.Background(), z, &DecodeOptions{Progress: func(p Progress) { events = append(events, p) }})
	if err != nil {
		t.Fatal(err)
	}
	if w.Channels != 2 || w.Samples != 29600 || len(events) != 16 {
		t.Fatalf("[%d %d] with %d events; want 22 frames of audio = 2×29600 samples, 2×8 blocks", w.Channels, w.Samples, len(events))
	}
	for i, e := range events {
		if e.Done != i+1 || e.Total != 16 || e.Channel != i/8+1 {
			t.Errorf("event %d: %+v", i, e)
		}
	}
	for _, v := range w.Data {
		if !(v >= -1 && v <= 1) {
			t.Fatalf("sample %v outside [-1, 1]", v)
		}
	}
	il := w.Interleaved()
	if il[1] != w.Data[w.Samples] || il[2] != w.Data[1] {
		t.Fatal("interleaving is not L, R, L, R")
	}
	for _, stopAt := range []int{3, 8} {
		ctx, cancel := context.WithCancel(context.Background())
		n := 0
		_, err := m.Decode(ctx, z, &DecodeOptions{Progress: func(p Progress) {
			n++
			if p.Done == stopAt {
				cancel()
			}
		}})
		cancel()
		if !errors.Is(err, context.Canceled) || n != stopAt {
			t.Errorf("cancel at block %d: %d blocks, error %v", stopAt, n, err)
		}
	}
}

// Stereo is a batch of mono channels: each channel decodes alone to the
// same samples.
func TestStereoIsABatchOfMono(t *testing.T) {
	m := tinyModel(t)
	z := randomLatents(2, 32, 5, 2)
	w, err := m.Decode(context.Background(), z, nil)
	if err != nil {
		t.Fatal(err)
	}
	right := &Latents{Channels: 1, C: 32, A: 5, Data: z.Data[32*5:]}
	r, err := m.Decode(context.Background(), right, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range r.Data {
		if w.Data[w.Samples+i] != v {
			t.Fatalf("right channel sample %d: %v in stereo, %v alone", i, w.Data[w.Samples+i], v)
		}
	}
}

func TestEncodePadsToTheHop(t *testing.T) {
	m := tinyModel(t)
	rng := rand.New(rand.NewPCG(4, 4))
	S := 3*800 - 123
	w := &Wave{Channels: 2, Samples: S, Data: make([]float32, 2*S)}
	for i := range w.Data {
		w.Data[i] = 0.5 * float32(rng.NormFloat64())
	}
	mean, logs, err := m.Encode(context.Background(), w, nil)
	if err != nil {
		t.Fatal(err)
	}
	if mean.Channels != 2 || mean.C != 32 || mean.A != 3 || logs.A != 3 {
		t.Fatalf("mean [%d %d %d]", mean.Channels, mean.C, mean.A)
	}
	padded := &Wave{Channels: 2, Samples: 2400, Data: make([]float32, 4800)}
	copy(padded.Data, w.Data[:S])
	copy(padded.Data[2400:], w.Data[S:])
	m2, _, err := m.Encode(context.Background(), padded, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range m2.Data {
		if m2.Data[i] != mean.Data[i] {
			t.Fatalf("explicit zero padding differs at %d", i)
		}
	}
	c, err := m.EncodeCondition(context.Background(), w, nil)
	if err != nil {
		t.Fatal(err)
	}
	rows := c.Rows()
	// row = channel·A + t, features = latent channels, normalized
	if got, want := rows[(1*3+2)*32+5], (mean.Data[(1*32+5)*3+2]-m.Config.LatentsMean[5])/m.Config.LatentsStd[5]; got != want {
		t.Fatalf("condition row value %v, want %v", got, want)
	}
}

func TestRejectsBadInput(t *testing.T) {
	m := tinyModel(t)
	nan := randomLatents(2, 32, 4, 1)
	nan.Data[32*4+7] = float32(math.NaN())
	for _, c := range []struct {
		name string
		z    *Latents
		rule string
	}{
		{"16 channels", randomLatents(2, 16, 4, 1), "latents have 16 channels per stereo channel; the audio VAE takes 32 (latent_channels)"},
		{"no frames", &Latents{Channels: 2, C: 32}, "need at least one channel and one latent frame"},
		{"NaN", nan, "non-finite value NaN at stereo channel 1, latent channel 1, frame 3"},
	} {
		if _, err := m.Decode(context.Background(), c.z, nil); err == nil || !strings.Contains(err.Error(), c.rule) {
			t.Errorf("%s: %v, want an error containing %q", c.name, err, c.rule)
		}
	}
	w := &Wave{Channels: 1, Samples: 10, Data: make([]float32, 10)}
	w.Data[4] = float32(math.Inf(-1))
	if _, _, err := m.Encode(context.Background(), w, nil); err == nil || !strings.Contains(err.Error(), "non-finite sample -Inf at channel 0, sample 4") {
		t.Errorf("Inf sample: %v", err)
	}
}

// BenchmarkDecodeTiny22Frames decodes the demo's sound track (22 frames =
// 37 latents, stereo) with TinyConfig's random model.
func BenchmarkDecodeTiny22Frames(b *testing.B) {
	m := tinyModel(b)
	z := randomLatents(2, 32, 37, 1)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := m.Decode(context.Background(), z, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// TestDecodeRefusesNonFiniteOutput: finite latents through a decoder with a
// NaN weight give an error naming the channel and sample, not a waveform of
// NaNs (which the output clamp would pass on).
func TestDecodeRefusesNonFiniteOutput(t *testing.T) {
	dir := t.TempDir()
	if err := WriteTestModel(dir, TinyConfig(), 1); err != nil {
		t.Fatal(err)
	}
	testkit.PoisonTensor(t, filepath.Join(dir, "model.safetensors"), "dec_in_proj.bias")
	m, err := Open(cpu.New(cpu.Options{}), dir, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	_, err = m.Decode(context.Background(), randomLatents(2, 32, 3, 1), nil)
	if err == nil || !strings.Contains(err.Error(), "the decoder produced a non-finite sample NaN at channel 0, sample 0") {
		t.Errorf("err = %v, want the non-finite sample named", err)
	}
}

// The folded weights are the exact v·(g/‖v‖) rounded once (a released
// decoder row: 1,024 channels × 7 taps): a float32 scale g/‖v‖ rounds
// twice, a systematic error per row the float64 reference does not have.
func TestFoldWeightNormRoundsOnce(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 3))
	const rows, per = 16, 1024 * 7
	v := make([]float32, rows*per)
	g := make([]float32, rows)
	for i := range v {
		v[i] = float32(rng.NormFloat64() / math.Sqrt(per))
	}
	for i := range g {
		g[i] = float32(0.1 * (1 + rng.Float64()))
	}
	got := foldWeightNorm(v, g)
	for o := 0; o < rows; o++ {
		// ‖v‖ and the scale to 200 bits.
		ss := new(big.Float).SetPrec(200)
		for _, x := range v[o*per : (o+1)*per] {
			bx := new(big.Float).SetPrec(200).SetFloat64(float64(x))
			ss.Add(ss, bx.Mul(bx, bx))
		}
		scale := new(big.Float).SetPrec(200).Quo(new(big.Float).SetPrec(200).SetFloat64(float64(g[o])), ss.Sqrt(ss))
		for i, x := range v[o*per : (o+1)*per] {
			e := new(big.Float).SetPrec(200).Mul(new(big.Float).SetPrec(200).SetFloat64(float64(x)), scale)
			want, _ := e.Float32()
			if got[o*per+i] != want {
				ef, _ := e.Float64()
				t.Fatalf("row %d element %d: folded %v, exact %v rounds to %v", o, i, got[o*per+i], ef, want)
			}
		}
	}
}
