package engine

import (
	"context"
	"fmt"

	"h3studio/engine/compute"
	"h3studio/engine/condcache"
	"h3studio/engine/prompt"
	"h3studio/engine/qwen3vl"
)

// encodeText runs the text phase: the conditioning of the prompt and the
// conditions, from the session's cache when it has it.
func (g *generation) encodeText() error {
	hidden, tags, cached, err := g.s.encodeText(g.ctx, g.m, g.textResidency, g.cond, g.t)
	if err != nil {
		return err
	}
	g.hidden, g.tags, g.res.Cached = hidden, tags, cached
	if g.release {
		g.m.releaseText()
	}
	return nil
}

// encodeText presents the request to the text encoder and returns the
// conditioning [L, text_dim] and the rows' tags. A conditioning computed
// before (same model, token ids and vision pixels) comes from the session's
// cache without running — or, when it is not resident, loading — the text
// encoder.
func (s *Session) encodeText(ctx context.Context, m *models, residency compute.Residency, c *conditions, t *tracker) (*compute.Tensor, []int64, bool, error) {
	pres, err := prompt.Present(m.Tokenizer, c.present, prompt.Options{EmptyPrompt: prompt.PadEmpty})
	if err != nil {
		return nil, nil, false, fmt.Errorf("engine: %w", err)
	}
	in := &qwen3vl.Input{IDs: make([]int64, len(pres.IDs)), Images: c.images, Videos: c.videos}
	for i, id := range pres.IDs {
		in.IDs[i] = int64(id)
	}
	key := s.textKey(m, in)
	layers := m.Text.TapLayers()
	total := layers + len(pres.Blocks)
	if e, ok := s.cond.Get(key); ok {
		h, tags, err := qwen3vl.FromCacheEntry(s.opts.Backend, e)
		if err == nil {
			t.begin(PhaseText, total, "layers")
			t.step(total)
			s.counters.TextCacheHits.Add(1)
			return h, tags, true, nil
		}
	}
	t.begin(PhaseText, total, "layers")
	if err := s.loadText(m, residency); err != nil {
		return nil, nil, false, err
	}
	done := 0
	trace := func(name string, _ *compute.Tensor) {
		// Per-layer progress through the encoder's trace points: one
		// "vision.merged" per vision block, one "layer{i}" per layer.
		if name == "vision.merged" || isLayerName(name) {
			done++
			t.step(done)
		}
	}
	out, err := m.text.Encode(ctx, in, qwen3vl.EncodeOptions{Precision: compute.BF16, Trace: trace})
	if err != nil {
		return nil, nil, false, err
	}
	s.counters.TextEncodes.Add(1)
	t.step(total)
	if e, err := out.CacheEntry(); err == nil {
		s.cond.Put(key, e)
	}
	return out.Hidden, out.Tags, false, nil
}

// isLayerName reports whether a trace name is "layer{i}".
func isLayerName(name string) bool {
	if len(name) < 6 || name[:5] != "layer" {
		return false
	}
	for _, c := range name[5:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// textKey is the conditioning's content hash: the text encoder's
// checkpoint (config and shard headers, not the weights), the layers run,
// the precision, the token ids and the vision pixels.
func (s *Session) textKey(m *models, in *qwen3vl.Input) condcache.Key {
	h := condcache.NewHasher("engine.text/v1").String(s.textIdentity(m)).Int(int64(m.Text.TapLayers())).
		String(compute.BF16.String()).Int64s(in.IDs)
	for _, set := range [][]qwen3vl.VisionInput{in.Images, in.Videos} {
		h.Int(int64(len(set)))
		for _, v := range set {
			h.Int(int64(v.Grid.T)).Int(int64(v.Grid.H)).Int(int64(v.Grid.W)).Float32s(v.Pixels)
		}
	}
	return h.Key()
}

// textIdentity is the text encoder's checkpoint identity
// (qwen3vl.CheckpointIdentity), computed once per folder.
func (s *Session) textIdentity(m *models) string {
	if id, ok := s.textID[m.TextDir]; ok {
		return id
	}
	id := qwen3vl.CheckpointIdentity(m.TextDir)
	s.textID[m.TextDir] = id
	return id
}
