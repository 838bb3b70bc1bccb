package videovae

import "h3studio/engine/compute"

// PreviewWindow is the latent frames a denoising preview decodes (one
// decoder window, PreviewFrame's window).
const PreviewWindow = 7

// PreviewFLOPs is the work of per-step denoising previews: one decode of a
// PreviewWindow-latent-frame window (of a latentFrames × lh × lw latent)
// after each of steps steps. The engine counts it in the denoise phase, as
// the previews run there; leaving it out made the estimate of a take with
// previews (the studio's default) 1.7-3.7× low.
func PreviewFLOPs(cfg *Config, steps, latentFrames, lh, lw int) (float64, error) {
	if cfg == nil || steps <= 0 {
		return 0, nil
	}
	c, err := EstimateDecode(cfg, min(latentFrames, PreviewWindow), lh, lw, nil, compute.F32)
	if err != nil {
		return 0, err
	}
	return float64(steps) * c.FLOPs, nil
}
