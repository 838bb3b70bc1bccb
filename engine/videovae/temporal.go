package videovae

import "fmt"

// Temporal is the clip geometry of diffusers AutoencoderKLMiniMaxH3
// (H3-ENCODERS-VAES.md §8.6, §8.9): encode runs ClipLength-frame clips and
// drops TokenDrop trailing latents; decode re-derives the windows and the
// cross-fade from the same numbers.
type Temporal struct {
	Ratio           int // pixel frames per latent (4)
	ClipLength      int // pixel frames per encoded clip (17)
	TokenDrop       int // latents dropped after encoding (3)
	TokensChunk     int // ⌈ClipLength/Ratio⌉ latents per clip (5)
	FramePrePadding int // (−ClipLength) mod Ratio (3)
	TokenOverlap    int // (−TokenDrop) mod TokensChunk (2)
	FrameOverlap    int // max(TokenOverlap·Ratio − FramePrePadding, 0) (5)
}

// NewTemporal derives the geometry from the config values.
func NewTemporal(ratio, clip, drop int) Temporal {
	t := Temporal{Ratio: ratio, ClipLength: clip, TokenDrop: drop}
	t.TokensChunk = (clip + ratio - 1) / ratio
	t.FramePrePadding = mod(-clip, ratio)
	t.TokenOverlap = mod(-drop, t.TokensChunk)
	t.FrameOverlap = max(t.TokenOverlap*ratio-t.FramePrePadding, 0)
	return t
}

func mod(a, m int) int { return ((a % m) + m) % m }

// Temporal returns the config's clip geometry.
func (c *Config) Temporal() Temporal {
	return NewTemporal(c.TemporalRatio(), c.ClipLength, c.TokenDrop)
}

// DecodePlan is the temporal schedule of one decode.
type DecodePlan struct {
	Latents   int // latent frames given
	PadTokens int // copies of the last latent appended to fill the last window
	Windows   int // decoder passes (each over WindowLatents latents)
	// WindowLatents is TokensChunk + TokenOverlap (7): the latents of one pass.
	WindowLatents int
	// PadFrames is the number of trailing frames cut because they came from
	// the appended copies.
	PadFrames int
	Frames    int // output frames
}

// PlanDecode mirrors AutoencoderKLMiniMaxH3._decode's chunk arithmetic for
// T latent frames. The reference decodes any T ≥ 3 (ERRATA §3.1): it pads
// with repeats of the last latent to whole windows and cuts the extra
// frames. T = 5n + 2 (the pipeline's lengths) needs no padding.
func (g Temporal) PlanDecode(T int) (DecodePlan, error) {
	numTokens := T + g.TokenDrop
	pad := mod(-numTokens, g.TokensChunk)
	drop := 0
	if g.TokenDrop > 0 {
		drop = 1
	}
	p := DecodePlan{Latents: T, PadTokens: pad, WindowLatents: g.TokensChunk + g.TokenOverlap}
	p.Windows = (numTokens+pad)/g.TokensChunk - drop
	if T < 1 || p.Windows < 1 {
		return DecodePlan{}, fmt.Errorf("videovae: %d latent frames cannot be decoded: the temporal chunking needs at least %d (a whole %d-latent window after the %d dropped latents)",
			T, g.minLatents(), g.TokensChunk, g.TokenDrop)
	}
	if pad > 0 {
		tail := g.ClipLength % g.Ratio
		before := T // z.shape[2] − pad_tokens with z already padded
		for k := 0; k < pad; k++ {
			if tail != 0 && (before+k)%g.TokensChunk == 0 {
				p.PadFrames += tail
			} else {
				p.PadFrames += g.Ratio
			}
		}
	}
	main := g.TokensChunk*g.Ratio - g.FramePrePadding
	p.Frames = p.Windows * main
	if g.TokenDrop > 0 {
		p.Frames += g.tailFrames()
	}
	p.Frames -= p.PadFrames
	if p.Frames < 1 {
		return DecodePlan{}, fmt.Errorf("videovae: %d latent frames decode to no frame", T)
	}
	return p, nil
}

// minLatents is the smallest decodable latent count.
func (g Temporal) minLatents() int {
	// PlanDecode needs ⌈(T+TokenDrop)/TokensChunk⌉ − d ≥ 1 windows (d = 1
	// when latents are dropped), i.e. T + TokenDrop > d·TokensChunk.
	d := 0
	if g.TokenDrop > 0 {
		d = 1
	}
	return max(1, d*g.TokensChunk-g.TokenDrop+1)
}

// windowFrames is the number of pixel frames one decoder pass yields.
func (g Temporal) windowFrames() int { return (g.TokensChunk + g.TokenOverlap) * g.Ratio }

// tailFrames is the length of the overlap part of a window (5).
func (g Temporal) tailFrames() int {
	chunk := g.TokensChunk * g.Ratio
	n := min(g.windowFrames(), 2*chunk) - chunk
	return max(n-g.FramePrePadding, 0)
}

// EncodeLatents is the number of latent frames encoding F pixel frames
// yields: 1 for a single image, else ⌈F/clip⌉ clips of TokensChunk latents
// minus TokenDrop (diffusers AutoencoderKLMiniMaxH3._encode).
func (g Temporal) EncodeLatents(F int) int {
	if F == 1 {
		return 1
	}
	clips := (F + g.ClipLength - 1) / g.ClipLength
	return clips*g.clipLatents() - g.TokenDrop
}

// clipLatents is the latent count of one encoded clip: the causal encoder
// maps L frames to ⌈L/Ratio⌉ (each temporal downsampling halves, rounding up).
func (g Temporal) clipLatents() int { return (g.ClipLength + g.Ratio - 1) / g.Ratio }
