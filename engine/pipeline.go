package engine

import (
	"context"
	"errors"
	"fmt"

	"h3studio/engine/audiovae"
	"h3studio/engine/compute"
	"h3studio/engine/condcache"
	"h3studio/engine/denoise"
	"h3studio/engine/layout"
	"h3studio/engine/media"
	"h3studio/engine/prompt"
	"h3studio/engine/qwen3vl"
	"h3studio/engine/sampler"
	"h3studio/engine/snapshot"
	"h3studio/engine/videovae"
)

// run executes a planned request: load → references (media decoding, the
// Qwen processor, VAE encoding of the conditions) → text (tokenizer,
// presentation, Qwen3-VL; cached by content hash) → denoise (the DiT loop)
// → video decode (frames streamed into out) → audio decode → export (out
// closed). ctx is checked at every step, layer, tile and block boundary.
// On an error the caller aborts out.
func (s *Session) run(ctx context.Context, p Plan, out media.Sink, t *tracker) (res Result, err error) {
	defer compute.Recover(&err)
	r := p.Request
	res = Result{Plan: p, Seed: r.Seed, Frames: r.Frames, Model: s.name}
	part := snapshot.FL2VA
	if p.Task == TaskRef2VA {
		part = snapshot.Ref2VA
	}
	mode := s.memoryMode(p)
	res.Plan.Memory = mode
	if mode == MemoryStreaming && r.Memory != MemoryStreaming {
		// Auto chose streaming: the predicted peak the result (and the
		// sidecar) reports is the streaming one, not the resident one
		// that did not fit.
		q := p
		q.Notes, q.Request.Memory = nil, MemoryStreaming
		s.predict(&q)
		res.Plan.PeakBytes = q.PeakBytes
	}
	m, err := s.partitionModels(part)
	if err != nil {
		return res, err
	}
	res.ModelID = s.modelID(m)
	if m.loadedMode != "" && m.loadedMode != mode {
		m.release() // the weights were bound for the other mode
	}
	m.loadedMode = mode
	streaming := mode == MemoryStreaming

	// Load: what the request needs, up front in the resident mode (the text
	// encoder only on a conditioning-cache miss, below); the streaming mode
	// loads each component when its phase comes and releases it after.
	loads := []func() error{func() error { return s.loadDiT(m, mode) }}
	if !streaming {
		loads = append(loads, func() error { return s.loadVideoVAE(m) }, func() error { return s.loadAudioVAE(m) })
	}
	t.begin(PhaseLoad, len(loads), "components")
	for i, load := range loads {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		if err := load(); err != nil {
			return res, err
		}
		t.step(i + 1)
	}

	// References: decode, normalise, present to Qwen's processor, encode.
	cond := &conditions{present: prompt.Request{Task: prompt.T2VA}}
	if p.Task != TaskT2VA {
		if err := s.loadVideoVAE(m); err != nil {
			return res, err
		}
		if err := s.loadAudioVAE(m); err != nil {
			return res, err
		}
		t.begin(PhaseReferences, conditionUnits(p), "frames")
		if cond, err = s.prepareConditions(ctx, m, p, t.step); err != nil {
			return res, asInputError(err)
		}
		t.step(t.total) // the plan counted video frames from the file's header
		if streaming {
			m.releaseVAEs()
		}
	}
	cond.present.Prompt = r.Prompt

	// Text.
	hidden, tags, cached, err := s.encodeText(ctx, m, mode, cond, t)
	if err != nil {
		return res, err
	}
	defer s.opts.Backend.Free(hidden)
	res.Cached = cached
	if streaming {
		m.releaseText()
	}

	// Denoise.
	lh, lw := p.ModelCanvas(r).Latent()
	target := layout.Grid{T: p.LatentFrames, H: lh, W: lw}
	noise, err := sampler.InitialNoise(sampler.Portable, r.Seed, sampler.NoiseSpec{
		Conditions: cond.visual, Video: layout.VideoShape{C: m.dcfg.InChannels, T: target.T, H: lh, W: lw},
		AudioLatents: p.AudioLatents, AudioChannels: m.dcfg.AudioInChannels})
	if err != nil {
		return res, fmt.Errorf("engine: %w", err)
	}
	cond.addNoise(noise)
	audioNoise, err := layout.UnpackAudio(nil, noise.AudioRows, m.dcfg.AudioInChannels, p.AudioLatents)
	if err != nil {
		return res, fmt.Errorf("engine: %w", err)
	}
	if err := s.loadDiT(m, mode); err != nil {
		return res, err
	}
	dreq := denoise.Request{Text: hidden, TextTags: tags, Target: target, AudioLatents: p.AudioLatents,
		Keyframes: cond.keyframes, References: cond.references, VideoNoise: noise.Video, AudioNoise: audioNoise,
		Controls: r.controls()}
	t.begin(PhaseDenoise, r.Steps, "steps")
	pv := &previewer{s: s, m: m, p: p, t: t, ctx: ctx}
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
	dres, err := denoise.Run(ctx, m.dit, dreq, obs)
	if err != nil {
		return res, err
	}
	if pv.err != nil {
		return res, pv.err
	}
	if streaming {
		m.releaseDiT()
	}

	// Video decode, streaming frames into the outputs.
	if err := s.loadVideoVAE(m); err != nil {
		return res, err
	}
	oc := layout.Canvas{Width: r.Width, Height: r.Height}
	if err := out.Begin(media.OutputFormat(oc.Width, oc.Height, r.Frames)); err != nil {
		return res, fmt.Errorf("engine: output: %w", err)
	}
	z, err := videovae.WrapVolume(m.dcfg.InChannels, target.T, lh, lw, dres.Latents)
	if err != nil {
		return res, fmt.Errorf("engine: %w", err)
	}
	zd, err := m.vvae.Denormalize(z)
	if err != nil {
		return res, fmt.Errorf("engine: %w", err)
	}
	tp, err := m.vvae.Plan(lh, lw, nil)
	if err != nil {
		return res, fmt.Errorf("engine: %w", err)
	}
	dp, err := m.vvae.Config.Temporal().PlanDecode(target.T)
	if err != nil {
		return res, fmt.Errorf("engine: %w", err)
	}
	t.begin(PhaseVideoDecode, dp.Windows*tp.Tiles(), "tiles")
	written := 0
	var writeErr error
	_, err = m.vvae.DecodeStream(ctx, zd, &videovae.DecodeOptions{Progress: func(pr videovae.Progress) { t.step(pr.Done) }},
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
		return res, fmt.Errorf("engine: output: %w", writeErr)
	}
	if err != nil {
		return res, err
	}
	if written != r.Frames {
		return res, fmt.Errorf("engine: the video VAE decoded %d frames, the request has %d", written, r.Frames)
	}

	// Audio decode.
	if err := s.loadAudioVAE(m); err != nil {
		return res, err
	}
	lat := &audiovae.Latents{Channels: layout.AudioChannels, C: m.dcfg.AudioInChannels, A: p.AudioLatents, Data: dres.AudioLatents}
	// One unit per upsampling stage and the output stage, per channel.
	t.begin(PhaseAudioDecode, layout.AudioChannels*(len(m.avae.Config.DecoderRates)+1), "blocks")
	wave, err := m.avae.DecodeToWaveform(ctx, lat, &audiovae.DecodeOptions{Progress: func(pr audiovae.Progress) {
		t.total = pr.Total // the decoder's own count, should the two disagree
		t.step(pr.Done)
	}})
	if err != nil {
		return res, err
	}
	if streaming {
		m.releaseVAEs()
	}
	// The sound lasts exactly as long as the picture: the decoder's
	// 800·A samples are cut (or, by a fraction of a latent, padded with
	// silence) to round(frames·32000/24).
	samples := wave.Interleaved()
	n := media.AudioSamplesFor(r.Frames, media.SampleRate) * wave.Channels
	if n < len(samples) {
		samples = samples[:n]
	} else if n > len(samples) {
		samples = append(samples, make([]float32, n-len(samples))...)
	}
	t.begin(PhaseExport, 1, "outputs")
	if err := ctx.Err(); err != nil {
		return res, err
	}
	if err := out.WriteAudio(media.Audio{Rate: media.SampleRate, Channels: wave.Channels, Samples: samples}); err != nil {
		return res, fmt.Errorf("engine: output: %w", err)
	}
	if err := out.Close(); err != nil {
		return res, fmt.Errorf("engine: output: %w", err)
	}
	t.step(1)
	return res, nil
}

// encodeText presents the request to the text encoder and returns the
// conditioning [L, text_dim] and the rows' tags. A conditioning computed
// before (same model, token ids and vision pixels) comes from the session's
// cache without running — or, when it is not resident, loading — the text
// encoder.
func (s *Session) encodeText(ctx context.Context, m *models, mode MemoryMode, c *conditions, t *tracker) (*compute.Tensor, []int64, bool, error) {
	pres, err := prompt.Present(m.tok, c.present, prompt.Options{EmptyPrompt: prompt.PadEmpty})
	if err != nil {
		return nil, nil, false, fmt.Errorf("engine: %w", err)
	}
	in := &qwen3vl.Input{IDs: make([]int64, len(pres.IDs)), Images: c.images, Videos: c.videos}
	for i, id := range pres.IDs {
		in.IDs[i] = int64(id)
	}
	key := s.textKey(m, in)
	layers := m.qcfg.TapLayers()
	total := layers + len(pres.Blocks)
	if e, ok := s.cond.Get(key); ok {
		h, tags, err := s.fromEntry(e)
		if err == nil {
			t.begin(PhaseText, total, "layers")
			t.step(total)
			s.counters.TextCacheHits.Add(1)
			return h, tags, true, nil
		}
	}
	t.begin(PhaseText, total, "layers")
	if err := s.loadText(m, mode); err != nil {
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
	if e, err := toEntry(out); err == nil {
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
	h := condcache.NewHasher("engine.text/v1").String(s.textIdentity(m)).Int(int64(m.qcfg.TapLayers())).
		String(compute.BF16.String()).Int64s(in.IDs)
	for _, set := range [][]qwen3vl.VisionInput{in.Images, in.Videos} {
		h.Int(int64(len(set)))
		for _, v := range set {
			h.Int(int64(v.Grid.T)).Int(int64(v.Grid.H)).Int(int64(v.Grid.W)).Float32s(v.Pixels)
		}
	}
	return h.Key()
}

func toEntry(o *qwen3vl.Output) (*condcache.Entry, error) {
	raw := make([]byte, o.Hidden.Bytes())
	if err := o.Hidden.Backend().Download(raw, o.Hidden); err != nil {
		return nil, err
	}
	return &condcache.Entry{Tensors: []condcache.Tensor{
		{Name: "hidden", DType: o.Hidden.DType(), Shape: o.Hidden.Shape().Clone(), Data: raw},
		{Name: "tags", DType: compute.I64, Shape: compute.Shape{len(o.Tags)}, Data: compute.EncodeInt64(compute.I64, o.Tags)},
	}}, nil
}

func (s *Session) fromEntry(e *condcache.Entry) (*compute.Tensor, []int64, error) {
	h, ok1 := e.Tensor("hidden")
	tg, ok2 := e.Tensor("tags")
	if !ok1 || !ok2 {
		return nil, nil, errors.New("engine: conditioning cache entry is incomplete")
	}
	t, err := s.opts.Backend.Alloc(h.DType, h.Shape...)
	if err != nil {
		return nil, nil, err
	}
	if err := s.opts.Backend.Upload(t, h.Data); err != nil {
		s.opts.Backend.Free(t)
		return nil, nil, err
	}
	return t, compute.DecodeInt64(tg.DType, tg.Data), nil
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
	m, c := pv.m, pv.m.dcfg
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
	if err := pv.s.loadVideoVAE(m); err != nil {
		pv.err = err
		return
	}
	z, _ := videovae.WrapVolume(vs.C, vs.T, vs.H, vs.W, lat)
	win := 7
	if vs.T > win {
		start := max(0, min(vs.T-win, vs.T/2-win/2))
		z = z.Frames(start, start+win)
	}
	zd, err := m.vvae.Denormalize(z)
	if err != nil {
		pv.err = err
		return
	}
	var frames []videovae.Frame
	_, err = m.vvae.DecodeStream(pv.ctx, zd, nil, func(f videovae.Frame) error {
		frames = append(frames, videovae.Frame{Index: f.Index, C: f.C, H: f.H, W: f.W, Data: append([]float32(nil), f.Data...)})
		return nil
	})
	if err != nil {
		if pv.ctx.Err() == nil {
			pv.err = fmt.Errorf("engine: preview: %w", err)
		}
		return
	}
	if len(frames) == 0 {
		return
	}
	mid := frames[len(frames)/2]
	img := videovae.ToRGBA(mid)
	r := pv.p.Request
	if img.Rect.Dx() != r.Width || img.Rect.Dy() != r.Height {
		img = media.Resize(img, r.Width, r.Height, media.Bicubic)
	}
	pv.s.counters.Previews.Add(1)
	pv.t.preview(img, r.Frames/2, fmt.Sprintf("step %d of %d", rec.Step+1, rec.Steps))
}
