// Package layout is MiniMax-H3's host-side shape math: pure functions with no
// tensors and no backend.
//
// It implements, to the letter of the reference (huggingface/diffusers
// modular_pipelines/minimax_h3, commit 58eb52c0; spec shared/spec/H3-DIT.md
// §4–6 as corrected by ERRATA.md):
//
//   - frame counts: 17n+5 alignment, seconds → frames as h3.c does it, latent
//     geometry T = 5n+2, A = round(5F/3) (frames.go);
//   - canvas rules: multiples of 32, the 768·1344 pixel budget, the
//     reference's aspect-ratio canvas (resolve_canvas_size), render-canvas
//     rules and the reference-image canvas (canvas.go);
//   - the packed row layout [text | conditions | target audio | target video]
//     of t2va, fl2va (first, last, both) and ref2va (image, audio, video with
//     or without soundtrack), with float64 RoPE position ids built exactly as
//     MiniMaxH3PrepareLayoutStep.build_packed_sequence and
//     MiniMaxH3Ref2VAPrepareLayoutStep.build_ref2va_packed_sequence build
//     them, token tags, and the text/video/audio index lists (packed.go);
//   - the per-row timestep reduction of MiniMaxH3SetTimestepsStep
//     (timesteps.go);
//   - patchify/unpatchify of video latents [C,T,H,W] ↔ rows [T·H/2·W/2, 4C]
//     and the channel-major audio row packing (patchify.go).
//
// # Float64 exactness
//
// The layouts fixture checks position ids bit for bit, so every float64 here
// is computed with the reference's operation order: numpy's linspace
// (start + i·step) for the spatial axes, a sequential cumulative sum for the
// temporal axis, numpy's pairwise summation for the last-keyframe anchor and
// CPython 3.12's compensated sum() for a reference video's clock advance
// (numerics.go). Products are wrapped in explicit float64 conversions so that
// no compiler fuses them into FMAs (Go allows fusion otherwise, and does it on
// arm64), which makes the results identical on every platform.
//
// All functions are safe for concurrent use.
package layout
