package audiovae

import (
	"context"
	"testing"

	"h3studio/engine/compute/cpu"
)

// EstimateDecode equals the CPU backend's counters on a real decode:
// FLOPs and weight storage exactly, the activation peak exactly.
func TestDecodeCostMatchesBackendCounters(t *testing.T) {
	dir := t.TempDir()
	cfg := TinyConfig()
	if err := WriteTestModel(dir, cfg, 1); err != nil {
		t.Fatal(err)
	}
	b := cpu.New(cpu.Options{})
	m, err := Open(b, dir, dir, &Options{DecoderOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	est, err := EstimateDecode(m.Config, 2, 9)
	if err != nil {
		t.Fatal(err)
	}
	before := b.Stats()
	if held := before.LiveBytes + before.MappedBytes; held != est.WeightBytes {
		t.Errorf("loaded decoder holds %d bytes (%d allocated, %d mapped), estimate %d", held, before.LiveBytes, before.MappedBytes, est.WeightBytes)
	}
	b.ResetPeak()
	if _, err := m.Decode(context.Background(), randomLatents(2, 32, 9, 1), nil); err != nil {
		t.Fatal(err)
	}
	after := b.Stats()
	if got := after.FLOPs - before.FLOPs; got != est.FLOPs {
		t.Errorf("backend counted %.0f FLOPs, estimate %.0f", got, est.FLOPs)
	}
	if got := after.PeakBytes - before.LiveBytes; got != est.DeviceBytes {
		t.Errorf("backend peak %d bytes above the weights, estimate %d", got, est.DeviceBytes)
	}
}

// The released audio decoder for the plan's two requests.
func TestEstimateDecodeReleased(t *testing.T) {
	cfg := TinyConfig()
	cfg.EncoderDim, cfg.LatentDim, cfg.DecoderDim = 64, 2048, 1024
	for _, frames := range []int{22, 124} {
		A := (5*frames + 1) / 3 // round(5F/3); never a tie for F = 17n+5
		est, err := EstimateDecode(cfg, 2, A)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%d frames: %d latents → 2×%d samples: %.3g TFLOP; peak %.2f GiB = weights %.2f + device %.2f + host %.3f",
			frames, A, est.Samples, est.FLOPs/1e12, float64(est.PeakBytes)/(1<<30), float64(est.WeightBytes)/(1<<30), float64(est.DeviceBytes)/(1<<30), float64(est.HostBytes)/(1<<30))
		if est.Samples != 800*A {
			t.Errorf("%d samples", est.Samples)
		}
	}
}

// A model with its encoder releases the encoder to the decoder's weights
// (EstimateDecode's WeightBytes), and Close frees everything it holds.
func TestReleaseEncoderAndClose(t *testing.T) {
	dir := t.TempDir()
	cfg := TinyConfig()
	if err := WriteTestModel(dir, cfg, 1); err != nil {
		t.Fatal(err)
	}
	b := cpu.New(cpu.Options{})
	m, err := Open(b, dir, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	est, err := EstimateDecode(m.Config, 2, 9)
	if err != nil {
		t.Fatal(err)
	}
	held := func() int64 { st := b.Stats(); return st.LiveBytes + st.MappedBytes }
	full := held()
	m.ReleaseEncoder()
	if m.CanEncode() || held() != est.WeightBytes || held() >= full {
		t.Errorf("after ReleaseEncoder: can encode %v, %d bytes held (%d with the encoder), want the decoder's %d", m.CanEncode(), held(), full, est.WeightBytes)
	}
	if _, err := m.Decode(context.Background(), randomLatents(2, 32, 9, 1), nil); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if st := b.Stats(); st.LiveBytes != 0 || st.MappedBytes != 0 {
		t.Errorf("after Close: %d bytes allocated, %d mapped", st.LiveBytes, st.MappedBytes)
	}
}
