package snapshottest

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"h3studio/engine/testmodel/released"
)

// WriteSparse writes a safetensors file holding ts with a real header and
// zero-filled data: the file is extended with Truncate, so on file systems
// with sparse files (ext4, APFS, tmpfs, …) the data occupies no disk.
// Tensors are laid out contiguously in inventory order.
func WriteSparse(path string, ts []Tensor) error {
	header := map[string]any{"__metadata__": map[string]string{"format": "pt"}}
	var off int64
	for _, t := range ts {
		if _, dup := header[t.Name]; dup {
			return fmt.Errorf("snapshottest: %s: duplicate tensor %q", path, t.Name)
		}
		header[t.Name] = map[string]any{"dtype": t.DType.String(), "shape": t.Shape, "data_offsets": []int64{off, off + t.Bytes()}}
		off += t.Bytes()
	}
	js, err := json.Marshal(header)
	if err != nil {
		return err
	}
	for len(js)%8 != 0 {
		js = append(js, ' ')
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	buf := binary.LittleEndian.AppendUint64(nil, uint64(len(js)))
	if _, err := f.Write(append(buf, js...)); err != nil {
		f.Close()
		return err
	}
	if err := f.Truncate(int64(8+len(js)) + off); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// WriteShards splits ts into n shards of roughly equal size, in order, named
// <prefix>-0000i-of-0000n.safetensors, and writes <indexName> (the
// safetensors index with metadata.total_size).
func WriteShards(dir, prefix, indexName string, n int, ts []Tensor) error {
	_, _, total := Totals(ts)
	per := (total + int64(n) - 1) / int64(n)
	weightMap := map[string]string{}
	var shard []Tensor
	var size int64
	k := 1
	flush := func() error {
		name := fmt.Sprintf("%s-%05d-of-%05d.safetensors", prefix, k, n)
		for _, t := range shard {
			weightMap[t.Name] = name
		}
		err := WriteSparse(filepath.Join(dir, name), shard)
		shard, size = nil, 0
		k++
		return err
	}
	for i, t := range ts {
		shard = append(shard, t)
		size += t.Bytes()
		left := len(ts) - i - 1
		if size >= per && k < n && left >= n-k {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	for k <= n { // the last shard (and empty ones should the inventory be tiny)
		if err := flush(); err != nil {
			return err
		}
	}
	b, err := json.MarshalIndent(map[string]any{"metadata": map[string]any{"total_size": total}, "weight_map": weightMap}, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, indexName), b, 0o644)
}

// Latent normalisation constants of the release (H3-ENCODERS-VAES.md §8.2, §9.2).

func writeJSON(path string, v any) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// WriteReleased writes the released original-layout snapshot under root:
// for each partition ("FL2VA", "Ref2VA"; both when none is given) its
// model_index.json and every component with the released configs and
// full-size sparse weights (transformer 13 shards, text encoder 14 shards,
// video VAE and audio VAE single files). tokenizer/tokenizer.json is a small
// stand-in (the released one is an 11 MB BPE vocabulary the tokenizer
// package reads; snapshot inspection only checks it is a JSON object).
func WriteReleased(root string, partitions ...string) error {
	return writeReleased(root, func(ts []Tensor) []Tensor { return ts }, partitions)
}

// WriteReleasedMinimal writes the same snapshot with every tensor shrunk to
// one element (same files, names, ranks and headers of the same length):
// the released structure at a negligible size, for size-independence
// comparisons.
func WriteReleasedMinimal(root string, partitions ...string) error {
	return writeReleased(root, func(ts []Tensor) []Tensor {
		out := make([]Tensor, len(ts))
		for i, t := range ts {
			shape := make([]int, len(t.Shape))
			for j := range shape {
				shape[j] = 1
			}
			out[i] = Tensor{Name: t.Name, DType: t.DType, Shape: shape}
		}
		return out
	}, partitions)
}

// ReleasedMinimalFiles is the WriteReleasedMinimal snapshot as a repo's
// files: contents by slash-separated path, for a fake Hub to serve.
func ReleasedMinimalFiles(partitions ...string) (map[string][]byte, error) {
	d, err := os.MkdirTemp("", "snapshottest-repo-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(d)
	if err := WriteReleasedMinimal(d, partitions...); err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	err = filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(d, p)
		files[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("snapshottest: reading back %s: %w", d, err)
	}
	return files, nil
}

func writeReleased(root string, scale func([]Tensor) []Tensor, partitions []string) error {
	if len(partitions) == 0 {
		partitions = []string{"FL2VA", "Ref2VA"}
	}
	for _, p := range partitions {
		pd := filepath.Join(root, p)
		for rel, v := range released.Configs(strings.ToLower(p)) {
			if err := writeJSON(filepath.Join(pd, rel), v); err != nil {
				return err
			}
		}
		if err := os.WriteFile(filepath.Join(pd, "audio_vae", "config.yaml"), []byte("model_config:\n  sr: 32000\n  decoder_dim: 1024\n  audio_channel: 1\n  vae_latent_channels: 32\n"), 0o644); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(pd, "tokenizer", "tokenizer.json"), []byte(`{"version":"1.0","note":"stand-in for the released Qwen2 BPE tokenizer"}`), 0o644); err != nil {
			return err
		}
		if err := WriteShards(filepath.Join(pd, "transformer"), "model", "model.safetensors.index.json", 13, scale(TransformerInventory())); err != nil {
			return err
		}
		if err := WriteShards(filepath.Join(pd, "text_encoder"), "model", "model.safetensors.index.json", 14, scale(TextEncoderInventory())); err != nil {
			return err
		}
		if err := WriteSparse(filepath.Join(pd, "video_vae", "source", "model.safetensors"), scale(VideoVAEInventory())); err != nil {
			return err
		}
		if err := WriteSparse(filepath.Join(pd, "audio_vae", "model.safetensors"), scale(AudioVAEInventory())); err != nil {
			return err
		}
	}
	return nil
}
