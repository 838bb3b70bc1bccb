package engine

import (
	"fmt"

	"h3studio/engine/audiovae"
	"h3studio/engine/layout"
	"h3studio/engine/media"
	"h3studio/engine/videovae"
)

// decodeVideo decodes the latents with the video VAE, streaming the frames
// into the output.
func (g *generation) decodeVideo() error {
	s, r, m, t, out := g.s, g.r, g.m, g.t, g.out
	if err := s.loadVideoVAE(m, false, g.videoResidency); err != nil {
		return err
	}
	oc := layout.Canvas{Width: r.Width, Height: r.Height}
	if err := out.Begin(media.OutputFormat(oc.Width, oc.Height, r.Frames)); err != nil {
		return fmt.Errorf("engine: output: %w", err)
	}
	z, err := videovae.WrapVolume(m.DiT.InChannels, g.target.T, g.target.H, g.target.W, g.dres.Latents)
	if err != nil {
		return fmt.Errorf("engine: %w", err)
	}
	zd, err := m.vvae.Denormalize(z)
	if err != nil {
		return fmt.Errorf("engine: %w", err)
	}
	tp, err := m.vvae.Plan(g.target.H, g.target.W, nil)
	if err != nil {
		return fmt.Errorf("engine: %w", err)
	}
	dp, err := m.vvae.Config.Temporal().PlanDecode(g.target.T)
	if err != nil {
		return fmt.Errorf("engine: %w", err)
	}
	t.begin(PhaseVideoDecode, dp.Windows*tp.Tiles(), "tiles")
	written := 0
	var writeErr error
	_, err = m.vvae.DecodeStream(g.ctx, zd, &videovae.DecodeOptions{Progress: func(pr videovae.Progress) { t.step(pr.Done) }},
		func(f videovae.Frame) error {
			img := videovae.ToRGBA(f)
			if img.Rect.Dx() != oc.Width || img.Rect.Dy() != oc.Height {
				img = media.Resize(img, oc.Width, oc.Height, media.Lanczos)
			}
			if err := out.WriteFrame(img); err != nil {
				writeErr = err
				return err
			}
			written++
			s.counters.FramesWritten.Add(1)
			if r.Preview {
				t.preview(img, f.Index, "")
			}
			return nil
		})
	if writeErr != nil {
		return fmt.Errorf("engine: output: %w", writeErr)
	}
	if err != nil {
		return err
	}
	if written != r.Frames {
		return fmt.Errorf("engine: the video VAE decoded %d frames, the request has %d", written, r.Frames)
	}
	if g.release {
		m.releaseVideoVAE()
	}
	return nil
}

// decodeAudio decodes the audio latents with the audio VAE. The sound
// lasts exactly as long as the picture: the decoder's 800·A samples are cut
// (or, by a fraction of a latent, padded with silence) to
// round(frames·32000/24).
func (g *generation) decodeAudio() error {
	s, p, m, t := g.s, g.p, g.m, g.t
	if err := s.loadAudioVAE(m, false); err != nil {
		return err
	}
	lat := &audiovae.Latents{Channels: layout.AudioChannels, C: m.DiT.AudioInChannels, A: p.AudioLatents, Data: g.dres.AudioLatents}
	// One unit per upsampling stage and the output stage, per channel.
	t.begin(PhaseAudioDecode, layout.AudioChannels*(len(m.avae.Config.DecoderRates)+1), "blocks")
	wave, err := m.avae.DecodeToWaveform(g.ctx, lat, &audiovae.DecodeOptions{Progress: func(pr audiovae.Progress) {
		t.total = pr.Total // the decoder's own count, should the two disagree
		t.step(pr.Done)
	}})
	if err != nil {
		return err
	}
	if g.release {
		m.releaseAudioVAE()
	}
	samples := wave.Interleaved()
	n := media.AudioSamplesFor(g.r.Frames, media.SampleRate) * wave.Channels
	if n < len(samples) {
		samples = samples[:n]
	} else if n > len(samples) {
		samples = append(samples, make([]float32, n-len(samples))...)
	}
	g.audio = media.Audio{Rate: media.SampleRate, Channels: wave.Channels, Samples: samples}
	return nil
}

// export writes the sound and closes the output.
func (g *generation) export() error {
	g.t.begin(PhaseExport, 1, "outputs")
	if err := g.ctx.Err(); err != nil {
		return err
	}
	if err := g.out.WriteAudio(g.audio); err != nil {
		return fmt.Errorf("engine: output: %w", err)
	}
	if err := g.out.Close(); err != nil {
		return fmt.Errorf("engine: output: %w", err)
	}
	g.t.step(1)
	return nil
}
