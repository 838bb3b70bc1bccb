package audiovae

import (
	"context"
	"h3studio/engine/testkit"
	"testing"

	"h3studio/engine/compute/testbackend"
)

// TestEncoderModelParity: the reduced oracle fixture (testdata/README):
// encode mean and log-std (right-padding to the hop, causal attention,
// head mean with adaptive pooling of a 16-wide head up to 32 channels) and
// a decode, float32, rel-L2 < 1e-5, original layout. Measured (CPU):
// encode.mean 1.6e-6, encode.logs 1.6e-6, decode.waveform 6.0e-7.
func TestEncoderModelParity(t *testing.T) {
	f := testkit.Open(t, "testdata/encode.safetensors")
	dir := "testdata/encoder/audio_vae"
	m, err := Open(testbackend.New(t), dir, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	wav, ws := testkit.Float32s(t, f, "encode.waveform")
	mean, logs, err := m.Encode(context.Background(), &Wave{Channels: ws[0], Samples: ws[2], Data: wav}, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantMean, _ := testkit.Float32s(t, f, "encode.mean")
	wantLogs, _ := testkit.Float32s(t, f, "encode.logs")
	lat, ls := testkit.Float32s(t, f, "decode.latents")
	w, err := m.Decode(context.Background(), &Latents{Channels: ls[0], C: ls[1], A: ls[2], Data: lat}, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantWave, _ := testkit.Float32s(t, f, "decode.waveform")
	if len(mean.Data) != len(wantMean) || len(w.Data) != len(wantWave) {
		t.Fatalf("sizes: mean %d vs %d, waveform %d vs %d", len(mean.Data), len(wantMean), len(w.Data), len(wantWave))
	}
	e1, e2, e3 := testkit.RelL2(mean.Data, wantMean), testkit.RelL2(logs.Data, wantLogs), testkit.RelL2(w.Data, wantWave)
	for name, e := range map[string]float64{"encode.mean": e1, "encode.logs": e2, "decode.waveform": e3} {
		if !(e < 1e-5) {
			t.Errorf("%s: rel-L2 %.3g ≥ 1e-5", name, e)
		}
	}
	t.Logf("rel-L2 encode.mean %.2g encode.logs %.2g decode.waveform %.2g", e1, e2, e3)
}
