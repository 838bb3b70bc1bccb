package engine

import (
	"context"
	"fmt"
	"image"

	"h3studio/engine/audiovae"
	"h3studio/engine/denoise"
	"h3studio/engine/layout"
	"h3studio/engine/media"
	"h3studio/engine/prompt"
	"h3studio/engine/qwen3vl"
	"h3studio/engine/sampler"
	"h3studio/engine/videovae"
)

// conditions are a request's prepared keyframes or references: what the
// text encoder sees (vision inputs and the presentation's request) and what
// the transformer sees (latents, audio rows, layout geometry).
type conditions struct {
	present prompt.Request
	images  []qwen3vl.VisionInput // in <|image_pad|> run order
	videos  []qwen3vl.VisionInput // in <|video_pad|> run order (one per video)

	keyframes  []denoise.Keyframe
	references []denoise.Reference
}

// portableNoise is the video VAE's posterior noise from the project's
// portable RNG (engine/sampler): the reference draws it from a torch
// generator seeded with 42 for every condition, which is not reproduced bit
// for bit, only in distribution.
type portableNoise struct{}

func (portableNoise) Normal(seed uint64, n int) []float32 {
	s, _ := sampler.NewStream(sampler.Portable, seed)
	v := make([]float32, n)
	s.Fill(v)
	return v
}

// openImage decodes a conditioning picture from a path or takes the
// in-memory one.
func (s *Session) openImage(ctx context.Context, path string, img image.Image) (*image.RGBA, error) {
	if img != nil {
		return media.ToRGBA(img), nil
	}
	src, err := s.opener()(path)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	return src.Image(ctx)
}

func (s *Session) opener() media.Opener {
	if s.opts.Opener != nil {
		return s.opts.Opener
	}
	return media.Open
}

// prepareConditions decodes, normalises and encodes the request's keyframes
// (FL2VA) or references (Ref2VA): what the text encoder and the
// transformer are conditioned on.
func (g *generation) prepareConditions() error {
	s, m := g.s, g.m
	g.cond = &conditions{present: prompt.Request{Task: prompt.T2VA}}
	if g.p.Task != TaskT2VA {
		if err := s.loadVideoVAE(m, true, g.videoResidency); err != nil {
			return err
		}
		if err := s.loadAudioVAE(m, true); err != nil {
			return err
		}
		g.t.begin(PhaseReferences, conditionUnits(g.p), "frames")
		c, err := s.prepareConditions(g.ctx, m, g.p, g.t.step)
		if err != nil {
			return asInputError(err)
		}
		g.cond = c
		g.t.step(g.t.total) // the plan counted video frames from the file's header
		if g.release {
			m.releaseVAEs()
		} else {
			m.releaseEncoders()
		}
	}
	g.cond.present.Prompt = g.r.Prompt
	return nil
}

// prepareConditions decodes and normalises the request's keyframes or
// references, runs the Qwen processor on their pictures and encodes them
// with the VAEs. tick reports finished encode units.
func (s *Session) prepareConditions(ctx context.Context, m *models, p Plan, tick func(units int)) (*conditions, error) {
	r := p.Request
	c := &conditions{}
	mc := p.ModelCanvas(r)
	lh, lw := mc.Latent()
	merge := m.Text.Vision.SpatialMergeSize
	encOpts := func(base int, frames int) *videovae.EncodeOptions {
		return &videovae.EncodeOptions{Noise: portableNoise{}, Progress: func(pr videovae.Progress) {
			if pr.Total > 0 {
				tick(base + frames*pr.Done/pr.Total)
			}
		}}
	}
	done := 0
	encodeVisual := func(what string, frames []*image.RGBA) (*videovae.Volume, error) {
		px, err := videovae.PixelsFromRGBA(frames)
		if err != nil {
			return nil, fmt.Errorf("engine: %s: %w", what, err)
		}
		z, err := m.vvae.EncodeCondition(ctx, px, encOpts(done, len(frames)))
		if err != nil {
			return nil, fmt.Errorf("engine: encode %s: %w", what, err)
		}
		done += len(frames)
		tick(done)
		return z, nil
	}
	encodeSound := func(what string, a media.Audio) (*audiovae.Latents, error) {
		a, err := media.PrepareAudio(a, r.Frames)
		if err != nil {
			return nil, fmt.Errorf("engine: %s: %w", what, err)
		}
		w := &audiovae.Wave{Channels: 2, Samples: a.Frames(), Data: make([]float32, len(a.Samples))}
		for i := 0; i < w.Samples; i++ {
			w.Data[i], w.Data[w.Samples+i] = a.Samples[2*i], a.Samples[2*i+1]
		}
		l, err := m.avae.EncodeCondition(ctx, w, nil)
		if err != nil {
			return nil, fmt.Errorf("engine: encode %s: %w", what, err)
		}
		done += 2
		tick(done)
		return l, nil
	}
	vision := func(img *image.RGBA) (qwen3vl.VisionInput, prompt.Grid, error) {
		in, _, err := m.Processor.Image(qwen3vl.RGBFromImage(img))
		if err != nil {
			return in, prompt.Grid{}, err
		}
		return in, prompt.Grid{H: in.Grid.H / merge, W: in.Grid.W / merge}, nil
	}

	switch p.Task {
	case TaskFL2VA:
		c.present.Task = prompt.FL2VA
		hasFirst := r.First != "" || r.FirstImage != nil
		hasLast := r.Last != "" || r.LastImage != nil
		firstFit, lastFit := media.KeyframeFits(media.KeyframesReference, hasFirst, hasLast)
		for _, k := range []struct {
			anchor layout.Anchor
			field  string
			path   string
			img    image.Image
			fit    media.Fit
			on     bool
		}{{layout.First, "first frame", r.First, r.FirstImage, firstFit, hasFirst}, {layout.Last, "last frame", r.Last, r.LastImage, lastFit, hasLast}} {
			if !k.on {
				continue
			}
			img, err := s.openImage(ctx, k.path, k.img)
			if err != nil {
				return nil, fmt.Errorf("engine: %s: %w", k.field, err)
			}
			img = media.FitImage(img, mc.Width, mc.Height, k.fit)
			in, g, err := vision(img)
			if err != nil {
				return nil, fmt.Errorf("engine: %s: %w", k.field, err)
			}
			c.images = append(c.images, in)
			c.present.Keyframes = append(c.present.Keyframes, g)
			z, err := encodeVisual(k.field, []*image.RGBA{img})
			if err != nil {
				return nil, err
			}
			if z.T != 1 || z.H != lh || z.W != lw {
				return nil, fmt.Errorf("engine: %s encoded to a %d×%d×%d latent, the target grid is 1×%d×%d", k.field, z.T, z.H, z.W, lh, lw)
			}
			c.keyframes = append(c.keyframes, denoise.Keyframe{Anchor: k.anchor, Latent: z.Data})
		}
	case TaskRef2VA:
		c.present.Task = prompt.Ref2VA
		for i, ref := range r.References {
			label := ReferenceLabels(r.References)[i].Label
			what := fmt.Sprintf("reference %d (%s, %s)", i+1, label, ref.Path)
			src, err := s.opener()(ref.Path)
			if err != nil {
				return nil, fmt.Errorf("engine: %s: %w", what, err)
			}
			dr, err := s.prepareReference(ctx, m, p, ref, src, what, vision, encodeVisual, encodeSound, c)
			src.Close()
			if err != nil {
				return nil, err
			}
			c.references = append(c.references, dr)
		}
	}
	return c, nil
}

// prepareReference prepares one Ref2VA reference from its opened source.
func (s *Session) prepareReference(ctx context.Context, m *models, p Plan, ref Reference, src media.Source, what string,
	vision func(*image.RGBA) (qwen3vl.VisionInput, prompt.Grid, error),
	encodeVisual func(string, []*image.RGBA) (*videovae.Volume, error),
	encodeSound func(string, media.Audio) (*audiovae.Latents, error),
	c *conditions) (denoise.Reference, error) {
	r := p.Request
	merge := m.Text.Vision.SpatialMergeSize
	var dr denoise.Reference
	sound := func(a media.Audio) error {
		l, err := encodeSound(what, a)
		if err != nil {
			return err
		}
		dr.Audio = l.Rows()
		dr.Spec.AudioLatents = l.A
		return nil
	}
	switch ref.Kind {
	case RefImage:
		img, err := src.Image(ctx)
		if err != nil {
			return dr, fmt.Errorf("engine: %s: %w", what, err)
		}
		mc := p.ModelCanvas(r)
		img, err = media.PrepareRefImage(img, r.RefImageSize, mc.Width, mc.Height)
		if err != nil {
			return dr, fmt.Errorf("engine: %s: %w", what, err)
		}
		in, g, err := vision(img)
		if err != nil {
			return dr, fmt.Errorf("engine: %s: %w", what, err)
		}
		c.images = append(c.images, in)
		c.present.References = append(c.present.References, prompt.Reference{Kind: prompt.Image, Grid: g})
		z, err := encodeVisual(what, []*image.RGBA{img})
		if err != nil {
			return dr, err
		}
		dr.Spec = layout.Reference{Kind: layout.RefImage, Latent: layout.Grid{T: 1, H: z.H, W: z.W}}
		dr.Latent = z.Data
	case RefAudio:
		a, err := src.Audio(ctx)
		if err != nil {
			return dr, fmt.Errorf("engine: %s: %w", what, err)
		}
		if err := sound(a); err != nil {
			return dr, err
		}
		dr.Spec.Kind = layout.RefAudio
		c.present.References = append(c.present.References, prompt.Reference{Kind: prompt.Audio})
	case RefVideo, RefSilentVideo, RefVideoAudio:
		frames, rv, err := media.CollectVideo(ctx, src, r.Frames, r.RefVideoCanvas)
		if err != nil {
			return dr, fmt.Errorf("engine: %s: %w", what, err)
		}
		// Qwen samples every normalised frame (ERRATA F1); the VAE encodes
		// the 17m+5 prefix.
		blocks, err := prompt.SampleVideo(len(frames))
		if err != nil {
			return dr, fmt.Errorf("engine: %s: %w", what, err)
		}
		var sampled []*qwen3vl.RGB
		for _, b := range blocks {
			sampled = append(sampled, qwen3vl.RGBFromImage(frames[b.First]), qwen3vl.RGBFromImage(frames[b.Second]))
		}
		if err := ctx.Err(); err != nil {
			return dr, err
		}
		in, err := m.Processor.Video(sampled)
		if err != nil {
			return dr, fmt.Errorf("engine: %s: %w", what, err)
		}
		if err := ctx.Err(); err != nil {
			return dr, err
		}
		c.videos = append(c.videos, in)
		pr := prompt.Reference{Kind: prompt.Video, Grid: prompt.Grid{H: in.Grid.H / merge, W: in.Grid.W / merge}, Blocks: blocks}
		switch ref.Kind {
		case RefVideo:
			if src.Info().HasAudio {
				a, err := src.Audio(ctx)
				if err != nil {
					return dr, fmt.Errorf("engine: %s: sound track: %w", what, err)
				}
				if err := sound(a); err != nil {
					return dr, err
				}
				pr.Soundtrack = true
			}
		case RefVideoAudio:
			as, err := s.opener()(ref.Audio)
			if err != nil {
				return dr, fmt.Errorf("engine: %s: sound: %w", what, err)
			}
			a, err := as.Audio(ctx)
			as.Close()
			if err != nil {
				return dr, fmt.Errorf("engine: %s: sound %s: %w", what, ref.Audio, err)
			}
			if err := sound(a); err != nil {
				return dr, err
			}
			pr.Soundtrack = true
		}
		c.present.References = append(c.present.References, pr)
		z, err := encodeVisual(what, frames[:rv.VAEFrames])
		if err != nil {
			return dr, err
		}
		dr.Spec.Kind = layout.RefVideo
		dr.Spec.Latent = layout.Grid{T: z.T, H: z.H, W: z.W}
		dr.Latent = z.Data
	}
	return dr, nil
}

// conditionUnits is the references phase's work: one unit per encoded
// frame (keyframes and pictures: 1; videos: the frames the VAE encodes) and
// two per sound (one per stereo channel).
func conditionUnits(p Plan) int {
	n := len(p.Anchors())
	for _, rp := range p.References {
		switch rp.Kind {
		case RefImage:
			n++
		case RefAudio:
			n += 2
		default:
			n += max(rp.VAEFrames, 1)
			if rp.Sound {
				n += 2
			}
		}
	}
	return n
}
