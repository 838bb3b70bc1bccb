package videovae

import (
	"fmt"

	"h3studio/engine/compute"
)

// DecodeCost is the predicted work and storage of one decode, computed
// from shapes alone (no weights). It counts what this package's decoder
// allocates and dispatches, with the CPU reference's FLOP conventions
// (a multiply-add is 2 FLOPs; see compute/cpu), and is checked against
// the CPU backend's counters on a real tile (cost_test.go).
type DecodeCost struct {
	Latents      [3]int // T, h, w
	Frames       int    // decoded frames
	Plan         TilePlan
	Windows      int // temporal windows
	TilePasses   int // decoder forwards: Windows × Plan.Tiles()
	TileTokens   int // sequence length of one pass (tokens + registers + 1)
	FLOPsPerTile float64
	FLOPs        float64 // whole decode
	WeightBytes  int64   // decoder weights resident during the decode
	DeviceBytes  int64   // peak backend activations of one tile pass (incl. RoPE tables)
	HostBytes    int64   // peak host buffers of a streaming decode (window canvas, two rows of tiles, tail, latents)
	PeakBytes    int64   // WeightBytes + DeviceBytes + HostBytes
	WeightDType  compute.DType
	// The streamed decode (Options.Residency): one block bound at a
	// time, every tile's hidden state of a window held between stages.
	StreamedWeightBytes int64 // embedder, output projection and, when its stage is the peak, one block
	StreamedDeviceBytes int64 // the peak stage's activations plus the other tiles' hidden states
	StreamedPeakBytes   int64 // StreamedWeightBytes + StreamedDeviceBytes + HostBytes
}

// EstimateDecode predicts DecodeStream's cost for latents [24, T, h, w]
// with options o (nil: the reference tiling). weightDType is the dtype the
// decoder's matrices are held in (compute.Invalid: F32, the release).
func EstimateDecode(cfg *Config, T, h, w int, o *DecodeOptions, weightDType compute.DType) (DecodeCost, error) {
	if o == nil {
		o = &DecodeOptions{}
	}
	if weightDType == compute.Invalid {
		weightDType = compute.F32
	}
	if cfg.DecoderFFNHidden <= 0 {
		return DecodeCost{}, fmt.Errorf("videovae: EstimateDecode: the config's MLP width is unknown")
	}
	g := cfg.Temporal()
	dp, err := g.PlanDecode(T)
	if err != nil {
		return DecodeCost{}, err
	}
	m := &Model{Config: cfg}
	tp, err := m.Plan(h, w, o)
	if err != nil {
		return DecodeCost{}, err
	}
	r, rt := cfg.SpatialRatio(), cfg.TemporalRatio()
	c := DecodeCost{Latents: [3]int{T, h, w}, Frames: dp.Frames, Plan: tp, Windows: dp.Windows, TilePasses: dp.Windows * tp.Tiles(), WeightDType: weightDType}
	th, tw := tp.Y.Tile/r, tp.X.Tile/r
	n := dp.WindowLatents * th * tw
	S := n + cfg.DecoderRegisters + 1
	c.TileTokens = S
	fl, dev := tileCost(cfg, n, S)
	c.FLOPsPerTile = fl
	c.FLOPs = fl * float64(c.TilePasses)
	c.DeviceBytes = dev
	c.WeightBytes = decoderWeightBytes(cfg, weightDType)
	// Host: the window canvas, the previous and the current row of raw
	// tiles plus the tile being unpatchified, the retained tail, the padded
	// latents and one tile of latents; 4 bytes each.
	wf := dp.WindowLatents * rt
	C := int64(cfg.OutChannels)
	canvas := C * int64(wf) * int64(h*r) * int64(w*r)
	tile := C * int64(wf) * int64(tp.Y.Tile) * int64(tp.X.Tile)
	rows := int64(2*tp.X.Count()+1) * tile
	tail := C * int64(g.tailFrames()) * int64(h*r) * int64(w*r)
	lat := int64(cfg.LatentChannels) * int64(T+dp.PadTokens) * int64(h*w)
	tok := int64(n) * int64(cfg.OutChannels*rt*r*r) // downloaded proj_out rows
	c.HostBytes = 4 * (canvas + rows + tail + lat + tok)
	c.PeakBytes = c.WeightBytes + c.DeviceBytes + c.HostBytes
	// Streamed, a block is bound only while its stage runs: the peak is
	// the larger of a block stage with its block and the embedding or the
	// output projection with none, every other tile's hidden state held.
	blk := decoderBlockBytes(cfg, weightDType)
	c.StreamedWeightBytes = c.WeightBytes - int64(cfg.DecoderLayers)*blk
	embed, block, out := tileStages(cfg, n, S)
	c.StreamedDeviceBytes = max(embed, out)
	if cfg.DecoderLayers > 0 && blk+block > c.StreamedDeviceBytes {
		c.StreamedWeightBytes += blk
		c.StreamedDeviceBytes = block
	}
	c.StreamedDeviceBytes += int64(tp.Tiles()-1) * 4 * int64(S) * int64(cfg.Dim())
	c.StreamedPeakBytes = c.StreamedWeightBytes + c.StreamedDeviceBytes + c.HostBytes
	return c, nil
}

// decoderWeightBytes is the storage of post_quant_conv and the ViT decoder.
func decoderWeightBytes(cfg *Config, dt compute.DType) int64 {
	D, L := int64(cfg.Dim()), int64(cfg.LatentChannels)
	P := int64(cfg.OutChannels * cfg.TemporalRatio() * cfg.SpatialRatio() * cfg.SpatialRatio())
	f32 := L*L + L + D*L + D + int64(cfg.DecoderRegisters)*D + 2*D + P*D + P
	return 4*f32 + int64(cfg.DecoderLayers)*decoderBlockBytes(cfg, dt)
}

// decoderBlockBytes is the storage of one decoder block: norms and layer
// scales (kept F32), projections and their biases in dt.
func decoderBlockBytes(cfg *Config, dt compute.DType) int64 {
	D, F := int64(cfg.Dim()), int64(cfg.DecoderFFNHidden)
	mats := 3*D*D + D*D + 2*F*D + D*F + 3*D + D + 2*F + D
	return 4*4*D + int64(dt.Size())*mats
}

// tileCost returns the FLOPs and peak device activation bytes of one
// Decoder.Forward over n patch tokens (S with the suffix tokens), mirroring
// its allocations and kernels.
func tileCost(cfg *Config, n, S int) (float64, int64) {
	D, H, dh, F := float64(cfg.Dim()), float64(cfg.DecoderHeads), float64(cfg.DecoderHeadDim), float64(cfg.DecoderFFNHidden)
	L := float64(cfg.LatentChannels)
	P := float64(cfg.OutChannels * cfg.TemporalRatio() * cfg.SpatialRatio() * cfg.SpatialRatio())
	nf, Sf := float64(n), float64(S)
	fl := 2*nf*L*L + 2*nf*L*D // post_quant_conv, x_embedder
	blk := 4*Sf*D +           // norm1
		2*Sf*D*3*D + // qkv
		4*2*Sf*D + // q/k RMSNorm
		3*2*Sf*D + // RoPE
		4*H*Sf*Sf*dh + // attention
		2*Sf*D*D + // to_out
		2*Sf*D + // ×scale1, +x
		4*Sf*D + // norm2
		2*Sf*D*2*F + // w1
		6*Sf*F + // GLU
		2*Sf*F*D + // w2
		2*Sf*D // ×scale2, +x
	fl += float64(cfg.DecoderLayers) * blk
	fl += 6*nf*D + 2*nf*D*P // norm_out, proj_out
	embed, block, out := tileStages(cfg, n, S)
	return fl, max(embed, block, out)
}

// tileStages returns the device activation bytes of one Decoder.Forward
// over n patch tokens (S with the suffix tokens) at the peak of each of
// its stages: the embedding, a block, the output projection (the RoPE
// tables, cached across tiles, in each).
func tileStages(cfg *Config, n, S int) (embed, block, out int64) {
	P := int64(cfg.OutChannels * cfg.TemporalRatio() * cfg.SpatialRatio() * cfg.SpatialRatio())
	half := int64(cfg.RotaryDim() / 2)
	Si, Di, Fi, ni := int64(S), int64(cfg.Dim()), int64(cfg.DecoderFFNHidden), int64(n)
	rope := 2 * Si * half
	embed = 2*ni*int64(cfg.LatentChannels) + Si*Di + rope // tok, pq, x (the token rows go before the blocks)
	block = Si*Di*(1+1+3+3+2+1+1+1) +                     // x, nrm, qkvRaw, qkv, qkr, att, attT, proj
		Si*2*Fi + Si*Fi + rope // up, gated
	out = block + ni*Di + ni*P // xn, rows (the block scratch is still held)
	return 4 * embed, 4 * block, 4 * out
}
