package engine

import (
	"context"
	"fmt"
	"log/slog"

	"h3studio/engine/compute"
	"h3studio/engine/dit"
	"h3studio/engine/quant"
	"h3studio/engine/safetensors"
)

// ditSource is the transformer's checkpoint as the session binds it for
// format q (QuantizedDiTSource, logging to the session's log). A cache
// build's progress is also a message of the take's running phase (t may
// be nil: no take).
func (s *Session) ditSource(ctx context.Context, dir string, ck *safetensors.Checkpoint, q compute.QuantFormat, t *tracker) (safetensors.Source, *safetensors.Checkpoint, error) {
	var progress func(done, total int)
	if t != nil {
		progress = func(done, total int) {
			t.message(fmt.Sprintf("quantizing the transformer to %s (once; kept beside it): part %d of %d", quant.Name(q), done, total))
		}
	}
	return QuantizedDiTSource(ctx, dir, ck, q, s.log, progress)
}

// QuantizedDiTSource is the transformer checkpoint ck (opened from dir) as
// the DiT binds it with weights of format q (a quantized memory mode's):
// overlaid with the quantized cache beside it (quant.CacheDir), built on
// first use. Without bits it is ck itself. When the cache cannot be built
// (a read-only model folder) or read, ck is returned and the weights are
// quantized as they are bound (log, which may be nil, says so).
// The returned checkpoint (nil without a cache) must be closed with ck.
// Cancelling ctx stops the build (the parts written so far are kept for
// the next build to resume from) and returns ctx's error. progress, when
// set, receives the build's parts done and in all after each part.
func QuantizedDiTSource(ctx context.Context, dir string, ck *safetensors.Checkpoint, q compute.QuantFormat, log *slog.Logger, progress func(done, total int)) (safetensors.Source, *safetensors.Checkpoint, error) {
	if q.Bits == 0 {
		return ck, nil, nil
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cdir := quant.CacheDir(dir, q)
	if _, ok, why := quant.ReadManifest(cdir, ck, q); !ok {
		log.Info("quantizing the transformer", "format", q.String(), "cache", cdir, "reason", why)
		_, err := quant.Build(ctx, ck, cdir, q, quant.BuildOptions{
			Select: func(name string, _ safetensors.TensorInfo) bool { return dit.QuantizedWeight(name) },
			Progress: func(done, total int) {
				log.Info("quantized cache", "parts", done, "of", total)
				if progress != nil {
					progress(done, total)
				}
			},
		})
		if ctx.Err() != nil {
			return nil, nil, fmt.Errorf("engine: building the quantized cache %s: %w", cdir, ctx.Err())
		}
		if err != nil {
			log.Warn("quantized cache not written; quantizing while binding", "cache", cdir, "err", err)
			return ck, nil, nil
		}
	}
	cc, err := safetensors.OpenDir(cdir)
	if err != nil {
		log.Warn("quantized cache unreadable; quantizing while binding", "cache", cdir, "err", err)
		return ck, nil, nil
	}
	return quant.Overlay{Base: ck, Cache: cc}, cc, nil
}
