// Package qwen3vl is MiniMax-H3's text encoder: the Qwen3-VL language model
// read at hidden_states[50] (the unnormalized residual stream after the
// first 50 of 64 decoder layers; round(50/64·layers) for other configs), the
// Qwen3-VL vision
// tower with its deepstack features, and the image/video processor that
// prepares pixels for it.
//
// Specification: shared/spec/H3-ENCODERS-VAES.md §5–§7 and §12, H3-DIT.md
// §10, corrected by ERRATA.md (F1, F3, F9, F14). The code mirrors Hugging
// Face transformers 5.17's Qwen3VLModel (modeling_qwen3_vl.py),
// Qwen2VLImageProcessor and Qwen3VLVideoProcessor as diffusers'
// get_qwen3vl_prompt_embeds calls them, and is checked against the oracle's
// fixtures (fp32 rel-L2 ≤ 1.1e-6, bf16 ≈ 1e-2, positions and tags exact;
// docs/text.md).
//
// Load binds a text_encoder/ folder strictly, in one of two residencies
// (compute.Residency): resident (every used layer bound) or streaming (each
// decoder layer read from disk while the previous one runs, at most two
// held; the vision tower bound only while vision inputs are encoded).
// Encode runs one request in float32 or BF16 activations;
// EncodeOptions.Cache (engine/condcache) skips the encoder for conditioning
// it has seen. Plan predicts the storage of both residencies. Model code
// uses only compute.Kernels; a Model is not safe for concurrent use.
package qwen3vl
