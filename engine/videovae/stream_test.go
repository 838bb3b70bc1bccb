package videovae

import (
	"context"
	"errors"
	"testing"
	"time"

	"h3studio/engine/compute"
	"h3studio/engine/compute/cpu"
)

// TestStreamedDecodeMatchesResident decodes the same latents (several
// windows of several tiles) with every decoder block resident and with the
// blocks streamed stage by stage across each window's tiles (BF16 matrices
// copied at load, the norms mapped): the output is identical bit for bit,
// the streamed decoder holds no block between decodes, its peak storage is
// lower by what the cost model predicts, and a cancelled streamed decode
// stops.
func TestStreamedDecodeMatchesResident(t *testing.T) {
	z := randomVolume(24, 8, 4, 4, 5)
	rb := cpu.New(cpu.Options{})
	res := tinyModelWith(t, rb, &Options{DecoderOnly: true, WeightDType: compute.BF16})
	rb.ResetPeak()
	want, err := res.Decode(context.Background(), z, smallTiles)
	if err != nil {
		t.Fatal(err)
	}
	resPeak := rb.Stats().FootprintPeak()
	sb := cpu.New(cpu.Options{})
	str := tinyModelWith(t, sb, &Options{DecoderOnly: true, Residency: compute.Streaming, WeightDType: compute.BF16})
	if len(str.dec.blocks) != 0 {
		t.Fatalf("streamed decoder keeps %d blocks bound", len(str.dec.blocks))
	}
	sb.ResetPeak()
	got, err := str.Decode(context.Background(), z, smallTiles)
	if err != nil {
		t.Fatal(err)
	}
	strPeak := sb.Stats().FootprintPeak()
	if len(got.Data) != len(want.Data) {
		t.Fatalf("streamed decode has %d values, resident %d", len(got.Data), len(want.Data))
	}
	for i := range want.Data {
		if got.Data[i] != want.Data[i] {
			t.Fatalf("streamed decode differs from resident at %d: %g vs %g", i, got.Data[i], want.Data[i])
		}
	}
	t.Logf("peak tracked storage: resident %d bytes, streamed %d bytes", resPeak, strPeak)
	if strPeak >= resPeak {
		t.Errorf("streamed peak %d is not below resident %d", strPeak, resPeak)
	}
	// The cost model's saving (resident less streamed: every block, or
	// all but one when a block stage is the streamed peak, less the other
	// tiles' hidden states) equals the backend's, both counting the
	// footprint (the F32 tensors are views of the checkpoint, the BF16
	// matrices copies). In this tiny model the peak falls in the output
	// projection, where no block is bound.
	c, err := EstimateDecode(str.Config, z.T, z.H, z.W, smallTiles, compute.BF16)
	if err != nil {
		t.Fatal(err)
	}
	pred := (c.WeightBytes + c.DeviceBytes) - (c.StreamedWeightBytes + c.StreamedDeviceBytes)
	if got := resPeak - strPeak; got != pred {
		t.Errorf("streaming saves %d bytes of peak storage, the cost model predicts %d", got, pred)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := str.Decode(ctx, z, smallTiles); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled streamed decode: %v", err)
	}
}

// BenchmarkStreamedDecode measures what streaming the decoder's blocks
// costs: the demo model's geometry at 512×512×22 (7 latent frames, 32×32)
// decoded with every block resident and with the blocks streamed (bound per
// stage, released after), alternately in one run on the CPU backend, BF16
// matrices as the engine loads them. It reports each decode's seconds, the
// streamed time over the resident (x-resident; the same kernels on the same
// shapes, so the difference is binding each block once per window) and
// each one's peak tracked storage (MB) beside the cost model's
// (EstimateDecode). The tiny model's weights are small next to its
// hidden states, so here streaming, which keeps every tile's hidden state
// between stages, can hold more than it saves; at the released size the
// blocks' 9 GiB dominate (docs/memory.md).
func BenchmarkStreamedDecode(b *testing.B) {
	z := randomVolume(24, 7, 32, 32, 7)
	rb, sb := cpu.New(cpu.Options{}), cpu.New(cpu.Options{})
	res := tinyModelWith(b, rb, &Options{DecoderOnly: true, WeightDType: compute.BF16})
	str := tinyModelWith(b, sb, &Options{DecoderOnly: true, Residency: compute.Streaming, WeightDType: compute.BF16})
	var tr, ts time.Duration
	rb.ResetPeak()
	sb.ResetPeak()
	for b.Loop() {
		t0 := time.Now()
		if _, err := res.Decode(context.Background(), z, nil); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if _, err := str.Decode(context.Background(), z, nil); err != nil {
			b.Fatal(err)
		}
		tr, ts = tr+t1.Sub(t0), ts+time.Since(t1)
	}
	n := float64(b.N)
	b.ReportMetric(tr.Seconds()/n, "resident-s")
	b.ReportMetric(ts.Seconds()/n, "streamed-s")
	b.ReportMetric(ts.Seconds()/tr.Seconds(), "x-resident")
	b.ReportMetric(float64(rb.Stats().FootprintPeak())/1e6, "resident-peak-MB")
	b.ReportMetric(float64(sb.Stats().FootprintPeak())/1e6, "streamed-peak-MB")
	c, err := EstimateDecode(str.Config, z.T, z.H, z.W, nil, compute.BF16)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(c.WeightBytes+c.DeviceBytes)/1e6, "planned-resident-MB")
	b.ReportMetric(float64(c.StreamedWeightBytes+c.StreamedDeviceBytes)/1e6, "planned-streamed-MB")
}
