package audiovae

import (
	"context"
	"errors"
	"fmt"
	"math"

	"h3studio/engine/compute"
	"h3studio/engine/configfile"
	"h3studio/engine/nn"
)

// Latents are audio latents [Channels, C, A]: one [C, A] block per stereo
// channel (the pipeline's [2, 32, A]; channels are never interleaved).
type Latents struct {
	Channels, C, A int
	Data           []float32
}

// Wave is PCM [Channels, Samples], channel-major, in [−1, 1] for decoder
// output.
type Wave struct {
	Channels, Samples int
	Data              []float32
}

// Interleaved returns the samples interleaved L, R, L, R, … (what muxers
// and media.Audio take).
func (w *Wave) Interleaved() []float32 {
	out := make([]float32, len(w.Data))
	for c := 0; c < w.Channels; c++ {
		for i := 0; i < w.Samples; i++ {
			out[i*w.Channels+c] = w.Data[c*w.Samples+i]
		}
	}
	return out
}

// Rows returns the latents as DiT rows [Channels·A, C]: row = channel·A + t
// (all left-channel rows, then all right; spec §9.6).
func (l *Latents) Rows() []float32 {
	out := make([]float32, len(l.Data))
	for ch := 0; ch < l.Channels; ch++ {
		for c := 0; c < l.C; c++ {
			for t := 0; t < l.A; t++ {
				out[(ch*l.A+t)*l.C+c] = l.Data[(ch*l.C+c)*l.A+t]
			}
		}
	}
	return out
}

// Progress reports decode/encode progress: one unit per upsampling stage
// (and the output stage) of each channel when decoding, one per channel
// when encoding.
type Progress struct {
	Channel, Channels int // 1-based
	Done, Total       int
}

// DecodeOptions configure Decode; the zero value is the reference.
type DecodeOptions struct {
	// Progress, when set, is called on the calling goroutine after every
	// block; it must not block.
	Progress func(Progress)
}

func (m *Model) checkLatents(l *Latents) error {
	cfg := m.Config
	switch {
	case l == nil:
		return errors.New("audiovae: no latents")
	case l.C != cfg.LatentChannels:
		return fmt.Errorf("audiovae: latents have %d channels per stereo channel; the audio VAE takes %d (latent_channels)", l.C, cfg.LatentChannels)
	case l.Channels < 1 || l.A < 1 || len(l.Data) != l.Channels*l.C*l.A:
		return fmt.Errorf("audiovae: latents [%d %d %d] with %d values: need at least one channel and one latent frame", l.Channels, l.C, l.A, len(l.Data))
	}
	for i, v := range l.Data {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			per := l.C * l.A
			return fmt.Errorf("audiovae: latents have a non-finite value %v at stereo channel %d, latent channel %d, frame %d (every value must be finite)", v, i/per, (i%per)/l.A, i%l.A)
		}
	}
	return nil
}

// Denormalize returns z·std + mean per latent channel (a product then a
// sum, each rounded to float32, as the pipeline computes it).
func (m *Model) Denormalize(l *Latents) (*Latents, error) {
	return m.perChannel(l, configfile.Denormalize)
}

// Normalize returns (z − mean)/std per latent channel.
func (m *Model) Normalize(l *Latents) (*Latents, error) {
	return m.perChannel(l, configfile.Normalize)
}

// perChannel checks the latents l and returns f(x, std, mean) of each
// value with its latent channel's statistics.
func (m *Model) perChannel(l *Latents, f func(x, std, mean float32) float32) (*Latents, error) {
	if err := m.checkLatents(l); err != nil {
		return nil, err
	}
	o := &Latents{Channels: l.Channels, C: l.C, A: l.A, Data: make([]float32, len(l.Data))}
	for i, v := range l.Data {
		c := (i / l.A) % l.C
		o.Data[i] = f(v, m.Config.LatentsStd[c], m.Config.LatentsMean[c])
	}
	return o, nil
}

// InputProjection returns dec_in_proj of de-normalized latents:
// [Channels, latent_dim, A].
func (m *Model) InputProjection(l *Latents) (out []float32, err error) {
	defer compute.Recover(&err)
	if m.dec == nil {
		return nil, errors.New("audiovae: the model was loaded without its decoder")
	}
	if err := m.checkLatents(l); err != nil {
		return nil, err
	}
	for ch := 0; ch < l.Channels; ch++ {
		r := &run{b: m.b, a: nn.NewArena(m.b)}
		z := r.a.New(compute.F32, l.C, l.A)
		compute.Try(m.b.Upload(z, compute.EncodeFloat32(compute.F32, l.Data[ch*l.C*l.A:(ch+1)*l.C*l.A])))
		h := m.dec.inputProjection(r, z)
		v, err := compute.ToFloat32(h)
		r.a.Release()
		if err != nil {
			return nil, err
		}
		out = append(out, v...)
	}
	return out, nil
}

// Decode decodes de-normalized latents [Channels, 32, A] into PCM
// [Channels, hop·A] clamped to [−1, 1] (diffusers
// AutoencoderKLMiniMaxH3Audio.decode with the stereo channels as a batch).
// ctx is checked between blocks.
func (m *Model) Decode(ctx context.Context, l *Latents, o *DecodeOptions) (out *Wave, err error) {
	defer compute.Recover(&err)
	if m.dec == nil {
		return nil, errors.New("audiovae: the model was loaded without its decoder")
	}
	if o == nil {
		o = &DecodeOptions{}
	}
	if err := m.checkLatents(l); err != nil {
		return nil, err
	}
	hop := m.Config.Hop()
	out = &Wave{Channels: l.Channels, Samples: hop * l.A, Data: make([]float32, 0, l.Channels*hop*l.A)}
	p := Progress{Channels: l.Channels, Total: l.Channels * m.dec.stages()}
	for ch := 0; ch < l.Channels; ch++ {
		p.Channel = ch + 1
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("audiovae: decode stopped after %d of %d blocks: %w", p.Done, p.Total, err)
		}
		r := &run{b: m.b, a: nn.NewArena(m.b)}
		z := r.a.New(compute.F32, l.C, l.A)
		compute.Try(m.b.Upload(z, compute.EncodeFloat32(compute.F32, l.Data[ch*l.C*l.A:(ch+1)*l.C*l.A])))
		h := m.dec.inputProjection(r, z)
		r.a.Free(z)
		wave, err := m.dec.forward(r, h, func() error {
			p.Done++
			if o.Progress != nil {
				o.Progress(p)
			}
			if err := ctx.Err(); err != nil && p.Done < p.Total {
				return fmt.Errorf("audiovae: decode stopped after %d of %d blocks: %w", p.Done, p.Total, err)
			}
			return nil
		})
		if err != nil {
			r.a.Release()
			return nil, err
		}
		v, err := compute.ToFloat32(wave)
		r.a.Release()
		if err != nil {
			return nil, fmt.Errorf("audiovae: decode: %w", err)
		}
		if len(v) != out.Samples {
			return nil, fmt.Errorf("audiovae: internal error: decoded %d samples, want %d", len(v), out.Samples)
		}
		// Finite latents can still decode to NaN (a corrupt weight): say so
		// rather than hand on a silent or noisy sound track.
		for i, x := range v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return nil, fmt.Errorf("audiovae: the decoder produced a non-finite sample %v at channel %d, sample %d (check the audio VAE's weights)", x, ch, i)
			}
		}
		out.Data = append(out.Data, v...)
	}
	return out, nil
}

// DecodeToWaveform is the pipeline's audio decode step: normalized latents
// (as the DiT produces them, [2, 32, A]) → ·std + mean → Decode. The
// result's Data is the pipeline's [1, 2, samples] output.
func (m *Model) DecodeToWaveform(ctx context.Context, normalized *Latents, o *DecodeOptions) (*Wave, error) {
	z, err := m.Denormalize(normalized)
	if err != nil {
		return nil, err
	}
	return m.Decode(ctx, z, o)
}

// EncodeOptions configure Encode; the zero value is the reference.
type EncodeOptions struct {
	Progress func(Progress)
}

// Encode encodes PCM [Channels, samples] (each channel a mono waveform at
// the model's sample rate) into the posterior mean and log-std
// [Channels, 32, ⌈samples/hop⌉]. Each channel is right-padded with zeros to
// a multiple of the hop (AutoencoderKLMiniMaxH3Audio.encode). MiniMax-H3
// conditions on the mean.
func (m *Model) Encode(ctx context.Context, w *Wave, o *EncodeOptions) (mean, logs *Latents, err error) {
	defer compute.Recover(&err)
	if m.enc == nil {
		return nil, nil, errors.New("audiovae: the model was loaded without its encoder")
	}
	if o == nil {
		o = &EncodeOptions{}
	}
	if w == nil || w.Channels < 1 || w.Samples < 1 || len(w.Data) != w.Channels*w.Samples {
		return nil, nil, errors.New("audiovae: the waveform is empty or its size disagrees with its channel and sample counts")
	}
	for i, v := range w.Data {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return nil, nil, fmt.Errorf("audiovae: the waveform has a non-finite sample %v at channel %d, sample %d (every sample must be finite)", v, i/w.Samples, i%w.Samples)
		}
	}
	hop := m.Config.Hop()
	A := (w.Samples + hop - 1) / hop
	C := m.Config.LatentChannels
	mean = &Latents{Channels: w.Channels, C: C, A: A}
	logs = &Latents{Channels: w.Channels, C: C, A: A}
	p := Progress{Channels: w.Channels, Total: w.Channels}
	for ch := 0; ch < w.Channels; ch++ {
		p.Channel = ch + 1
		if err := ctx.Err(); err != nil {
			return nil, nil, fmt.Errorf("audiovae: encode stopped after %d of %d channels: %w", p.Done, p.Total, err)
		}
		padded := make([]float32, A*hop)
		copy(padded, w.Data[ch*w.Samples:(ch+1)*w.Samples])
		r := &run{b: m.b, a: nn.NewArena(m.b)}
		x := r.a.New(compute.F32, 1, A*hop)
		compute.Try(m.b.Upload(x, compute.EncodeFloat32(compute.F32, padded)))
		mt, lt := m.enc.forward(r, x)
		mv, err := compute.ToFloat32(mt)
		if err == nil {
			var lv []float32
			if lv, err = compute.ToFloat32(lt); err == nil {
				mean.Data = append(mean.Data, mv...)
				logs.Data = append(logs.Data, lv...)
			}
		}
		r.a.Release()
		if err != nil {
			return nil, nil, fmt.Errorf("audiovae: encode: %w", err)
		}
		p.Done++
		if o.Progress != nil {
			o.Progress(p)
		}
	}
	return mean, logs, nil
}

// EncodeCondition is the reference-audio path: the posterior mean,
// normalized with the latent statistics, [Channels, 32, A]; Rows gives the
// DiT's stereo-channel-major rows.
func (m *Model) EncodeCondition(ctx context.Context, w *Wave, o *EncodeOptions) (*Latents, error) {
	mean, _, err := m.Encode(ctx, w, o)
	if err != nil {
		return nil, err
	}
	return m.Normalize(mean)
}
