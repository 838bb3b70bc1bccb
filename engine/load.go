package engine

import (
	"context"
	"fmt"
	"runtime/debug"

	"h3studio/engine/audiovae"
	"h3studio/engine/compute"
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
	// vvaeResidency is how vvae holds its decoder's blocks.
	vvaeResidency compute.Residency
	avae          *audiovae.Model

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
	g.m, g.mode = m, mode
	g.followPlan()

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
	loads := []func() error{func() error { return s.loadDiT(g.ctx, m, mode, t) }}
	if !g.release {
		loads = append(loads, func() error { return s.loadVideoVAE(m, false, g.videoResidency) }, func() error { return s.loadAudioVAE(m, false) })
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

// followPlan takes the plan's residency choices (plan.PlanMode): whether
// the components stay loaded, and which of the text encoder and the video
// decoder stream. Without a memory prediction the streaming modes stream
// and release, the others keep.
func (g *generation) followPlan() {
	mp := g.p.Prediction.Memory
	r := modeResidency(g.mode)
	g.release, g.textResidency, g.videoResidency = r == compute.Streaming, r, r
	if g.s.opts.StreamVideoDecoder {
		g.videoResidency = compute.Streaming
	}
	if len(mp.Phases) == 0 {
		return
	}
	g.release = !mp.Kept
	for _, ph := range mp.Phases {
		switch ph.Name {
		case "text":
			g.textResidency = ph.Residency
		case "video-decode":
			g.videoResidency = ph.Residency
		}
	}
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

// loadText loads the text encoder (streaming: its layers are bound per
// pass, nothing yet).
func (s *Session) loadText(m *models, r compute.Residency) error {
	if m.text != nil {
		return nil
	}
	t, err := qwen3vl.Open(s.opts.Backend, m.TextDir, m.TextDir, &qwen3vl.Options{Residency: r})
	if err != nil {
		return s.componentError(s.snap.Find(m.Partition, snapshot.TextEncoder), "text encoder", err)
	}
	m.text = t
	s.counters.Loads.Add(1)
	return nil
}

// loadDiT opens the transformer (its weights are bound per phase),
// building its quantized cache first when mode needs one and it is
// missing (the build's progress reported as messages of t's phase).
func (s *Session) loadDiT(ctx context.Context, m *models, mode MemoryMode, t *tracker) error {
	if m.dit != nil {
		return nil
	}
	c := s.snap.Find(m.Partition, snapshot.Transformer)
	ck, err := safetensors.OpenDir(m.DiTDir)
	if err != nil {
		return s.componentError(c, "transformer", err)
	}
	b := s.opts.Backend
	src, qc, err := s.ditSource(ctx, m.DiTDir, ck, modeQuant(mode), t)
	if err != nil {
		ck.Close()
		return err
	}
	o := s.ditOptions(mode)
	o.Adapters = m.adapters
	dm, err := dit.Load(b, safetensors.NewBinder("dit", src, b), &m.DiT, &o)
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

// loadVideoVAE loads the video VAE's decoder, its blocks held as r says
// (videovae.Options.Residency), and its encoder too when encode is set
// (the conditions phase, which releases it after).
func (s *Session) loadVideoVAE(m *models, encode bool, r compute.Residency) error {
	if m.vvae != nil && (!encode || m.vvae.CanEncode()) && m.vvaeResidency == r {
		return nil
	}
	closeAndClear(&m.vvae)
	c := s.snap.Find(m.Partition, snapshot.VideoVAE)
	if c == nil {
		return fmt.Errorf("engine: the model folder has no %s video VAE", m.Partition)
	}
	v, err := videovae.Open(s.opts.Backend, c.ConfigDir, c.Dir, &videovae.Options{Residency: r, DecoderOnly: !encode})
	if err != nil {
		return s.componentError(c, "video VAE", err)
	}
	if v.Config.LatentChannels != m.DiT.InChannels {
		v.Close()
		return fmt.Errorf("engine: the video VAE has %d latent channels, the transformer %d", v.Config.LatentChannels, m.DiT.InChannels)
	}
	m.vvae, m.vvaeResidency = v, r
	s.counters.Loads.Add(1)
	return nil
}

// loadAudioVAE loads the audio VAE's decoder, and its encoder too when
// encode is set (the conditions phase, which releases it after).
func (s *Session) loadAudioVAE(m *models, encode bool) error {
	if m.avae != nil && (!encode || m.avae.CanEncode()) {
		return nil
	}
	closeAndClear(&m.avae)
	c := s.snap.Find(m.Partition, snapshot.AudioVAE)
	if c == nil {
		return fmt.Errorf("engine: the model folder has no %s audio VAE", m.Partition)
	}
	a, err := audiovae.Open(s.opts.Backend, c.ConfigDir, c.Dir, &audiovae.Options{DecoderOnly: !encode})
	if err != nil {
		return s.componentError(c, "audio VAE", err)
	}
	if a.Config.LatentChannels != m.DiT.AudioInChannels {
		a.Close()
		return fmt.Errorf("engine: the audio VAE has %d latent channels, the transformer %d", a.Config.LatentChannels, m.DiT.AudioInChannels)
	}
	m.avae = a
	s.counters.Loads.Add(1)
	return nil
}

func (m *models) releaseText() { returnHostMemory(closeAndClear(&m.text)) }

func (m *models) releaseDiT() { returnHostMemory(m.dropDiT()) }

// dropDiT closes the transformer and its checkpoints, reporting whether any
// was loaded.
func (m *models) dropDiT() bool {
	had := m.dit != nil
	if had {
		m.dit.Close()
		m.dit = nil
	}
	ck := closeAndClear(&m.ditCk)
	qc := closeAndClear(&m.ditQC)
	return had || ck || qc
}

// releaseEncoders frees the VAEs' encoders (the decoders stay).
func (m *models) releaseEncoders() {
	had := false
	if m.vvae != nil && m.vvae.CanEncode() {
		m.vvae.ReleaseEncoder()
		had = true
	}
	if m.avae != nil && m.avae.CanEncode() {
		m.avae.ReleaseEncoder()
		had = true
	}
	returnHostMemory(had)
}

func (m *models) releaseVideoVAE() { returnHostMemory(closeAndClear(&m.vvae)) }

func (m *models) releaseAudioVAE() { returnHostMemory(closeAndClear(&m.avae)) }

// closeAndClear closes the weights *p holds, if any, and clears it,
// reporting whether it held any.
func closeAndClear[T interface {
	comparable
	Close() error
}](p *T) bool {
	var none T
	if *p == none {
		return false
	}
	(*p).Close()
	*p = none
	return true
}

// returnHostMemory, when something was released, collects the Go heap and
// returns its free pages to the OS now. A component's large host buffers (the
// text encoder's two streamed layers, 1.8 GiB at the released width) are Go
// memory: once the component is released they are garbage, but the collector
// runs again only when the heap doubles from what it last found live, and the
// runtime returns freed pages to the OS gradually, so without this the process
// kept them through the next phases (and let the next phase's garbage grow to
// the same goal), where the plan counts only that phase's components. Storage
// made by the backends (compute.Memory) goes back at Free and is not affected.
// One collection of a small live heap per release costs milliseconds.
func returnHostMemory(released bool) {
	if released {
		debug.FreeOSMemory()
	}
}

func (m *models) releaseVAEs() {
	v := closeAndClear(&m.vvae)
	a := closeAndClear(&m.avae)
	returnHostMemory(v || a)
}

// release drops every loaded weight (the tokenizer and configs stay).
func (m *models) release() {
	t := closeAndClear(&m.text)
	d := m.dropDiT()
	v := closeAndClear(&m.vvae)
	a := closeAndClear(&m.avae)
	returnHostMemory(t || d || v || a)
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
	o := dit.Options{Oracles: s.opts.Oracles, Residency: modeResidency(mode), Quant: modeQuant(mode)}
	if s.opts.ProfileForwards {
		o.Profile = func(p dit.ForwardProfile) { s.forwards.Add(p) }
	}
	return o
}
