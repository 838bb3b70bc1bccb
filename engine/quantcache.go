package engine

import (
	"context"
	"fmt"

	"h3studio/engine/compute"
	"h3studio/engine/dit"
	"h3studio/engine/quant"
	"h3studio/engine/safetensors"
)

// ditSource is the transformer's checkpoint as the DiT binds it: with
// weights of format q (the memory mode's), overlaid with the quantized cache beside it
// (quant.CacheDir), built on first use. When the cache cannot be built
// (a read-only model folder) the weights are quantized as they are bound.
// The returned checkpoint (nil without a cache) must be closed with ck.
// Cancelling ctx stops the build (the parts written so far are kept for
// the next build to resume from) and returns ctx's error.
func (s *Session) ditSource(ctx context.Context, dir string, ck *safetensors.Checkpoint, q compute.QuantFormat) (safetensors.Source, *safetensors.Checkpoint, error) {
	if q.Bits == 0 {
		return ck, nil, nil
	}
	cdir := quant.CacheDir(dir, q)
	if _, ok, why := quant.ReadManifest(cdir, ck, q); !ok {
		s.log.Info("quantizing the transformer", "format", q.String(), "cache", cdir, "reason", why)
		_, err := quant.Build(ctx, ck, cdir, q, quant.BuildOptions{
			Select: func(name string, _ safetensors.TensorInfo) bool { return dit.QuantizedWeight(name) },
			Progress: func(done, total int) {
				s.log.Info("quantized cache", "parts", done, "of", total)
			},
		})
		if ctx.Err() != nil {
			return nil, nil, fmt.Errorf("engine: building the quantized cache %s: %w", cdir, ctx.Err())
		}
		if err != nil {
			s.log.Warn("quantized cache not written; quantizing while binding", "cache", cdir, "err", err)
			return ck, nil, nil
		}
	}
	cc, err := safetensors.OpenDir(cdir)
	if err != nil {
		s.log.Warn("quantized cache unreadable; quantizing while binding", "cache", cdir, "err", err)
		return ck, nil, nil
	}
	return quant.Overlay{Base: ck, Cache: cc}, cc, nil
}
