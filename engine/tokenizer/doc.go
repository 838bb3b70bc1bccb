// Package tokenizer implements the Qwen2 byte-level BPE tokenizer that
// MiniMax-H3 uses for its Qwen3-VL text encoder, read from a Hugging Face
// tokenizer folder (tokenizer.json and tokenizer_config.json).
//
// The specification is H3-ENCODERS-VAES.md §4; exactness is judged against
// Hugging Face tokenizers.js (@huggingface/tokenizers 0.2.0) on the real
// Qwen3 vocabulary. The pipeline, per input string:
//
//  1. Added tokens: every token of tokenizer.json's added_tokens and of
//     tokenizer_config.json's added_tokens_decoder and
//     additional_special_tokens (H3 declares <d>, </d>, <|cutoff|> … only
//     there) is matched before anything else, leftmost-longest, with Hugging
//     Face's lstrip / rstrip / single_word / normalized semantics.
//  2. The normalizer the file declares (NFC for Qwen) on the text between
//     added tokens: UAX #15 over the Unicode 17.0 data of Node's ICU
//     (normalization_tables.go), as JavaScript's String.normalize.
//  3. The Split pre-tokenizer's regular expression (the Qwen2 pattern), hand
//     compiled into a scanner with the exact alternation order, backtracking
//     and (?!\S) look-ahead semantics of the pattern as tokenizers.js runs it:
//     \s is Unicode White_Space, \p{L} and \p{N} are general categories of
//     Unicode 17.0 (unicode_classes.txt, generated from Node's ICU), and the
//     (?i:…) contractions fold ASCII letters only.
//  4. GPT-2 byte-to-unicode mapping and BPE by merge rank (lowest rank
//     first, leftmost on ties), with a per-piece cache.
//
// Decode maps ids back to text (ByteLevel decoder). A Tokenizer is safe for
// concurrent use.
package tokenizer

//go:generate node gen_unicode.mjs unicode_classes.txt
//go:generate node gen_normalization.mjs normalization.txt
