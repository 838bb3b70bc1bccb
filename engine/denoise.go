package engine

import (
	"context"
	"fmt"

	"h3studio/engine/compute"
	"h3studio/engine/denoise"
	"h3studio/engine/layout"
	"h3studio/engine/media"
	"h3studio/engine/sampler"
	"h3studio/engine/videovae"
)

// denoise runs the DiT loop from the request's seed.
func (g *generation) denoise() error {
	s, p, r, m, t, cond := g.s, g.p, g.r, g.m, g.t, g.cond
	lh, lw := p.ModelCanvas(r).Latent()
	g.target = layout.Grid{T: p.LatentFrames, H: lh, W: lw}
	if err := s.loadDiT(g.ctx, m, g.mode, t); err != nil {
		return err
	}
	// The loop draws every noise tensor from the seed (the conditions',
	// the video's, the audio's, in the reference's order).
	dreq := denoise.Request{Text: g.hidden, TextTags: g.tags, Target: g.target, AudioLatents: p.AudioLatents,
		Keyframes: cond.keyframes, References: cond.references, Seed: r.Seed, NoiseSource: sampler.Portable,
		Controls: r.Controls()}
	t.begin(PhaseDenoise, r.Steps, "steps")
	pv := &previewer{s: s, m: m, p: p, t: t, ctx: g.ctx, videoResidency: g.videoResidency}
	obs := denoise.Observer{
		Prepared: pv.prepared,
		Step: func(rec *denoise.StepRecord) {
			s.counters.Steps.Add(1)
			if rec.Evaluated {
				s.counters.Forwards.Add(1)
			}
			if r.Preview {
				pv.step(rec)
			}
			t.step(rec.Step + 1)
		},
	}
	dres, err := denoise.Run(g.ctx, m.dit, dreq, obs)
	if err != nil {
		return err
	}
	if pv.err != nil {
		return pv.err
	}
	g.dres = dres
	s.opts.Backend.Free(g.hidden) // the conditioning is the loop's alone
	g.hidden = nil
	if g.release {
		m.releaseDiT()
	}
	return nil
}

// previewer decodes a representative middle frame of the denoiser's
// current estimate of the clean video after every step (Request.Preview):
// x̂0 = x + σ_t·v of the generated rows, unpatchified, its 7-latent window
// around the middle decoded by the video VAE, the window's middle frame
// shown. It costs one window of the final decode per step.
type previewer struct {
	s   *Session
	m   *models
	p   Plan
	t   *tracker
	ctx context.Context
	// videoResidency is how the video VAE holds its decoder's blocks, as
	// the decode will.
	videoResidency compute.Residency

	condRows int
	vt       []float32 // video timesteps per step
	prev     []float32 // the rows entering the step
	err      error
}

func (pv *previewer) prepared(p *denoise.Prepared) {
	pv.condRows = p.Layout.ConditionVideoRows
	pv.vt = p.VideoTimesteps
	pv.prev = append(pv.prev[:0], p.VideoRows...)
}

func (pv *previewer) step(rec *denoise.StepRecord) {
	defer func() { pv.prev = append(pv.prev[:0], rec.VideoRows...) }()
	if pv.err != nil || pv.ctx.Err() != nil {
		return
	}
	m, c := pv.m, pv.m.DiT
	pd := c.PatchDim()
	off := pv.condRows * pd
	x, v := pv.prev[off:], rec.VideoVelocity[off:]
	sigma := 1 - pv.vt[rec.Step]
	x0 := make([]float32, len(x))
	for i := range x {
		x0[i] = x[i] + float32(sigma*v[i])
	}
	lh, lw := pv.p.ModelCanvas(pv.p.Request).Latent()
	vs := layout.VideoShape{C: c.InChannels, T: pv.p.LatentFrames, H: lh, W: lw}
	lat, err := layout.Unpatchify(nil, x0, vs, layout.Patch{T: c.PatchSize[0], H: c.PatchSize[1], W: c.PatchSize[2]})
	if err != nil {
		pv.err = fmt.Errorf("engine: preview: %w", err)
		return
	}
	if err := pv.s.loadVideoVAE(m, false, pv.videoResidency); err != nil {
		pv.err = err
		return
	}
	z, _ := videovae.WrapVolume(vs.C, vs.T, vs.H, vs.W, lat)
	img, err := m.vvae.PreviewFrame(pv.ctx, z, videovae.PreviewWindow)
	if err != nil || img == nil {
		if err != nil && pv.ctx.Err() == nil {
			pv.err = fmt.Errorf("engine: preview: %w", err)
		}
		return
	}
	r := pv.p.Request
	if img.Rect.Dx() != r.Width || img.Rect.Dy() != r.Height {
		img = media.Resize(img, r.Width, r.Height, media.Bicubic)
	}
	pv.s.counters.Previews.Add(1)
	pv.t.preview(img, r.Frames/2, fmt.Sprintf("step %d of %d", rec.Step+1, rec.Steps))
}
