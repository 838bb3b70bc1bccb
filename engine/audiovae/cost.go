package audiovae

import (
	"fmt"
)

// DecodeCost is the predicted work and storage of decoding A latent frames
// per channel, computed from shapes alone and mirroring this package's
// decoder (CPU FLOP conventions: a multiply-add is 2 FLOPs). cost_test.go
// checks it against the CPU backend's counters.
type DecodeCost struct {
	Channels, Latents, Samples int
	FLOPs                      float64 // all channels
	WeightBytes                int64   // dec_in_proj + decoder, weight norm folded, filters expanded per channel
	DeviceBytes                int64   // peak activations while one channel decodes
	HostBytes                  int64   // the output waveform and one channel's download
	PeakBytes                  int64
}

// EstimateDecode predicts Decode's cost for [channels, 32, A] latents.
func EstimateDecode(cfg *Config, channels, A int) (DecodeCost, error) {
	if channels < 1 || A < 1 {
		return DecodeCost{}, fmt.Errorf("audiovae: EstimateDecode: %d channels × %d latents", channels, A)
	}
	hop := cfg.Hop()
	c := DecodeCost{Channels: channels, Latents: A, Samples: hop * A}
	LD, Cl := float64(cfg.LatentDim), float64(cfg.LatentChannels)
	D0 := cfg.DecoderDim
	af := float64(A)
	fl := 2*LD*af*Cl + 2*float64(D0)*af*LD*7
	const K = 12 // Kaiser taps
	act := func(C, L float64) float64 {
		return 2*C*(L+K-2)*K + 8*C*2*L + 2*C*L*K
	}
	// Peak activations: the dec_in_proj/conv_pre boundary, then each stage.
	peak := int64(cfg.LatentChannels*A+cfg.LatentDim*A) * 4
	peak = max(peak, int64(cfg.LatentDim*A+D0*A)*4)
	L := A
	for i, u := range cfg.DecoderRates {
		k := cfg.DecoderKernels[i]
		cin, C := D0>>i, D0>>(i+1)
		fl += 2 * float64(cin) * float64(C) * float64(L) * float64(k)
		peak = max(peak, int64(cin*L+C*L*u)*4)
		L *= u
		Cf, Lf := float64(C), float64(L)
		for j, rk := range cfg.ResblockKernels {
			for range cfg.ResblockDilations[j] {
				fl += 2*act(Cf, Lf) + 2*(2*Cf*Lf*Cf*float64(rk)) + Cf*Lf
			}
		}
		fl += float64(len(cfg.ResblockKernels)-1)*Cf*Lf + 2*Cf*Lf // accumulate, ÷kernels
		// Inside the second activation of a dilation with an earlier
		// resblock's sum alive: stage input y, the sum, the block's x, t2,
		// then the ×2 signal with the padded input or the low-passed output.
		nb := 3
		if len(cfg.ResblockKernels) > 1 {
			nb = 4
		}
		peak = max(peak, int64(C*(nb*L+2*L+max(L+K-2, L)))*4)
	}
	last := D0 >> len(cfg.DecoderRates)
	fl += act(float64(last), float64(L)) + 2*float64(L)*float64(last)*7 + float64(L)
	peak = max(peak, int64(last*(L+2*L+max(L+K-2, L)))*4)
	c.FLOPs = fl * float64(channels)
	c.DeviceBytes = peak
	c.WeightBytes = decoderWeightBytes(cfg)
	c.HostBytes = int64(channels*c.Samples+c.Samples) * 4
	c.PeakBytes = c.WeightBytes + c.DeviceBytes + c.HostBytes
	return c, nil
}

// decoderWeightBytes counts the decoder's tensors as loaded: folded
// weights (g dropped), biases, SnakeBeta parameters and the two Kaiser
// filters expanded to one row per channel.
func decoderWeightBytes(cfg *Config) int64 {
	var n int64
	for name, shape := range TensorShapes(cfg) {
		if !(len(name) > 8 && (name[:8] == "decoder." || name[:8] == "dec_in_p")) || hasSuffix(name, ".weight_g") {
			continue
		}
		e := int64(1)
		for _, d := range shape {
			e *= int64(d)
		}
		if hasSuffix(name, ".filter") {
			e = 0
		}
		n += e
	}
	act := func(C int) int64 { return int64(2 * C * 12) }
	D0 := cfg.DecoderDim
	for i := range cfg.DecoderRates {
		C := D0 >> (i + 1)
		for j := range cfg.ResblockKernels {
			n += int64(2*len(cfg.ResblockDilations[j])) * act(C)
		}
	}
	n += act(D0 >> len(cfg.DecoderRates))
	return 4 * n
}

func hasSuffix(s, suf string) bool { return len(s) >= len(suf) && s[len(s)-len(suf):] == suf }
