package engine

import (
	"h3studio/engine/compute"
	"h3studio/engine/videovae"
)

// previewDecodeFLOPs is the work of the denoising previews a request asks
// for (Request.Preview): one decode of a previewWindow-latent-frame window
// through the video VAE after every step. It runs inside the denoise phase,
// so it is counted there; leaving it out made the estimate of a take with
// previews (the studio's default) 1.7-3.7× low.
func previewDecodeFLOPs(cfg *videovae.Config, p *Plan) (float64, error) {
	r := p.Request
	if !r.Preview || cfg == nil || r.Steps <= 0 {
		return 0, nil
	}
	lh, lw := p.ModelCanvas(r).Latent()
	c, err := videovae.EstimateDecode(cfg, min(p.LatentFrames, previewWindow), lh, lw, nil, compute.F32)
	if err != nil {
		return 0, err
	}
	return float64(r.Steps) * c.FLOPs, nil
}
