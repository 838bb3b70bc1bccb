package safetensors

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"path/filepath"

	"h3studio/engine/atomicfile"
)

// Values returns the float32 values spec's Init rule gives its tensor for
// seed. The stream of each tensor depends only on (seed, name), so adding
// or reordering tensors leaves the others unchanged.
func (s Spec) Values(seed uint64) []float32 {
	n := s.Shape.NumElements()
	v := make([]float32, n)
	h := fnv.New64a()
	h.Write([]byte(s.Name))
	rng := rand.New(rand.NewPCG(seed, h.Sum64()))
	s.fillChunk(v, 0, rng)
	return v
}

// Entries fills every tensor of the inventory by its Init rule (Values) and
// encodes it in its dtype: a random test checkpoint, deterministic in seed.
func (inv Inventory) Entries(seed uint64) ([]Entry, error) {
	if err := inv.Check(); err != nil {
		return nil, err
	}
	out := make([]Entry, len(inv))
	for i, s := range inv {
		if !s.DType.IsFloat() {
			return nil, fmt.Errorf("safetensors: inventory %q: random values need a float dtype, have %s", s.Name, s.DType)
		}
		out[i] = F32(s.Name, s.DType, s.Shape, s.Values(seed))
	}
	return out, nil
}

// WriteSharded writes entries as the released checkpoints store large
// components: shards named <base>-0000i-of-0000n.safetensors of at most
// shardBytes each (in entry order; a tensor larger than shardBytes gets a
// shard of its own) and <base>.safetensors.index.json mapping every tensor to
// its shard. Every file is written atomically; on an error the files
// written so far are removed.
func WriteSharded(dir, base string, entries []Entry, shardBytes int64) (err error) {
	if len(entries) == 0 {
		return fmt.Errorf("safetensors: write %s: no tensors", filepath.Join(dir, base))
	}
	var shards [][]Entry
	var size int64
	for _, e := range entries {
		n := e.size()
		if len(shards) == 0 || (shardBytes > 0 && size+n > shardBytes && size > 0) {
			shards = append(shards, nil)
			size = 0
		}
		shards[len(shards)-1] = append(shards[len(shards)-1], e)
		size += n
	}
	var written []string
	defer func() {
		if err != nil {
			for _, p := range written {
				os.Remove(p)
			}
		}
	}()
	weightMap := map[string]string{}
	var total int64
	for i, sh := range shards {
		name := fmt.Sprintf("%s-%05d-of-%05d.safetensors", base, i+1, len(shards))
		path := filepath.Join(dir, name)
		if err := Write(path, sh, map[string]string{"format": "pt"}); err != nil {
			return err
		}
		written = append(written, path)
		for _, e := range sh {
			weightMap[e.Name] = name
			total += e.size()
		}
	}
	idx := map[string]any{"metadata": map[string]any{"total_size": total}, "weight_map": weightMap}
	js, err := json.MarshalIndent(idx, "", "  ")
	if err != nil {
		return fmt.Errorf("safetensors: write %s index: %w", base, err)
	}
	path := filepath.Join(dir, base+".safetensors.index.json")
	if err := writeFileAtomic(path, append(js, '\n')); err != nil {
		return err
	}
	return nil
}

func writeFileAtomic(path string, data []byte) error {
	if err := atomicfile.WriteFile(path, data); err != nil {
		return fmt.Errorf("safetensors: %w", err)
	}
	return nil
}
