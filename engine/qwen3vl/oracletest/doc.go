// Package oracletest checks the text-side pipeline against H3 Studio's own
// extension of the reference oracle, where shared/oracle stops:
// testdata/make_extra_fixtures.py ran Hugging Face transformers 5.17,
// tokenizers 0.23, torchvision 0.26 and Pillow 12.3 (the reference
// environment) and wrote
//
//   - presentation.json: H3 presentations with real Qwen3 label, timestamp
//     and prompt tokens, their DiT tags and transformers' get_rope_index
//     positions;
//   - sampling.json: 24 fps → 2 fps reference-video sampling, block
//     timestamps and their labels' tokens;
//   - processor_extra.safetensors: the Qwen image/video processors on
//     unaligned inputs (antialiased bicubic down/up/mixed scaling, odd frame
//     counts) with custom pixel limits;
//   - canvas.safetensors: keyframe and reference-image canvas preparation
//     with Pillow's LANCZOS.
//
// The tests exercise engine/prompt, engine/qwen3vl and engine/media
// together; the package has no code of its own.
package oracletest
