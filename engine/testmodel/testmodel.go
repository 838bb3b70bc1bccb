// Package testmodel writes H3 Studio's demo checkpoint: a complete MiniMax-H3
// snapshot in the released original layout (FL2VA/ and Ref2VA/ partitions,
// each with transformer/, text_encoder/, tokenizer/, processor/,
// video_vae/ (+ source/) and audio_vae/, and a model_index.json with the
// _minimax_h3 block) holding tiny random weights. It keeps the released
// geometry — 16× spatial and 4× temporal video compression, 24 video latent
// channels, the 1×2×2 patch, 32 kHz stereo audio with a hop of 800 samples
// (40 latents per second) and 32 audio latent channels, the 17-frame clip
// chunking and 256-px tiles — with tiny widths, so every code path of the
// real model runs on it, fast, on the CPU.
//
// Every weight file is written from its component's own tensor inventory
// (dit.Inventory, qwen3vl.Inventory, videovae.Inventory, audiovae.Inventory)
// with a fixed seed, so the checkpoint is the same on every machine. A few
// initial values are shaped (shape.go): the video decoder paints smooth
// colour fields, the audio decoder a soft chord, and the transformer weighs
// the text rows up so that the prompt visibly matters. The
// tokenizer is a small byte-level BPE whose ids fit the tiny text encoder,
// with the Qwen special tokens under their usual names and H3's extra
// tokens (tokenizer.go).
//
// model_index.json carries an "_h3studio" block ({"demo": true, "name": …,
// "version": Version}) that the app shows as "demo model".
//
// The checkpoint is written into a temporary folder beside the destination
// and renamed into place, so a reader never sees a partial one; Ensure
// creates it in a cache folder on first use.
package testmodel

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"h3studio/engine/audiovae"
	"h3studio/engine/dit"
	"h3studio/engine/qwen3vl"
	"h3studio/engine/safetensors"
	"h3studio/engine/videovae"
)

// Version identifies the demo checkpoint's content; Ensure rewrites a
// cached checkpoint of another version.
const Version = 2

// Seed is the seed every demo weight is drawn from.
const Seed = 20260101

// Name is how the app names the demo model.
const Name = "MiniMax-H3 demo model (tiny random weights)"

// DirName is the folder Ensure keeps the checkpoint in, inside its cache
// folder.
var DirName = fmt.Sprintf("demo-model-v%d", Version)

// Partitions of the original layout and the tasks each serves.
var partitions = []struct {
	dir, name string
	tasks     []string
	seed      uint64 // the transformer's: the two partitions are separately trained instances
}{
	{"FL2VA", "fl2va", []string{"t2va", "fl2va"}, Seed},
	{"Ref2VA", "ref2va", []string{"ref2va"}, Seed + 1},
}

// DiTConfig is the demo transformer: the released architecture (refiner,
// QK-norm, 3-D RoPE on the leading channels of each head, per-head
// interleaved QKV, SwiGLU, AdaLN with three modalities) at a tiny width,
// keeping the release's asymmetry heads·head_dim ≠ hidden.
func DiTConfig() dit.Config {
	c := dit.Released()
	c.HiddenSize, c.NumLayers, c.RefinerLayers = 96, 6, 2
	c.Heads, c.HeadDim, c.FFNDim = 4, 32, 256
	c.TextDim = TextHidden
	c.FreqDim, c.TimeHiddenDim, c.TimeEmbedDim, c.RopeFreqDim = 64, 96, 48, 4
	return c
}

// TextHidden is the demo text encoder's width (the DiT's text_dim).
const TextHidden = 64

// textLayers is the demo text encoder's depth; H3 runs round(50/64·5) = 4
// of them, as it runs 50 of the released 64.
const textLayers = 5

// textConfig is the demo text_encoder/config.json (Qwen3-VL's key layout).
func textConfig(tok *Tokenizer) map[string]any {
	vocab := (tok.Size + 63) / 64 * 64
	return map[string]any{
		"architectures":  []string{"Qwen3VLForConditionalGeneration"},
		"model_type":     "qwen3_vl",
		"image_token_id": tok.ID("<|image_pad|>"), "video_token_id": tok.ID("<|video_pad|>"),
		"vision_start_token_id": tok.ID("<|vision_start|>"), "vision_end_token_id": tok.ID("<|vision_end|>"),
		"tie_word_embeddings": false,
		"text_config": map[string]any{
			"attention_bias": false, "attention_dropout": 0.0, "bos_token_id": tok.ID("<|endoftext|>"),
			"eos_token_id": tok.ID("<|im_end|>"), "dtype": "bfloat16", "head_dim": 16, "hidden_act": "silu",
			"hidden_size": TextHidden, "initializer_range": 0.02, "intermediate_size": 128,
			"max_position_embeddings": 262144, "model_type": "qwen3_vl_text", "num_attention_heads": 4,
			"num_hidden_layers": textLayers, "num_key_value_heads": 2, "rms_norm_eps": 1e-6,
			"rope_scaling": map[string]any{"mrope_interleaved": true, "mrope_section": []int{4, 2, 2}, "rope_type": "default"},
			"rope_theta":   5000000, "use_cache": true, "vocab_size": vocab,
		},
		"vision_config": map[string]any{
			"deepstack_visual_indexes": []int{0, 1, 2}, "depth": 3, "hidden_act": "gelu_pytorch_tanh",
			"hidden_size": 32, "in_channels": 3, "initializer_range": 0.02, "intermediate_size": 64,
			"model_type": "qwen3_vl", "num_heads": 2, "num_position_embeddings": 256, "out_hidden_size": TextHidden,
			"patch_size": 16, "spatial_merge_size": 2, "temporal_patch_size": 2,
		},
	}
}

// processorConfigs are the image and video preprocessor configs: the
// release's patching and normalisation, with pixel limits that keep a
// small canvas small (the release's minimum is 256×256).
func processorConfigs() map[string]any {
	cfg := func(kind string, minPixels, maxPixels int) map[string]any {
		return map[string]any{
			"size":       map[string]int{"shortest_edge": minPixels, "longest_edge": maxPixels},
			"patch_size": 16, "temporal_patch_size": 2, "merge_size": 2,
			"image_mean": []float64{0.5, 0.5, 0.5}, "image_std": []float64{0.5, 0.5, 0.5},
			"processor_class": "Qwen3VLProcessor", kind + "_processor_type": "Qwen2VL" + map[string]string{"image": "Image", "video": "Video"}[kind] + "ProcessorFast",
		}
	}
	return map[string]any{
		"preprocessor_config.json":       cfg("image", 32*32, 2048*2048),
		"video_preprocessor_config.json": cfg("video", 32*32, 1024*1024*8),
	}
}

// transformerConfig is transformer/config.json in the original spelling.
func transformerConfig(c dit.Config) map[string]any {
	return map[string]any{
		"_class_name": "MiniMaxH3DiTModel", "_diffusers_version": "0.32.2",
		"hidden_size": c.HiddenSize, "num_layers": c.NumLayers, "token_refiner_num_layers": c.RefinerLayers,
		"num_attention_heads": c.Heads, "attention_head_dim": c.HeadDim, "ffn_hidden_size": c.FFNDim,
		"latents_dim": c.InChannels, "audio_latents_dim": c.AudioInChannels, "patch_size": c.PatchSize[:],
		"text_dim": c.TextDim, "timestep_input_dim": c.FreqDim, "time_embed_hidden_size": c.TimeHiddenDim,
		"time_embed_dim": c.TimeEmbedDim, "adaln_out_features": c.AdaLNWidth(), "final_adaln_out_features": 2 * c.HiddenSize,
		"rope_inv_freq_len": c.RopeFreqDim, "norm_eps": c.NormEps, "qk_norm_eps": c.QKNormEps, "final_norm_eps": c.FinalNormEps,
	}
}

// modelIndex is a partition's model_index.json.
func modelIndex(partition string, tasks []string) map[string]any {
	return map[string]any{
		"_class_name": "MiniMaxH3Pipeline", "_diffusers_version": "0.32.2",
		"text_encoder": []string{"transformers", "MiniMaxH3Qwen3VLHFEncoder"},
		"tokenizer":    []string{"transformers", "Qwen2TokenizerFast"},
		"processor":    []string{"transformers", "Qwen3VLProcessor"},
		"transformer":  []string{"diffusers", "MiniMaxH3DiTModel"},
		"video_vae":    []string{"diffusers", "MiniMaxH3VideoVAE"},
		"audio_vae":    []string{"diffusers", "MiniMaxH3AudioVAE"},
		"scheduler":    nil,
		"_minimax_h3": map[string]any{
			"schema_version": 1, "partition": partition, "tasks": tasks, "task_aliases": map[string]any{},
			"sigma_shift_scales": map[string]float64{"video": 12.0, "audio": 3.0},
		},
		"_h3studio": map[string]any{"demo": true, "name": Name, "version": Version, "seed": Seed},
	}
}

const readme = `# H3 Studio demo checkpoint

A complete MiniMax-H3 snapshot in the released layout (FL2VA/ and Ref2VA/) with tiny random weights,
written by H3 Studio (h3studio testmodel). It exercises every stage of the pipeline quickly on any
computer. Its decoders' initial values are shaped so that a take is a calm, colourful, slowly moving
abstract picture with a soft chord that follows the seed and the prompt; nothing was trained, so it
is not a meaningful video. Delete it at any time: the app writes it again when it needs it.
`

// Write writes the demo checkpoint to dir, which must not exist yet. The
// checkpoint is assembled in a temporary folder beside dir and renamed
// into place; on failure nothing is left behind.
func Write(dir string) error {
	dir = filepath.Clean(dir)
	if _, err := os.Stat(dir); err == nil {
		return fmt.Errorf("demo: %s already exists", dir)
	}
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".tmp-*")
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	// os.MkdirTemp makes 0700; the checkpoint is an ordinary folder.
	if err := os.Chmod(tmp, 0o755); err != nil {
		os.RemoveAll(tmp)
		return fmt.Errorf("demo: %w", err)
	}
	if err := writeTree(tmp); err != nil {
		os.RemoveAll(tmp)
		return err
	}
	if err := os.Rename(tmp, dir); err != nil {
		os.RemoveAll(tmp)
		return fmt.Errorf("demo: %w", err)
	}
	return nil
}

// writeTree writes every file of the checkpoint under root.
func writeTree(root string) error {
	tok := NewTokenizer()
	tokFiles, err := tok.Files()
	if err != nil {
		return err
	}
	tcfg := textConfig(tok)
	tjs, err := json.Marshal(tcfg)
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	qcfg, err := qwen3vl.ParseConfig("demo text_encoder/config.json", tjs)
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	textEntries, err := qwen3vl.Inventory(qcfg).Entries(Seed)
	if err != nil {
		return err
	}
	dcfg := DiTConfig()
	if err := dcfg.Validate(); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	vcfg, acfg := VideoVAEConfig(), audiovae.TinyConfig()
	videoEntries, err := entries(videoVAEInventory(vcfg, Seed))
	if err != nil {
		return err
	}
	audioEntries, err := entries(audioVAEInventory(acfg, Seed))
	if err != nil {
		return err
	}
	if err := writeFile(filepath.Join(root, "README.md"), []byte(readme)); err != nil {
		return err
	}
	for _, p := range partitions {
		pdir := filepath.Join(root, p.dir)
		if err := writeJSON(filepath.Join(pdir, "model_index.json"), modelIndex(p.name, p.tasks)); err != nil {
			return err
		}
		// Transformer.
		tdir := filepath.Join(pdir, "transformer")
		if err := writeJSON(filepath.Join(tdir, "config.json"), transformerConfig(dcfg)); err != nil {
			return err
		}
		ditEntries, err := ditInventory(dcfg, p.seed).Entries(p.seed)
		if err != nil {
			return err
		}
		if err := safetensors.WriteSharded(tdir, "model", ditEntries, 1<<20); err != nil {
			return err
		}
		// Text encoder, with the tokenizer and processor files the release
		// also keeps in it.
		edir := filepath.Join(pdir, "text_encoder")
		if err := writeJSON(filepath.Join(edir, "config.json"), tcfg); err != nil {
			return err
		}
		if err := safetensors.WriteSharded(edir, "model", textEntries, 1<<20); err != nil {
			return err
		}
		for _, d := range []string{"tokenizer", "processor", "text_encoder"} {
			for name, b := range tokFiles {
				if err := writeFile(filepath.Join(pdir, d, name), b); err != nil {
					return err
				}
			}
		}
		for _, d := range []string{"processor", "text_encoder"} {
			for name, v := range processorConfigs() {
				if err := writeJSON(filepath.Join(pdir, d, name), v); err != nil {
					return err
				}
			}
		}
		// VAEs: the packages' own test-model writers (their inventories).
		if err := videovae.WriteModel(filepath.Join(pdir, "video_vae"), vcfg, videoEntries); err != nil {
			return fmt.Errorf("demo: video VAE: %w", err)
		}
		if err := audiovae.WriteModel(filepath.Join(pdir, "audio_vae"), acfg, audioEntries); err != nil {
			return fmt.Errorf("demo: audio VAE: %w", err)
		}
	}
	return nil
}

// entries draws a shaped inventory's tensors with the demo seed.
func entries(inv safetensors.Inventory, err error) ([]safetensors.Entry, error) {
	if err != nil {
		return nil, err
	}
	return inv.Entries(Seed)
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("demo: %s: %w", path, err)
	}
	return writeFile(path, append(b, '\n'))
}

func writeFile(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	return nil
}

// Marker is the _h3studio block of a model_index.json.
type Marker struct {
	Demo    bool   `json:"demo"`
	Name    string `json:"name"`
	Version int    `json:"version"`
}

// ReadMarker reads the _h3studio block of dir/FL2VA/model_index.json (or
// dir/model_index.json); ok is false when there is none.
func ReadMarker(dir string) (m Marker, ok bool) {
	for _, p := range []string{filepath.Join(dir, "FL2VA", "model_index.json"), filepath.Join(dir, "model_index.json")} {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		var mi struct {
			H3Studio *Marker `json:"_h3studio"`
		}
		if json.Unmarshal(b, &mi) == nil && mi.H3Studio != nil {
			return *mi.H3Studio, true
		}
	}
	return Marker{}, false
}

// Ensure returns the demo checkpoint's folder inside cacheDir
// (cacheDir/DirName), writing it first when it is missing or of another
// version. Concurrent callers (two app instances) are safe: each writes its
// own temporary folder and the first rename wins.
func Ensure(cacheDir string) (string, error) {
	dir := filepath.Join(cacheDir, DirName)
	if m, ok := ReadMarker(dir); ok && m.Demo && m.Version == Version && complete(dir) {
		return dir, nil
	}
	if _, err := os.Stat(dir); err == nil {
		// Stale or damaged: move it aside, then remove it.
		old := fmt.Sprintf("%s.old-%d", dir, os.Getpid())
		if err := os.Rename(dir, old); err != nil {
			return "", fmt.Errorf("demo: cannot replace %s: %w", dir, err)
		}
		os.RemoveAll(old)
	}
	if err := Write(dir); err != nil {
		// Another process may have won the race.
		if m, ok := ReadMarker(dir); ok && m.Version == Version && complete(dir) {
			return dir, nil
		}
		return "", err
	}
	return dir, nil
}

// complete reports whether every partition folder of a written checkpoint
// is there (Write renames the whole tree at once, so a present marker
// normally implies the rest; this guards against a user deleting parts).
func complete(dir string) bool {
	for _, p := range partitions {
		for _, d := range []string{"transformer", "text_encoder", "tokenizer", "processor", "video_vae/source", "audio_vae"} {
			if st, err := os.Stat(filepath.Join(dir, p.dir, d)); err != nil || !st.IsDir() {
				return false
			}
		}
	}
	return true
}
