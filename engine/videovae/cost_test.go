package videovae

import (
	"math"
	"testing"

	"h3studio/engine/compute"
	"h3studio/engine/compute/cpu"
)

// The analytic per-tile cost equals what the CPU backend counts for a real
// Decoder.Forward: FLOPs exactly, and the peak of its live storage.
func TestTileCostMatchesBackendCounters(t *testing.T) {
	b := cpu.New(cpu.Options{})
	m := tinyModel(t, b)
	for _, g := range [][3]int{{7, 4, 4}, {7, 3, 5}} {
		z := randomVolume(24, g[0], g[1], g[2], 1)
		for k, v := range m.dec.ropeCache { // the tables are part of a tile's cost
			b.Free(v[0], v[1])
			delete(m.dec.ropeCache, k)
		}
		before := b.Stats()
		b.ResetPeak()
		if _, err := m.dec.Forward(b, z); err != nil {
			t.Fatal(err)
		}
		after := b.Stats()
		n := g[0] * g[1] * g[2]
		fl, dev := tileCost(m.Config, n, n+m.Config.DecoderRegisters+1)
		if got := after.FLOPs - before.FLOPs; got != fl {
			t.Errorf("tile %v: backend counted %.0f FLOPs, estimate %.0f", g, got, fl)
		}
		if got := after.PeakBytes - before.LiveBytes; got != dev {
			t.Errorf("tile %v: backend peak %d bytes above the weights, estimate %d", g, got, dev)
		}
	}
}

func TestEstimateDecodeReleased(t *testing.T) {
	cfg := releasedConfig()
	for _, c := range []struct {
		name              string
		frames, h, w      int
		tiling            Tiling
		windows, tiles, s int
	}{
		{"512²×22 fixed", 22, 512, 512, TileFixed, 1, 9, 1797},
		{"512²×22 adaptive", 22, 512, 512, TileAdaptive, 1, 4, 7*18*18 + 5},
		{"1344×768×124 fixed", 124, 768, 1344, TileFixed, 7, 28, 1797},
		{"1344×768×124 adaptive", 124, 768, 1344, TileAdaptive, 7, 15, 7*20*20 + 5},
	} {
		T := cfg.Temporal().EncodeLatents(c.frames)
		est, err := EstimateDecode(cfg, T, c.h/16, c.w/16, &DecodeOptions{Tiling: c.tiling}, compute.Invalid)
		if err != nil {
			t.Fatal(err)
		}
		if est.Frames != c.frames || est.Windows != c.windows || est.Plan.Tiles() != c.tiles || est.TileTokens != c.s {
			t.Errorf("%s: %d frames, %d windows, %s, %d tokens; want %d, %d, %d tiles, %d", c.name, est.Frames, est.Windows, est.Plan, est.TileTokens, c.frames, c.windows, c.tiles, c.s)
		}
		// The released decoder holds ≈2.42 B parameters (spec §8.12).
		if p := float64(est.WeightBytes) / 4; math.Abs(p-2.42e9)/2.42e9 > 0.01 {
			t.Errorf("%s: %.3g decoder parameters, want ≈2.42e9", c.name, p)
		}
		t.Logf("%-22s %s, %d passes of %d tokens: %.3g TFLOP (%.3g per tile); peak %.2f GiB = weights %.2f + device %.2f + host %.2f",
			c.name, est.Plan, est.TilePasses, est.TileTokens, est.FLOPs/1e12, est.FLOPsPerTile/1e12,
			gib(est.PeakBytes), gib(est.WeightBytes), gib(est.DeviceBytes), gib(est.HostBytes))
	}
}

func gib(b int64) float64 { return float64(b) / (1 << 30) }

// releasedConfig is the released video VAE (spec §8.1).
func releasedConfig() *Config {
	c := TinyConfig()
	c.BlockOutChannels = []int{128, 256, 256, 512, 512, 1024}
	c.LayersPerBlock = 2
	c.SpatialDownsample = []int{2, 2, 2, 2, 1, 1}
	c.TemporalDownsample = []int{1, 2, 2, 1, 1, 1}
	c.DecoderLayers, c.DecoderHeads, c.DecoderHeadDim, c.DecoderFFNHidden = 36, 32, 64, 8192
	return c
}

// decoderWeightBytes is what a decoder-only load holds (mapped or copied).
func TestDecoderWeightBytes(t *testing.T) {
	dir := t.TempDir()
	if err := WriteTestModel(dir, TinyConfig(), 1); err != nil {
		t.Fatal(err)
	}
	for _, dt := range []compute.DType{compute.Invalid, compute.BF16} {
		b := cpu.New(cpu.Options{})
		m, err := Open(b, dir, dir+"/source", &Options{DecoderOnly: true, WeightDType: dt})
		if err != nil {
			t.Fatal(err)
		}
		st := b.Stats()
		if want := decoderWeightBytes(m.Config, max(dt, compute.F32)); st.LiveBytes+st.MappedBytes != want {
			t.Errorf("%v: decoder holds %d bytes (%d copied, %d mapped), estimate %d", dt, st.LiveBytes+st.MappedBytes, st.LiveBytes, st.MappedBytes, want)
		}
		m.Close()
	}
}

// A model with its encoder releases the encoder to the decoder's weights
// (decoderWeightBytes), and Close frees everything it holds, the RoPE
// tables a decode built included.
func TestReleaseEncoderAndClose(t *testing.T) {
	dir := t.TempDir()
	if err := WriteTestModel(dir, TinyConfig(), 1); err != nil {
		t.Fatal(err)
	}
	b := cpu.New(cpu.Options{})
	m, err := Open(b, dir, dir+"/source", nil)
	if err != nil {
		t.Fatal(err)
	}
	held := func() int64 { st := b.Stats(); return st.LiveBytes + st.MappedBytes }
	full := held()
	m.ReleaseEncoder()
	if m.CanEncode() || held() != decoderWeightBytes(m.Config, compute.F32) || held() >= full {
		t.Errorf("after ReleaseEncoder: can encode %v, %d bytes held (%d with the encoder), want the decoder's %d",
			m.CanEncode(), held(), full, decoderWeightBytes(m.Config, compute.F32))
	}
	if _, err := m.dec.Forward(b, randomVolume(24, 7, 4, 4, 1)); err != nil {
		t.Fatal(err)
	}
	if len(m.dec.ropeCache) == 0 {
		t.Fatal("the decode cached no RoPE tables")
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if st := b.Stats(); st.LiveBytes != 0 || st.MappedBytes != 0 {
		t.Errorf("after Close: %d bytes allocated, %d mapped", st.LiveBytes, st.MappedBytes)
	}
}
