package videovae

import (
	"context"
	"errors"
	"fmt"
	"image"
	"math"

	"h3studio/engine/configfile"
)

// Progress reports decode or encode progress after each spatial tile.
type Progress struct {
	Window, Windows int // 1-based temporal window (clip) and the count
	Tile, Tiles     int // 1-based tile within the window and the count
	Done, Total     int // tiles finished over the whole call and their total
	Frames          int // output frames delivered so far (decode)
}

// DecodeOptions configure decoding. The zero value is the reference recipe:
// the fixed 256-px tile plan with 64-px minimum overlaps.
type DecodeOptions struct {
	Tiling Tiling
	// TileSize and TileOverlap override the config's 256 / 64 px for
	// TileFixed (TileOverlap also for TileAdaptive); 0 keeps them.
	TileSize, TileOverlap int
	// Progress, when set, is called on the calling goroutine after every
	// tile; it must not block.
	Progress func(Progress)
}

// Plan returns the tile plan Decode uses for a latent grid of h×w.
func (m *Model) Plan(h, w int, o *DecodeOptions) (TilePlan, error) {
	if o == nil {
		o = &DecodeOptions{}
	}
	cfg := m.Config
	r := cfg.SpatialRatio()
	size, ov := cfg.TileSize, cfg.TileOverlap
	if o.TileSize != 0 {
		size = o.TileSize
	}
	if o.TileOverlap != 0 {
		ov = o.TileOverlap
	}
	if h < 1 || w < 1 {
		return TilePlan{}, fmt.Errorf("videovae: latent grid %d×%d is empty", h, w)
	}
	return PlanTiles(o.Tiling, h*r, w*r, size, ov, r)
}

// Denormalize returns z·std + mean per channel (the pipeline's
// `latents * latents_std + latents_mean`: a product then a sum, each
// rounded to float32).
func (m *Model) Denormalize(z *Volume) (*Volume, error) {
	return m.perChannel(z, configfile.Denormalize)
}

// Normalize returns (z − mean)/std per channel, as the pipeline normalizes
// encoded conditions.
func (m *Model) Normalize(z *Volume) (*Volume, error) {
	return m.perChannel(z, configfile.Normalize)
}

// perChannel checks the latents z and returns f(x, std, mean) of each
// value with its channel's statistics.
func (m *Model) perChannel(z *Volume, f func(x, std, mean float32) float32) (*Volume, error) {
	if err := m.checkLatents(z, "latents"); err != nil {
		return nil, err
	}
	o := NewVolume(z.C, z.T, z.H, z.W)
	n := z.T * z.H * z.W
	for c := 0; c < z.C; c++ {
		s, mu := m.Config.LatentsStd[c], m.Config.LatentsMean[c]
		for i := c * n; i < (c+1)*n; i++ {
			o.Data[i] = f(z.Data[i], s, mu)
		}
	}
	return o, nil
}

func (m *Model) checkLatents(z *Volume, what string) error {
	if z == nil {
		return fmt.Errorf("videovae: no %s", what)
	}
	if z.C != m.Config.LatentChannels {
		return fmt.Errorf("videovae: %s have %d channels; the video VAE takes %d (latent_channels)", what, z.C, m.Config.LatentChannels)
	}
	if z.T < 1 || z.H < 1 || z.W < 1 || len(z.Data) != z.C*z.T*z.H*z.W {
		return fmt.Errorf("videovae: %s geometry [%d %d %d %d] with %d values: need at least one frame, row and column", what, z.C, z.T, z.H, z.W, len(z.Data))
	}
	return z.CheckFinite(what)
}

// Frame is one decoded frame: [C, H, W] in ImageNet-normalized space.
type Frame struct {
	Index int
	C, H  int
	W     int
	Data  []float32
}

// DecodeStream decodes de-normalized latents z [24, T, h, w] and delivers
// the frames in order to emit as they are finished (one temporal window at
// a time), mirroring AutoencoderKLMiniMaxH3._decode: windows of 7 latents
// every 5, each decoded tile by tile and stitched, the first frames of
// every window cross-faded with the previous window's tail. ctx is checked
// between tiles.
func (m *Model) DecodeStream(ctx context.Context, z *Volume, o *DecodeOptions, emit func(Frame) error) (DecodePlan, error) {
	if m.dec == nil {
		return DecodePlan{}, errors.New("videovae: the model was loaded without its decoder")
	}
	if o == nil {
		o = &DecodeOptions{}
	}
	if err := m.checkLatents(z, "latents"); err != nil {
		return DecodePlan{}, err
	}
	g := m.Config.Temporal()
	plan, err := g.PlanDecode(z.T)
	if err != nil {
		return DecodePlan{}, err
	}
	tp, err := m.Plan(z.H, z.W, o)
	if err != nil {
		return DecodePlan{}, err
	}
	zp := z
	if plan.PadTokens > 0 {
		reps := make([]*Volume, 0, plan.PadTokens+1)
		reps = append(reps, z)
		last := z.Frames(z.T-1, z.T)
		for i := 0; i < plan.PadTokens; i++ {
			reps = append(reps, last)
		}
		zp = ConcatFrames(reps...)
	}
	prog := Progress{Windows: plan.Windows, Tiles: tp.Tiles(), Total: plan.Windows * tp.Tiles()}
	emitted := 0
	out := func(v *Volume) error {
		for t := 0; t < v.T && emitted < plan.Frames; t++ {
			f := Frame{Index: emitted, C: v.C, H: v.H, W: v.W, Data: v.Frame(t)}
			// Finite latents can still decode to NaN (a corrupt weight):
			// refuse the frame rather than emit garbage pixels.
			for i, x := range f.Data {
				if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
					hw := f.H * f.W
					return fmt.Errorf("videovae: the decoder produced a non-finite value %v in frame %d at channel %d, row %d, column %d (check the video VAE's weights)",
						x, f.Index, i/hw, i%hw/f.W, i%f.W)
				}
			}
			if err := emit(f); err != nil {
				return err
			}
			emitted++
		}
		return nil
	}
	chunkFrames := g.TokensChunk * g.Ratio
	parts := 1
	if g.TokenDrop > 0 {
		parts = 2
	}
	var overlap *Volume
	cfg := m.Config
	r := cfg.SpatialRatio()
	clip := NewVolume(cfg.OutChannels, plan.WindowLatents*g.Ratio, z.H*r, z.W*r) // reused by every window
	for i := 0; i < plan.Windows; i++ {
		prog.Window = i + 1
		start := i * g.TokensChunk
		win := zp.Frames(start, start+plan.WindowLatents)
		err := m.decodeClip(ctx, win, tp, &prog, o.Progress, clip)
		if err != nil {
			return plan, err
		}
		for j := 0; j < parts; j++ {
			fs := min(j*chunkFrames, clip.T)
			fe := min(fs+chunkFrames, clip.T)
			chunk := clip.Frames(min(fs+g.FramePrePadding, fe), fe)
			if j == 0 {
				if overlap != nil {
					blendFrames(overlap, chunk, g.FrameOverlap)
				}
				if err := out(chunk); err != nil {
					return plan, err
				}
				prog.Frames = emitted
			} else {
				overlap = chunk
			}
		}
	}
	if overlap != nil {
		if err := out(overlap); err != nil {
			return plan, err
		}
	}
	if emitted != plan.Frames {
		return plan, fmt.Errorf("videovae: internal error: decoded %d frames, planned %d", emitted, plan.Frames)
	}
	return plan, nil
}

// blendFrames cross-fades the first frames of b with the last frames of a
// in place (AutoencoderKLMiniMaxH3._blend along time).
func blendFrames(a, b *Volume, extent int) {
	n := min(a.T, b.T, extent)
	if n <= 0 {
		return
	}
	hw := b.H * b.W
	for c := 0; c < b.C; c++ {
		for p := 0; p < n; p++ {
			w := blendWeight(p, n)
			av := a.Data[a.index(c, a.T-n+p, 0, 0):][:hw]
			bv := b.Data[b.index(c, p, 0, 0):][:hw]
			for i := range bv {
				bv[i] = blend(av[i], bv[i], w)
			}
		}
	}
}

// decodeClip decodes one temporal window [24, Tw, h, w] tile by tile and
// stitches the tiles into out (AutoencoderKLMiniMaxH3._decode_clip); the
// tiles' kept regions cover out, so every value is overwritten.
func (m *Model) decodeClip(ctx context.Context, z *Volume, tp TilePlan, prog *Progress, report func(Progress), out *Volume) error {
	r := m.Config.SpatialRatio()
	st := newStitcher(out, tp, 1)
	prog.Tile = 0
	var tiles []*Volume
	var at [][2]int
	for i, y0 := range tp.Y.Starts {
		for j, x0 := range tp.X.Starts {
			tiles = append(tiles, z.Box(0, z.T, y0/r, (y0+tp.Y.Tile)/r, x0/r, (x0+tp.X.Tile)/r))
			at = append(at, [2]int{i, j})
		}
	}
	_, err := m.dec.ForwardTiles(ctx, m.b, tiles, func(k int, pix *Volume) error {
		st.put(at[k][0], at[k][1], pix)
		prog.Tile++
		prog.Done++
		if report != nil {
			report(*prog)
		}
		return nil
	})
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("videovae: decode stopped after %d of %d tiles: %w", prog.Done, prog.Total, err)
	}
	if err != nil {
		return fmt.Errorf("videovae: decode window %d tile %d: %w", prog.Window, prog.Tile+1, err)
	}
	return nil
}

// Decode decodes de-normalized latents z [24, T, h, w] into the VAE's
// output [3, F, 16h, 16w] in ImageNet-normalized space (diffusers
// AutoencoderKLMiniMaxH3.decode). F = 17n + 5 for T = 5n + 2.
func (m *Model) Decode(ctx context.Context, z *Volume, o *DecodeOptions) (*Volume, error) {
	var frames []Frame
	plan, err := m.DecodeStream(ctx, z, o, func(f Frame) error { frames = append(frames, f); return nil })
	if err != nil {
		return nil, err
	}
	if len(frames) == 0 {
		return nil, fmt.Errorf("videovae: no frames decoded from %d latents", plan.Latents)
	}
	f0 := frames[0]
	v := NewVolume(f0.C, len(frames), f0.H, f0.W)
	hw := f0.H * f0.W
	for t, f := range frames {
		for c := 0; c < f.C; c++ {
			copy(v.Data[v.index(c, t, 0, 0):][:hw], f.Data[c*hw:(c+1)*hw])
		}
	}
	return v, nil
}

// DecodeRawClip runs the decoder on one latent window without tiling or
// temporal stitching: decoder(post_quant_conv(z)) (the fixture's
// decode.raw_clip).
func (m *Model) DecodeRawClip(z *Volume) (*Volume, error) {
	if m.dec == nil {
		return nil, errors.New("videovae: the model was loaded without its decoder")
	}
	if err := m.checkLatents(z, "latents"); err != nil {
		return nil, err
	}
	return m.dec.Forward(m.b, z)
}

// ImageNet pixel statistics of the VAE's pixel space (spec §8.2).
var (
	PixelMean = [3]float32{0.485, 0.456, 0.406}
	PixelStd  = [3]float32{0.229, 0.224, 0.225}
)

// ToUnit converts decoder output in place to RGB in [0, 1]:
// clamp(x·std + mean, 0, 1) per channel (the pipeline's
// `(video * pixel_std + pixel_mean).clamp(0, 1)`). v is [3, T, H, W].
func ToUnit(v *Volume) {
	n := v.T * v.H * v.W
	for c := 0; c < v.C && c < 3; c++ {
		for i := c * n; i < (c+1)*n; i++ {
			x := float32(v.Data[i]*PixelStd[c]) + PixelMean[c]
			v.Data[i] = clamp01(x)
		}
	}
}

// FrameToUnit is ToUnit for one decoded frame [3, H, W].
func FrameToUnit(f Frame) []float32 {
	out := make([]float32, len(f.Data))
	hw := f.H * f.W
	for c := 0; c < f.C && c < 3; c++ {
		for i := c * hw; i < (c+1)*hw; i++ {
			out[i] = clamp01(float32(f.Data[i]*PixelStd[c]) + PixelMean[c])
		}
	}
	return out
}

func clamp01(x float32) float32 {
	switch {
	case x < 0:
		return 0
	case x > 1:
		return 1
	}
	return x // NaN stays NaN (torch.clamp)
}

// ToRGBA converts one decoded frame to 8-bit RGBA: round-half-even of
// 255·clamp(x·std + mean, 0, 1) (spec §8.10; numpy's round).
func ToRGBA(f Frame) *image.RGBA {
	unit := FrameToUnit(f)
	img := image.NewRGBA(image.Rect(0, 0, f.W, f.H))
	hw := f.H * f.W
	for i := 0; i < hw; i++ {
		for c := 0; c < 3; c++ {
			v := unit[c*hw+i]
			if f.C == 1 {
				v = unit[i]
			}
			img.Pix[4*i+c] = uint8(math.RoundToEven(float64(float32(v * 255))))
		}
		img.Pix[4*i+3] = 255
	}
	return img
}

// DecodeToPixels is the pipeline's video decode step: normalized latents
// (as the DiT produces them) → latents·std + mean → Decode → ·pixel_std +
// pixel_mean → clamp to [0, 1]. The result is [3, F, H, W]; TimeMajor gives
// the pipeline's [F, 3, H, W] order (loop fixtures' out.video).
func (m *Model) DecodeToPixels(ctx context.Context, normalized *Volume, o *DecodeOptions) (*Volume, error) {
	z, err := m.Denormalize(normalized)
	if err != nil {
		return nil, err
	}
	v, err := m.Decode(ctx, z, o)
	if err != nil {
		return nil, err
	}
	ToUnit(v)
	return v, nil
}

// TimeMajor returns the values in [T, C, H, W] order.
func (v *Volume) TimeMajor() []float32 {
	out := make([]float32, len(v.Data))
	hw := v.H * v.W
	for t := 0; t < v.T; t++ {
		for c := 0; c < v.C; c++ {
			copy(out[(t*v.C+c)*hw:][:hw], v.Data[v.index(c, t, 0, 0):][:hw])
		}
	}
	return out
}

// PreviewFrame decodes the middle frame of normalized latents z from the
// window latents around their middle (a window of a full decode): a
// representative picture at a fraction of the cost. It returns nil when
// the decoder yields no frame.
func (m *Model) PreviewFrame(ctx context.Context, z *Volume, window int) (*image.RGBA, error) {
	if z.T > window {
		start := max(0, min(z.T-window, z.T/2-window/2))
		z = z.Frames(start, start+window)
	}
	zd, err := m.Denormalize(z)
	if err != nil {
		return nil, err
	}
	var frames []Frame
	if _, err := m.DecodeStream(ctx, zd, nil, func(f Frame) error {
		frames = append(frames, Frame{Index: f.Index, C: f.C, H: f.H, W: f.W, Data: append([]float32(nil), f.Data...)})
		return nil
	}); err != nil {
		return nil, err
	}
	if len(frames) == 0 {
		return nil, nil
	}
	return ToRGBA(frames[len(frames)/2]), nil
}
