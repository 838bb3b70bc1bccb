// Package released writes a random-weight MiniMax-H3 snapshot at the
// released size: the released configs (Configs) and, for every component
// asked for, the tensor inventory its own package declares (dit.Inventory,
// qwen3vl.Inventory, videovae.Inventory, audiovae.Inventory) filled with
// deterministic random values. It exists to prove the engine at full width
// against the reference implementation (docs/fullscale.md) and to time it on
// a Mac without downloading anything.
//
// Tensors are streamed to disk (safetensors.Spec.StreamEntry): each is drawn
// in chunks by all cores and written in order, so memory stays at a few
// megabytes per core whatever the checkpoint's size, and the bytes depend
// only on the seed. The initial values are the components' test rules —
// matrices N(0, 1/fan-in), norm weights 1 + N(0, 0.1²), biases N(0, 0.02²) —
// which keep every pre-norm block's output of unit scale: the DiT's residual
// stream then grows like √(2·blocks) through the blocks (about 10× over 50)
// and stays finite and informative in BF16. The audio encoder's residual
// branches are scaled by 1/√15 (audiovae.Inventory), so its stream stays
// O(1) and the encoder is not chaotic.
package released

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"h3studio/engine/audiovae"
	"h3studio/engine/dit"
	"h3studio/engine/qwen3vl"
	"h3studio/engine/safetensors"
	"h3studio/engine/videovae"
)

// Components that Write can write.
const (
	DiT         = "dit"
	TextEncoder = "text-encoder"
	Vision      = "vision"
	VideoVAE    = "video-vae"
	AudioVAE    = "audio-vae"
)

// AllComponents lists every component, in the order they are written.
var AllComponents = []string{DiT, TextEncoder, Vision, VideoVAE, AudioVAE}

// Options selects what Write writes.
type Options struct {
	// Components to write (nil: all). The text encoder and the vision tower
	// share text_encoder/; either one alone leaves that checkpoint partial.
	Components []string
	// Blocks is the DiT depth (0: the released 50); TextLayers the text
	// encoder's (0: the released 64). Widths are always the released ones.
	Blocks, TextLayers int
	// Seed selects the weights; the same seed writes the same bytes.
	Seed uint64
	// Workers draws each tensor with this many goroutines (0: all cores).
	Workers int
	// Partitions to write, "fl2va" and/or "ref2va" (nil: both). The first
	// one written holds the shared components (text encoder, VAEs); a
	// snapshot of FL2VA alone serves t2va and fl2va without Ref2VA's own
	// transformer (as large again).
	Partitions []string
	// ShardBytes caps a transformer or text-encoder shard (0: 5 GB).
	ShardBytes int64
	// Progress, when set, is told each file as it is written.
	Progress func(path string)
}

// partitions of the original layout: folder and model_index partition name.
var partitions = []struct{ dir, name string }{{"FL2VA", "fl2va"}, {"Ref2VA", "ref2va"}}

// Write writes the snapshot into dir (created; it must not exist or be
// empty). On an error the files written so far stay for inspection; the
// caller owns the folder.
func Write(dir string, o Options) error {
	if err := Check(o); err != nil {
		return err
	}
	comps := o.Components
	if len(comps) == 0 {
		comps = AllComponents
	}
	if o.ShardBytes <= 0 {
		o.ShardBytes = 5 << 30
	}
	w := writer{o: o, want: func(c string) bool { return slices.Contains(comps, c) }}
	return w.write(dir)
}

// Bytes is the size of the tensors Write would write with o (the configs,
// a few kilobytes, aside; the second partition's hard links count nothing).
func Bytes(o Options) (int64, error) {
	if err := Check(o); err != nil {
		return 0, err
	}
	comps := o.Components
	if len(comps) == 0 {
		comps = AllComponents
	}
	var n int64
	w := writer{o: o, want: func(c string) bool { return slices.Contains(comps, c) }, count: &n}
	if err := w.write(""); err != nil {
		return 0, err
	}
	return n, nil
}

func (w *writer) write(dir string) error {
	first := true
	for _, p := range partitions {
		if len(w.o.Partitions) > 0 && !slices.Contains(w.o.Partitions, p.name) {
			continue
		}
		if err := w.partition(filepath.Join(dir, p.dir), p.name, first); err != nil {
			return err
		}
		first = false
	}
	return nil
}

// Check reports options Write would refuse, naming the field.
func Check(o Options) error {
	for _, c := range o.Components {
		if !slices.Contains(AllComponents, c) {
			return fmt.Errorf("released: unknown component %q (want %s)", c, strings.Join(AllComponents, ", "))
		}
	}
	for _, p := range o.Partitions {
		known := false
		for _, q := range partitions {
			known = known || q.name == p
		}
		if !known {
			return fmt.Errorf("released: unknown partition %q (want fl2va, ref2va)", p)
		}
	}
	if o.Blocks < 0 || o.TextLayers < 0 {
		return fmt.Errorf("released: blocks %d, text layers %d: want 0 (the released depth) or more", o.Blocks, o.TextLayers)
	}
	return nil
}

type writer struct {
	o    Options
	want func(string) bool
	// first partition's shared component folders, hard-linked into the
	// second (the release's text encoder and VAEs are byte-identical).
	shared map[string]string
	// count, when set, makes the writer write nothing and add up the
	// tensors' bytes here instead (Bytes).
	count *int64
}

func (w *writer) partition(pd, name string, first bool) error {
	cfgs := Configs(name)
	tcfg := cfgs["transformer/config.json"].(map[string]any)
	if w.o.Blocks > 0 {
		tcfg["num_layers"] = w.o.Blocks
	}
	text := cfgs["text_encoder/config.json"].(map[string]any)
	if w.o.TextLayers > 0 {
		text["text_config"].(map[string]any)["num_hidden_layers"] = w.o.TextLayers
	}
	idx := cfgs["model_index.json"].(map[string]any)
	idx["_h3studio"] = map[string]any{"testmodel": "released", "seed": w.o.Seed, "blocks": tcfg["num_layers"],
		"text_layers": text["text_config"].(map[string]any)["num_hidden_layers"], "name": "MiniMax-H3 at the released size (random weights)"}
	if _, err := w.configs(pd, cfgs, "model_index.json"); err != nil {
		return err
	}
	if w.want(DiT) {
		if err := w.transformer(pd, name, cfgs); err != nil {
			return err
		}
	}
	if !first {
		return w.linkShared(pd)
	}
	w.shared = map[string]string{}
	if w.want(TextEncoder) || w.want(Vision) {
		if err := w.textEncoder(pd, cfgs); err != nil {
			return err
		}
	}
	if w.want(VideoVAE) {
		if err := w.videoVAE(pd, cfgs); err != nil {
			return err
		}
	}
	if w.want(AudioVAE) {
		if err := w.audioVAE(pd, cfgs); err != nil {
			return err
		}
	}
	return nil
}

// componentSeed gives each partition's transformer and each shared
// component weights of their own for one Options.Seed.
func (w *writer) componentSeed(what string) uint64 {
	h := w.o.Seed*0x9e3779b97f4a7c15 + 0x632be59bd9b4e019
	for _, c := range what {
		h = (h ^ uint64(c)) * 0x100000001b3
	}
	return h
}

func (w *writer) transformer(pd, partition string, cfgs map[string]any) error {
	raw, err := w.configs(pd, cfgs, "transformer/config.json")
	if err != nil {
		return err
	}
	c, err := dit.ParseConfig("transformer/config.json", raw[0])
	if err != nil {
		return fmt.Errorf("released: %w", err)
	}
	return w.sharded(filepath.Join(pd, "transformer"), dit.Inventory(c, dit.OriginalLayout), w.componentSeed("transformer/"+partition))
}

func (w *writer) textEncoder(pd string, cfgs map[string]any) error {
	raw, err := w.configs(pd, cfgs, "text_encoder/config.json", "text_encoder/preprocessor_config.json", "text_encoder/video_preprocessor_config.json",
		"processor/preprocessor_config.json", "processor/video_preprocessor_config.json", "tokenizer/tokenizer_config.json")
	if err != nil {
		return err
	}
	if err := w.file(pd, "tokenizer/tokenizer.json", []byte(`{"version":"1.0","note":"stand-in for the released Qwen2 BPE tokenizer (random-weight test model)"}`+"\n")); err != nil {
		return err
	}
	c, err := qwen3vl.ParseConfig("text_encoder/config.json", raw[0])
	if err != nil {
		return fmt.Errorf("released: %w", err)
	}
	var inv safetensors.Inventory
	for _, s := range qwen3vl.Inventory(c) {
		vision := strings.Contains(s.Name, "visual.")
		if (vision && w.want(Vision)) || (!vision && w.want(TextEncoder)) {
			inv = append(inv, s)
		}
	}
	for _, d := range []string{"text_encoder", "processor", "tokenizer"} {
		w.shared[d] = filepath.Join(pd, d)
	}
	return w.sharded(filepath.Join(pd, "text_encoder"), inv, w.componentSeed("text_encoder"))
}

func (w *writer) videoVAE(pd string, cfgs map[string]any) error {
	raw, err := w.configs(pd, cfgs, "video_vae/config.json", "video_vae/source/config.json")
	if err != nil {
		return err
	}
	c, err := videovae.ParseConfig("video_vae/config.json", raw[0], "video_vae/source/config.json", raw[1])
	if err != nil {
		return fmt.Errorf("released: %w", err)
	}
	if c.DecoderFFNHidden == 0 {
		// The original config does not spell the ViT decoder's MLP width (Load reads it from ff.w1's
		// shape): the release's is FeedForward's default, 4 × the attention width.
		c.DecoderFFNHidden = 4 * c.Dim()
	}
	w.shared["video_vae"] = filepath.Join(pd, "video_vae")
	return w.single(filepath.Join(pd, "video_vae", "source", "model.safetensors"), videovae.Inventory(c), w.componentSeed("video_vae"))
}

func (w *writer) audioVAE(pd string, cfgs map[string]any) error {
	raw, err := w.configs(pd, cfgs, "audio_vae/config.json", "audio_vae/metadata.json")
	if err != nil {
		return err
	}
	c, err := audiovae.ParseConfig("audio_vae/config.json", raw[0], "audio_vae/metadata.json", raw[1])
	if err != nil {
		return fmt.Errorf("released: %w", err)
	}
	yaml := fmt.Sprintf("model_config:\n  sr: %d\n  decoder_dim: %d\n  audio_channel: 1\n  vae_latent_channels: %d\n", c.SampleRate, c.DecoderDim, c.LatentChannels)
	if err := w.file(pd, "audio_vae/config.yaml", []byte(yaml)); err != nil {
		return err
	}
	w.shared["audio_vae"] = filepath.Join(pd, "audio_vae")
	return w.single(filepath.Join(pd, "audio_vae", "model.safetensors"), audiovae.Inventory(c), w.componentSeed("audio_vae"))
}

// linkShared hard-links the first partition's shared component folders
// into pd (copying where the file system cannot link), as the release
// stores them byte-identical in both partitions.
func (w *writer) linkShared(pd string) error {
	if w.count != nil {
		return nil
	}
	for name, src := range w.shared {
		err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(src, p)
			dst := filepath.Join(pd, name, rel)
			if d.IsDir() {
				return os.MkdirAll(dst, 0o755)
			}
			if err := os.Link(p, dst); err == nil {
				return nil
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(dst, b, 0o644)
		})
		if err != nil {
			return fmt.Errorf("released: %s: %w", name, err)
		}
	}
	return nil
}

// checkShapes refuses an inventory with an empty tensor: a config field the
// inventory needs was left unset.
func checkShapes(where string, inv safetensors.Inventory) error {
	for _, s := range inv {
		if s.Shape.NumElements() == 0 {
			return fmt.Errorf("released: %s: tensor %s has shape %v (a config field the inventory needs is unset)", where, s.Name, s.Shape)
		}
	}
	return nil
}

func (w *writer) sharded(dir string, inv safetensors.Inventory, seed uint64) error {
	return w.weights(dir, dir, inv, seed, func(es []safetensors.Entry) error { return safetensors.WriteSharded(dir, "model", es, w.o.ShardBytes) })
}

func (w *writer) single(path string, inv safetensors.Inventory, seed uint64) error {
	return w.weights(path, filepath.Dir(path), inv, seed, func(es []safetensors.Entry) error {
		return safetensors.Write(path, es, map[string]string{"format": "pt"})
	})
}

// weights checks inv's shapes, draws its tensors (deterministic in seed)
// and writes them with write into the folder dir; path names the
// checkpoint in errors and progress.
func (w *writer) weights(path, dir string, inv safetensors.Inventory, seed uint64, write func([]safetensors.Entry) error) error {
	if err := checkShapes(path, inv); err != nil {
		return err
	}
	if w.count != nil {
		*w.count += inv.Bytes()
		return nil
	}
	entries, err := inv.StreamEntries(seed, w.o.Workers)
	if err != nil {
		return fmt.Errorf("released: %s: %w", path, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("released: %w", err)
	}
	w.progress(path)
	if err := write(entries); err != nil {
		return fmt.Errorf("released: %w", err)
	}
	return nil
}

func (w *writer) progress(p string) {
	if w.o.Progress != nil {
		w.o.Progress(p)
	}
}

// configs writes the config files rels of cfgs under pd and returns what
// was written, for the components' config parsers.
func (w *writer) configs(pd string, cfgs map[string]any, rels ...string) ([][]byte, error) {
	out := make([][]byte, len(rels))
	for i, rel := range rels {
		b, err := json.MarshalIndent(cfgs[rel], "", "  ")
		if err != nil {
			return nil, fmt.Errorf("released: %s: %w", rel, err)
		}
		out[i] = append(b, '\n')
		if err := w.file(pd, rel, out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (w *writer) file(pd, rel string, b []byte) error {
	if w.count != nil {
		return nil
	}
	p := filepath.Join(pd, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("released: %w", err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		return fmt.Errorf("released: %w", err)
	}
	return nil
}
