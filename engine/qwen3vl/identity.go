package qwen3vl

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
)

// CheckpointIdentity hashes what identifies a text encoder folder's weights
// without reading them: config.json, the shard index and every shard's name, size
// and safetensors header.
func CheckpointIdentity(dir string) string {
	h := sha256.New()
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	for _, n := range names {
		p := filepath.Join(dir, n)
		st, err := os.Stat(p)
		if err != nil || st.IsDir() {
			continue
		}
		fmt.Fprintf(h, "\x00%s\x00%d\x00", n, st.Size())
		f, err := os.Open(p)
		if err != nil {
			continue
		}
		limit := int64(1 << 20)
		if filepath.Ext(n) == ".json" {
			limit = 64 << 20
		}
		io.CopyN(h, f, limit)
		f.Close()
	}
	return hex.EncodeToString(h.Sum(nil))
}
