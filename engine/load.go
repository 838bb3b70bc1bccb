package engine

import (
	"context"
	"fmt"
	"path/filepath"

	"h3studio/engine/audiovae"
	"h3studio/engine/dit"
	"h3studio/engine/qwen3vl"
	"h3studio/engine/safetensors"
	"h3studio/engine/snapshot"
	"h3studio/engine/tokenizer"
	"h3studio/engine/videovae"
)

// partInfo is what a partition's configs say: read once (no weights) and
// shared by Plan and Generate.
type partInfo struct {
	part snapshot.Partition

	tok     *tokenizer.Tokenizer
	textDir string
	qcfg    *qwen3vl.Config
	pcfg    qwen3vl.ProcessorConfig
	proc    *qwen3vl.Processor

	ditDir string
	dcfg   dit.Config

	vcfg *videovae.Config // nil when the partition has no video VAE
	acfg *audiovae.Config // nil when it has no audio VAE
}

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
	where := what
	if c != nil {
		where = c.Where(s.snap.Root)
	}
	return fmt.Errorf("engine: %s: %w", where, err)
}

// partitionInfo reads a partition's tokenizer and configs on first use.
// It is safe for concurrent use.
func (s *Session) partitionInfo(part snapshot.Partition) (*partInfo, error) {
	s.infoMu.Lock()
	defer s.infoMu.Unlock()
	if pi, ok := s.infos[part]; ok {
		return pi, nil
	}
	pi := &partInfo{part: part}
	need := func(k snapshot.Kind) (*snapshot.Component, error) {
		c := s.snap.Find(part, k)
		if c == nil {
			return nil, fmt.Errorf("engine: the model folder has no %s %s (needed for %s)", part, k.Title(), map[snapshot.Partition]string{snapshot.FL2VA: "t2va and fl2va", snapshot.Ref2VA: "ref2va"}[part])
		}
		return c, nil
	}
	tc, err := need(snapshot.Tokenizer)
	if err != nil {
		return nil, err
	}
	if pi.tok, err = tokenizer.Load(tc.Dir); err != nil {
		return nil, s.componentError(tc, "tokenizer", err)
	}
	te, err := need(snapshot.TextEncoder)
	if err != nil {
		return nil, err
	}
	pi.textDir = te.Dir
	if pi.qcfg, err = qwen3vl.ReadConfig(te.Dir); err != nil {
		return nil, s.componentError(te, "text encoder", err)
	}
	pcDir := te.Dir
	if pc := s.snap.Find(part, snapshot.Processor); pc != nil {
		pcDir = pc.Dir
	}
	if pi.pcfg, err = qwen3vl.ReadProcessorConfig(pcDir, pi.qcfg); err != nil {
		return nil, s.componentError(te, "processor", err)
	}
	pi.proc = qwen3vl.NewProcessor(pi.qcfg, pi.pcfg)
	if pi.tok.Len() > pi.qcfg.Text.VocabSize {
		return nil, fmt.Errorf("engine: %s: the tokenizer has %d ids but the text encoder's vocabulary only %d: they do not belong together",
			filepath.Dir(tc.Dir), pi.tok.Len(), pi.qcfg.Text.VocabSize)
	}
	tr, err := need(snapshot.Transformer)
	if err != nil {
		return nil, err
	}
	pi.ditDir = tr.Dir
	if pi.dcfg, err = dit.ReadConfig(tr.ConfigDir); err != nil {
		return nil, s.componentError(tr, "transformer", err)
	}
	if err := dit.CheckCheckpointQuant(tr.Dir, pi.dcfg, s.opts.Quant); err != nil {
		return nil, s.componentError(tr, "transformer", err)
	}
	if pi.dcfg.TextDim != pi.qcfg.Text.HiddenSize {
		return nil, fmt.Errorf("engine: the transformer reads %d-wide text conditioning but the text encoder is %d wide: they do not belong together", pi.dcfg.TextDim, pi.qcfg.Text.HiddenSize)
	}
	if c := s.snap.Find(part, snapshot.VideoVAE); c != nil {
		if pi.vcfg, err = videovae.ReadConfig(c.ConfigDir, c.Dir); err != nil {
			return nil, s.componentError(c, "video VAE", err)
		}
		if pi.vcfg.DecoderFFNHidden == 0 {
			pi.vcfg.DecoderFFNHidden = videovae.DecoderFFNHidden(c.Dir)
		}
	}
	if c := s.snap.Find(part, snapshot.AudioVAE); c != nil {
		if pi.acfg, err = audiovae.ReadConfig(c.ConfigDir); err != nil {
			return nil, s.componentError(c, "audio VAE", err)
		}
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
	g.m, g.mode, g.streaming = m, mode, mode.streaming()

	// LoRAs: read and checked against this transformer before anything
	// heavy runs; what they cannot apply is noted on the take.
	ad, applied, err := loadLoRAs(m.dcfg, r.LoRAs)
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
	if s.cur != nil && s.cur.part == part {
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
	if mode.streaming() {
		qm = qwen3vl.Streaming
	}
	t, err := qwen3vl.Load(m.textDir, s.opts.Backend, qwen3vl.LoadOptions{Mode: qm})
	if err != nil {
		return s.componentError(s.snap.Find(m.part, snapshot.TextEncoder), "text encoder", err)
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
	c := s.snap.Find(m.part, snapshot.Transformer)
	ck, err := safetensors.OpenDir(m.ditDir)
	if err != nil {
		return s.componentError(c, "transformer", err)
	}
	b := s.opts.Backend
	src, qc, err := s.ditSource(ctx, m.ditDir, ck, mode.quant())
	if err != nil {
		ck.Close()
		return err
	}
	o := s.ditOptions(mode)
	o.Adapters = m.adapters
	dm, err := dit.Open(b, safetensors.NewBinder("dit", src, b), m.dcfg, o)
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
	if m.vvae != nil {
		return nil
	}
	c := s.snap.Find(m.part, snapshot.VideoVAE)
	if c == nil {
		return fmt.Errorf("engine: the model folder has no %s video VAE", m.part)
	}
	v, err := videovae.Open(s.opts.Backend, c, &videovae.Options{StreamBlocks: s.opts.StreamVideoDecoder})
	if err != nil {
		return s.componentError(c, "video VAE", err)
	}
	if v.Config.LatentChannels != m.dcfg.InChannels {
		v.Close()
		return fmt.Errorf("engine: the video VAE has %d latent channels, the transformer %d", v.Config.LatentChannels, m.dcfg.InChannels)
	}
	m.vvae = v
	s.counters.Loads.Add(1)
	return nil
}

// loadAudioVAE loads the audio VAE (encoder and decoder).
func (s *Session) loadAudioVAE(m *models) error {
	if m.avae != nil {
		return nil
	}
	c := s.snap.Find(m.part, snapshot.AudioVAE)
	if c == nil {
		return fmt.Errorf("engine: the model folder has no %s audio VAE", m.part)
	}
	a, err := audiovae.Open(s.opts.Backend, c, nil)
	if err != nil {
		return s.componentError(c, "audio VAE", err)
	}
	if a.Config.LatentChannels != m.dcfg.AudioInChannels {
		a.Close()
		return fmt.Errorf("engine: the audio VAE has %d latent channels, the transformer %d", a.Config.LatentChannels, m.dcfg.AudioInChannels)
	}
	m.avae = a
	s.counters.Loads.Add(1)
	return nil
}

func (m *models) releaseText() {
	if m.text != nil {
		m.text.Close()
		m.text = nil
	}
}

func (m *models) releaseDiT() {
	if m.dit != nil {
		m.dit.Close()
		m.dit = nil
	}
	if m.ditCk != nil {
		m.ditCk.Close()
		m.ditCk = nil
	}
	if m.ditQC != nil {
		m.ditQC.Close()
		m.ditQC = nil
	}
}

func (m *models) releaseVAEs() {
	if m.vvae != nil {
		m.vvae.Close()
		m.vvae = nil
	}
	if m.avae != nil {
		m.avae.Close()
		m.avae = nil
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
		out = append(out, string(m.part)+"/text_encoder")
	}
	if m.dit != nil {
		out = append(out, string(m.part)+"/transformer")
	}
	if m.vvae != nil {
		out = append(out, string(m.part)+"/video_vae")
	}
	if m.avae != nil {
		out = append(out, string(m.part)+"/audio_vae")
	}
	return out
}

// ditOptions are the transformer's load options for a memory mode.
func (s *Session) ditOptions(mode MemoryMode) dit.Options {
	o := dit.Options{Oracles: s.opts.Oracles, Streaming: mode.streaming(), Quant: mode.quant()}
	if s.opts.ProfileForwards {
		o.Profile = func(p dit.ForwardProfile) { s.forwards.Add(p) }
	}
	return o
}
