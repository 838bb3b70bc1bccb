package engine

import (
	"context"
	"fmt"

	"h3studio/engine/audiovae"
	"h3studio/engine/dit"
	"h3studio/engine/partition"
	"h3studio/engine/qwen3vl"
	"h3studio/engine/safetensors"
	"h3studio/engine/snapshot"
	"h3studio/engine/videovae"
)

// partInfo is what a partition's configs say (engine/partition): read once
// (no weights) and shared by Plan and Generate.
type partInfo = partition.Configs

// models are one partition's loaded components. The weights are loaded by
// the phase that needs them and, as the memory mode allows, kept for the
// next request.
type models struct {
	*partInfo

	text  *qwen3vl.Model
	ditCk *safetensors.Checkpoint
	ditQC *safetensors.Checkpoint // the quantized cache (quantcache.go), or nil
	dit   *dit.Model
	vvae  *videovae.Model
	avae  *audiovae.Model

	// loadedMode is the memory mode the weights were loaded for.
	loadedMode MemoryMode

	// adapters are the current take's LoRA updates (adapterKey names
	// them); ditAdapterKey names those the open transformer holds.
	adapters                  dit.Adapters
	adapterKey, ditAdapterKey string
}

// componentError names the component a load failed in.
func (s *Session) componentError(c *snapshot.Component, what string, err error) error {
	return partition.ComponentError(s.snap, c, what, err)
}

// partitionInfo reads a partition's tokenizer and configs on first use.
// It is safe for concurrent use.
func (s *Session) partitionInfo(part snapshot.Partition) (*partInfo, error) {
	s.infoMu.Lock()
	defer s.infoMu.Unlock()
	if pi, ok := s.infos[part]; ok {
		return pi, nil
	}
	pi, err := partition.Read(s.snap, part, s.opts.Quant)
	if err != nil {
		return nil, err
	}
	s.infos[part] = pi
	return pi, nil
}

// load resolves the memory mode and loads what the request needs: up
// front in the resident mode (the text encoder only on a conditioning-cache
// miss, in encodeText); the streaming mode loads each component when its
// phase comes and releases it after.
func (g *generation) load() error {
	s, p, r, t := g.s, g.p, g.r, g.t
	g.res = Result{Plan: p, Seed: r.Seed, Frames: r.Frames, Model: s.name}
	part := snapshot.FL2VA
	if p.Task == TaskRef2VA {
		part = snapshot.Ref2VA
	}
	mode := s.memoryMode(p)
	g.res.Plan.Memory = mode
	m, err := s.partitionModels(part)
	if err != nil {
		return err
	}
	g.res.ModelID = s.modelID(m)
	if m.loadedMode != "" && m.loadedMode != mode {
		m.release() // the weights were bound for the other mode
	}
	m.loadedMode = mode
	g.m, g.mode, g.streaming = m, mode, modeStreaming(mode)

	// LoRAs: read and checked against this transformer before anything
	// heavy runs; what they cannot apply is noted on the take.
	ad, applied, err := loadLoRAs(m.DiT, r.LoRAs)
	if err != nil {
		return err
	}
	g.res.LoRAs = applied
	for _, a := range applied {
		g.res.Plan.Notes = append(g.res.Plan.Notes, a.Warnings()...)
	}
	if err := m.setAdapters(ad, adapterKey(applied, r.LoRAs)); err != nil {
		return err
	}
	loads := []func() error{func() error { return s.loadDiT(g.ctx, m, mode) }}
	if !g.streaming {
		loads = append(loads, func() error { return s.loadVideoVAE(m) }, func() error { return s.loadAudioVAE(m) })
	}
	t.begin(PhaseLoad, len(loads), "components")
	for i, load := range loads {
		if err := g.ctx.Err(); err != nil {
			return err
		}
		if err := load(); err != nil {
			return err
		}
		t.step(i + 1)
	}
	return nil
}

// partitionModels returns the partition's components. Switching partitions
// releases the other partition's weights (the two transformers never
// coexist). Only the running Generate calls it.
func (s *Session) partitionModels(part snapshot.Partition) (*models, error) {
	if s.cur != nil && s.cur.Partition == part {
		return s.cur, nil
	}
	pi, err := s.partitionInfo(part)
	if err != nil {
		return nil, err
	}
	if s.cur != nil {
		s.cur.release()
		s.cur = nil
	}
	s.cur = &models{partInfo: pi}
	return s.cur, nil
}

// loadText loads the text encoder (streaming mode binds nothing yet).
func (s *Session) loadText(m *models, mode MemoryMode) error {
	if m.text != nil {
		return nil
	}
	qm := qwen3vl.Resident
	if modeStreaming(mode) {
		qm = qwen3vl.Streaming
	}
	t, err := qwen3vl.Load(m.TextDir, s.opts.Backend, qwen3vl.LoadOptions{Mode: qm})
	if err != nil {
		return s.componentError(s.snap.Find(m.Partition, snapshot.TextEncoder), "text encoder", err)
	}
	m.text = t
	s.counters.Loads.Add(1)
	return nil
}

// loadDiT opens the transformer (its weights are bound per phase).
func (s *Session) loadDiT(ctx context.Context, m *models, mode MemoryMode) error {
	if m.dit != nil {
		return nil
	}
	c := s.snap.Find(m.Partition, snapshot.Transformer)
	ck, err := safetensors.OpenDir(m.DiTDir)
	if err != nil {
		return s.componentError(c, "transformer", err)
	}
	b := s.opts.Backend
	src, qc, err := s.ditSource(ctx, m.DiTDir, ck, modeQuant(mode))
	if err != nil {
		ck.Close()
		return err
	}
	o := s.ditOptions(mode)
	o.Adapters = m.adapters
	dm, err := dit.Open(b, safetensors.NewBinder("dit", src, b), m.DiT, o)
	if err != nil {
		ck.Close()
		if qc != nil {
			qc.Close()
		}
		return s.componentError(c, "transformer", err)
	}
	m.dit, m.ditCk, m.ditQC, m.ditAdapterKey = dm, ck, qc, m.adapterKey
	s.counters.Loads.Add(1)
	return nil
}

// loadVideoVAE loads the video VAE (encoder and decoder).
func (s *Session) loadVideoVAE(m *models) error {
	return loadVAE(s, m, &m.vvae, snapshot.VideoVAE, "video VAE", m.DiT.InChannels, func(c *snapshot.Component) (*videovae.Model, int, error) {
		v, err := videovae.Open(s.opts.Backend, c.ConfigDir, c.Dir, &videovae.Options{StreamBlocks: s.opts.StreamVideoDecoder})
		if err != nil {
			return nil, 0, err
		}
		return v, v.Config.LatentChannels, nil
	})
}

// loadAudioVAE loads the audio VAE (encoder and decoder).
func (s *Session) loadAudioVAE(m *models) error {
	return loadVAE(s, m, &m.avae, snapshot.AudioVAE, "audio VAE", m.DiT.AudioInChannels, func(c *snapshot.Component) (*audiovae.Model, int, error) {
		a, err := audiovae.Open(s.opts.Backend, c.ConfigDir, c.Dir, nil)
		if err != nil {
			return nil, 0, err
		}
		return a, a.Config.LatentChannels, nil
	})
}

// loadVAE opens the partition's VAE of kind k (what names it) into *slot
// unless it is open already: open returns the model and its latent
// channels, which must be the transformer's (want).
func loadVAE[M interface {
	comparable
	Close() error
}](s *Session, m *models, slot *M, k snapshot.Kind, what string, want int, open func(*snapshot.Component) (M, int, error)) error {
	var none M
	if *slot != none {
		return nil
	}
	c := s.snap.Find(m.Partition, k)
	if c == nil {
		return fmt.Errorf("engine: the model folder has no %s %s", m.Partition, what)
	}
	v, channels, err := open(c)
	if err != nil {
		return s.componentError(c, what, err)
	}
	if channels != want {
		v.Close()
		return fmt.Errorf("engine: the %s has %d latent channels, the transformer %d", what, channels, want)
	}
	*slot = v
	s.counters.Loads.Add(1)
	return nil
}

func (m *models) releaseText() { closeAndClear(&m.text) }

func (m *models) releaseDiT() {
	if m.dit != nil {
		m.dit.Close()
		m.dit = nil
	}
	closeAndClear(&m.ditCk)
	closeAndClear(&m.ditQC)
}

func (m *models) releaseVAEs() {
	closeAndClear(&m.vvae)
	closeAndClear(&m.avae)
}

// closeAndClear closes the weights *p holds, if any, and clears it.
func closeAndClear[T interface {
	comparable
	Close() error
}](p *T) {
	var none T
	if *p != none {
		(*p).Close()
		*p = none
	}
}

// release drops every loaded weight (the tokenizer and configs stay).
func (m *models) release() {
	m.releaseText()
	m.releaseDiT()
	m.releaseVAEs()
}

// loaded lists the components holding weights now.
func (m *models) loaded() []string {
	var out []string
	if m.text != nil {
		out = append(out, string(m.Partition)+"/text_encoder")
	}
	if m.dit != nil {
		out = append(out, string(m.Partition)+"/transformer")
	}
	if m.vvae != nil {
		out = append(out, string(m.Partition)+"/video_vae")
	}
	if m.avae != nil {
		out = append(out, string(m.Partition)+"/audio_vae")
	}
	return out
}

// ditOptions are the transformer's load options for a memory mode.
func (s *Session) ditOptions(mode MemoryMode) dit.Options {
	o := dit.Options{Oracles: s.opts.Oracles, Streaming: modeStreaming(mode), Quant: modeQuant(mode)}
	if s.opts.ProfileForwards {
		o.Profile = func(p dit.ForwardProfile) { s.forwards.Add(p) }
	}
	return o
}
