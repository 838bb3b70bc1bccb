package videovae

import (
	"context"
	"errors"
	"fmt"
	"image"
	"math"

	"h3studio/engine/compute"
)

// NoiseSource draws the standard-normal values of a posterior sample. The
// engine passes one backed by the project's portable RNG (engine/sampler);
// the reference's torch CPU generator is not reproduced, so sampled
// conditions match the reference in distribution, not bit for bit.
type NoiseSource interface {
	// Normal returns n standard-normal values from a generator freshly
	// seeded with seed, in generation order.
	Normal(seed uint64, n int) []float32
}

// PosteriorRule chooses how encoded moments become condition latents.
type PosteriorRule uint8

const (
	// SampleSeed42F16 is the reference recipe (diffusers
	// encode_vae_condition): z = μ + σ·ε with ε drawn from a generator
	// freshly seeded with 42 for every condition, then rounded to float16
	// and back. The default.
	SampleSeed42F16 PosteriorRule = iota
	// PosteriorMean is h3.c's deterministic rule: z = μ, no float16 rounding.
	PosteriorMean
)

func (p PosteriorRule) String() string {
	switch p {
	case SampleSeed42F16:
		return "sample-seed42-f16"
	case PosteriorMean:
		return "mean"
	}
	return fmt.Sprintf("PosteriorRule(%d)", uint8(p))
}

// ReferenceEncodeSeed is the seed the reference re-seeds with for every
// condition encode (components.keyframe_encode_seed).
const ReferenceEncodeSeed = 42

// EncodeOptions configure encoding. The zero value is the reference recipe
// (256-px tiles, sampled posterior with seed 42 and float16 rounding).
type EncodeOptions struct {
	// Tiling is TileFixed (the reference 256/64 plan, the default) or
	// TileOff. The encoder never uses the adaptive plan (neither does h3.c).
	Tiling                Tiling
	TileSize, TileOverlap int // 0: the config's
	Posterior             PosteriorRule
	// Noise draws ε for SampleSeed42F16; it is required by that rule.
	Noise NoiseSource
	// Progress, when set, is called after every encoded tile.
	Progress func(Progress)
}

// EncodeMoments encodes ImageNet-normalized pixels x [3, F, H, W] into the
// posterior moments [2·24, T, H/16, W/16] (mean then log-variance),
// mirroring AutoencoderKLMiniMaxH3._encode: a single frame goes through the
// encoder alone; longer videos are padded with copies of the last frame to
// whole 17-frame clips, each clip is encoded on its own (tiled), and the
// last 3 latent frames are dropped (F = 17n+5 → T = 5n+2).
func (m *Model) EncodeMoments(ctx context.Context, x *Volume, o *EncodeOptions) (*Volume, error) {
	if m.enc == nil {
		return nil, errors.New("videovae: the model was loaded without its encoder")
	}
	if o == nil {
		o = &EncodeOptions{}
	}
	cfg := m.Config
	if x == nil || x.C != cfg.InChannels {
		c := 0
		if x != nil {
			c = x.C
		}
		return nil, fmt.Errorf("videovae: pixels have %d channels; the encoder takes %d (RGB)", c, cfg.InChannels)
	}
	r := cfg.SpatialRatio()
	if x.T < 1 || x.H < r || x.W < r || x.H%r != 0 || x.W%r != 0 || len(x.Data) != x.C*x.T*x.H*x.W {
		return nil, fmt.Errorf("videovae: pixels [%d %d %d %d]: need at least one frame and a canvas whose sides are multiples of %d px", x.C, x.T, x.H, x.W, r)
	}
	if err := x.CheckFinite("pixels"); err != nil {
		return nil, err
	}
	// The checks and copies of a 768-class reference video's pixels take
	// a good part of a second each on the CPU: a cancel is honoured
	// between them.
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("videovae: encode stopped before its first tile: %w", err)
	}
	if o.Tiling == TileAdaptive {
		return nil, errors.New("videovae: the encoder uses the reference tile plan (TileFixed) or none (TileOff)")
	}
	size, ov := cfg.TileSize, cfg.TileOverlap
	if o.TileSize != 0 {
		size = o.TileSize
	}
	if o.TileOverlap != 0 {
		ov = o.TileOverlap
	}
	tp, err := PlanTiles(o.Tiling, x.H, x.W, size, ov, r)
	if err != nil {
		return nil, err
	}
	defer m.enc.release(m.b)
	g := cfg.Temporal()
	if x.T == 1 {
		prog := Progress{Window: 1, Windows: 1, Tiles: tp.Tiles(), Total: tp.Tiles()}
		return m.encodeClip(ctx, x, tp, &prog, o.Progress)
	}
	clips := (x.T + g.ClipLength - 1) / g.ClipLength
	if x.T%g.ClipLength != 0 {
		reps := []*Volume{x}
		last := x.Frames(x.T-1, x.T)
		for i := x.T; i < clips*g.ClipLength; i++ {
			reps = append(reps, last)
		}
		x = ConcatFrames(reps...)
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("videovae: encode stopped before its first tile: %w", err)
		}
	}
	prog := Progress{Windows: clips, Tiles: tp.Tiles(), Total: clips * tp.Tiles()}
	var parts []*Volume
	for i := 0; i < clips; i++ {
		prog.Window = i + 1
		mo, err := m.encodeClip(ctx, x.Frames(i*g.ClipLength, (i+1)*g.ClipLength), tp, &prog, o.Progress)
		if err != nil {
			return nil, err
		}
		parts = append(parts, mo)
	}
	all := ConcatFrames(parts...)
	if g.TokenDrop >= all.T {
		return nil, fmt.Errorf("videovae: %d frames encode to %d latents, not more than token_drop %d", x.T, all.T, g.TokenDrop)
	}
	return all.Frames(0, all.T-g.TokenDrop), nil
}

// encodeClip encodes one clip tile by tile and stitches the moments with
// the overlaps in latent units (AutoencoderKLMiniMaxH3._encode_clip).
func (m *Model) encodeClip(ctx context.Context, x *Volume, tp TilePlan, prog *Progress, report func(Progress)) (*Volume, error) {
	r := m.Config.SpatialRatio()
	var st *stitcher
	var out *Volume
	prog.Tile = 0
	for i, y0 := range tp.Y.Starts {
		for j, x0 := range tp.X.Starts {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("videovae: encode stopped after %d of %d tiles: %w", prog.Done, prog.Total, err)
			}
			mo, err := m.enc.ForwardContext(ctx, m.b, x.Box(0, x.T, y0, y0+tp.Y.Tile, x0, x0+tp.X.Tile))
			if err != nil {
				return nil, fmt.Errorf("videovae: encode clip %d tile %d: %w", prog.Window, prog.Tile+1, err)
			}
			if out == nil {
				out = NewVolume(mo.C, mo.T, x.H/r, x.W/r)
				st = newStitcher(out, tp, r)
			}
			st.put(i, j, mo)
			prog.Tile++
			prog.Done++
			if report != nil {
				report(*prog)
			}
		}
	}
	return out, nil
}

// PosteriorMeanOf returns the first half of the moments' channels (the
// posterior mode).
func PosteriorMeanOf(moments *Volume) *Volume {
	c := moments.C / 2
	return &Volume{C: c, T: moments.T, H: moments.H, W: moments.W, Data: append([]float32(nil), moments.Data[:c*moments.T*moments.H*moments.W]...)}
}

// SamplePosterior returns μ + σ·ε with σ = exp(0.5·clamp(logvar, −30, 20))
// (diffusers DiagonalGaussianDistribution.sample), ε in the order of the
// mean's elements.
func SamplePosterior(moments *Volume, eps []float32) (*Volume, error) {
	mean := PosteriorMeanOf(moments)
	if len(eps) != len(mean.Data) {
		return nil, fmt.Errorf("videovae: %d noise values for a posterior of %d", len(eps), len(mean.Data))
	}
	lv := moments.Data[len(mean.Data):]
	for i, mu := range mean.Data {
		l := min(max(lv[i], -30), 20)
		std := float32(math.Exp(float64(float32(0.5 * l))))
		mean.Data[i] = mu + float32(std*eps[i])
	}
	return mean, nil
}

// EncodeCondition is the pipeline's encode_vae_condition: ImageNet-
// normalized pixels → moments → latents by o.Posterior → normalized with
// the latent mean/std. The result [24, T, h, w] is what the DiT patchifies
// into condition rows.
func (m *Model) EncodeCondition(ctx context.Context, pixels *Volume, o *EncodeOptions) (*Volume, error) {
	if o == nil {
		o = &EncodeOptions{}
	}
	if o.Posterior == SampleSeed42F16 && o.Noise == nil {
		return nil, errors.New("videovae: the sampled posterior (SampleSeed42F16) needs a NoiseSource; use PosteriorMean for h3.c's deterministic rule")
	}
	mo, err := m.EncodeMoments(ctx, pixels, o)
	if err != nil {
		return nil, err
	}
	var z *Volume
	switch o.Posterior {
	case SampleSeed42F16:
		n := len(mo.Data) / 2
		if z, err = SamplePosterior(mo, o.Noise.Normal(ReferenceEncodeSeed, n)); err != nil {
			return nil, err
		}
		for i, v := range z.Data {
			z.Data[i] = compute.RoundF16(v)
		}
	case PosteriorMean:
		z = PosteriorMeanOf(mo)
	default:
		return nil, fmt.Errorf("videovae: unknown posterior rule %v", o.Posterior)
	}
	return m.Normalize(z)
}

// PixelsFromRGBA converts frames to the encoder's input [3, F, H, W]:
// (u8/255 − mean)/std per channel in float32, in encode_vae_condition's
// order (divide, subtract, divide). All frames must have the same size and
// be opaque (RGBA is premultiplied; alpha is ignored).
func PixelsFromRGBA(frames []*image.RGBA) (*Volume, error) {
	if len(frames) == 0 {
		return nil, errors.New("videovae: no frames to encode")
	}
	b0 := frames[0].Bounds()
	H, W := b0.Dy(), b0.Dx()
	v := NewVolume(3, len(frames), H, W)
	for t, f := range frames {
		b := f.Bounds()
		if b.Dx() != W || b.Dy() != H {
			return nil, fmt.Errorf("videovae: frame %d is %d×%d, frame 0 is %d×%d", t, b.Dx(), b.Dy(), W, H)
		}
		for y := 0; y < H; y++ {
			row := f.Pix[f.PixOffset(b.Min.X, b.Min.Y+y):]
			for x := 0; x < W; x++ {
				for c := 0; c < 3; c++ {
					u := float32(row[4*x+c]) / 255
					v.Data[v.index(c, t, y, x)] = (u - PixelMean[c]) / PixelStd[c]
				}
			}
		}
	}
	return v, nil
}
