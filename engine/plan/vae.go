package plan

import (
	"fmt"

	"h3studio/engine/audiovae"
	"h3studio/engine/compute"
	"h3studio/engine/layout"
	"h3studio/engine/videovae"
)

// The decoder rows: the released video VAE decoder (36-layer ViT over
// 256-px tiles of 7-latent windows) with the reference's fixed tiles and
// with h3.c's adaptive tiles, and the released BigVGAN audio decoder per
// stereo channel — the packages' own cost models (videovae.EstimateDecode,
// audiovae.EstimateDecode; each checked against the CPU backend's counters
// on a real decode). The video decoder's streaming column binds one block
// at a time, stage by stage across a window's tiles
// (videovae.Options.Residency); the audio decoder loads whole in either
// column. The peaks count the decoders' host buffers (on Apple Silicon they
// share the GPU's memory).

func init() {
	Register("video-vae", 30, func(q Query) (Estimate, error) { return estimateVideo(q, videovae.TileFixed) })
	Register("video-vae-adaptive", 31, func(q Query) (Estimate, error) { return estimateVideo(q, videovae.TileAdaptive) })
	Register("audio-vae", 40, estimateAudio)
}

func estimateVideo(q Query, tiling videovae.Tiling) (Estimate, error) {
	T, err := layout.LatentFrames(q.Frames)
	if err != nil {
		return Estimate{}, err
	}
	h, w := q.Canvas.Latent()
	c, err := videovae.EstimateDecode(videovae.ReleasedConfig(), T, h, w, &videovae.DecodeOptions{Tiling: tiling}, compute.F32)
	if err != nil {
		return Estimate{}, err
	}
	s, st := videoStorage(c)
	e := Estimate{Rows: c.TileTokens, RowsUnit: "tokens per tile pass", Evaluations: c.TilePasses,
		FLOPs: c.FLOPsPerTile, WeightBytes: float64(c.WeightBytes), TotalFLOPs: c.FLOPs, Resident: s, Streaming: st}
	e.Notes = append(e.Notes, fmt.Sprintf("%s tiles: %d window(s) × %d tile(s) of %d×%d px (%d×%d overlap); host buffers %.2f GiB",
		tiling, c.Windows, c.Plan.Tiles(), c.Plan.X.Tile, c.Plan.Y.Tile, maxOverlap(c.Plan.X.Overlaps), maxOverlap(c.Plan.Y.Overlaps), float64(c.HostBytes)/(1<<30)))
	return e, nil
}

// videoStorage is a video decode's storage, resident and with the blocks
// streamed.
func videoStorage(c videovae.DecodeCost) (resident, streamed Storage) {
	return Storage{Peak: c.PeakBytes, Weights: c.WeightBytes, Activations: c.DeviceBytes + c.HostBytes, Host: c.HostBytes},
		Storage{Peak: c.StreamedPeakBytes, Weights: c.StreamedWeightBytes, Activations: c.StreamedDeviceBytes + c.HostBytes, Host: c.HostBytes}
}

// audioStorage is an audio decode's storage.
func audioStorage(c audiovae.DecodeCost) Storage {
	return Storage{Peak: c.PeakBytes, Weights: c.WeightBytes, Activations: c.DeviceBytes + c.HostBytes, Host: c.HostBytes}
}

func maxOverlap(v []int) int {
	m := 0
	for _, x := range v {
		m = max(m, x)
	}
	return m
}

func estimateAudio(q Query) (Estimate, error) {
	A := layout.AudioLatents(q.Frames)
	c, err := audiovae.EstimateDecode(audiovae.ReleasedConfig(), layout.AudioChannels, A)
	if err != nil {
		return Estimate{}, err
	}
	s := audioStorage(c)
	e := Estimate{Rows: A, RowsUnit: "latents per channel", Evaluations: c.Channels,
		FLOPs: c.FLOPs / float64(c.Channels), WeightBytes: float64(c.WeightBytes), TotalFLOPs: c.FLOPs, Resident: s, Streaming: s}
	e.Notes = append(e.Notes, fmt.Sprintf("%d samples per channel at %d Hz, one channel at a time", c.Samples, audiovae.ReleasedConfig().SampleRate))
	return e, nil
}
