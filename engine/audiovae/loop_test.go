package audiovae

import (
	"context"
	"h3studio/engine/testkit"
	"testing"

	"h3studio/engine/compute/testbackend"
)

// TestLoopDecodeToWaveform: the loop fixtures' out.audio recomputed from
// their out.audio_latents (the pipeline's AudioDecodeStep: de-normalize,
// decode, [2, 1, S] → [1, 2, S]). Measured (seed 0): 1.1e-6 to 1.2e-6
// (float32 summation order, see TestDecodeParity).
func TestLoopDecodeToWaveform(t *testing.T) {
	f := testkit.Open(t, "testdata/loop_audio.safetensors")
	m := openLayout(t, testbackend.New(t), "original")
	for _, loop := range []string{"loop_t2va_f32", "loop_fl2va_f32", "loop_t2va_bf16"} {
		lat, ls := testkit.Float32s(t, f, loop+".out.audio_latents")
		want, ws := testkit.Float32s(t, f, loop+".out.audio")
		w, err := m.DecodeToWaveform(context.Background(), &Latents{Channels: ls[0], C: ls[1], A: ls[2], Data: lat}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if w.Channels != ws[1] || w.Samples != ws[2] {
			t.Fatalf("%s: [%d %d], fixture %v", loop, w.Channels, w.Samples, ws)
		}
		e := testkit.RelL2(w.Data, want)
		if !(e < 1e-5) {
			t.Errorf("%s: out.audio rel-L2 %.3g ≥ 1e-5", loop, e)
		}
		t.Logf("%s: out.audio rel-L2 %.2g", loop, e)
	}
}
