package quant

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"h3studio/engine/atomicfile"
	"h3studio/engine/compute"
	"h3studio/engine/safetensors"
)

// The quantized cache: the selected linear weights of a BF16 checkpoint,
// quantized once into a folder beside it and reused after. Each weight
// NAME.weight [out, in] becomes MLX's three tensors under suffixes that do
// not collide with the source's names: NAME.qweight (U32 codes), NAME.scales
// and NAME.biases (BF16). The folder holds one safetensors part per block
// (written atomically, so a cancelled or crashed build resumes with the
// parts already written) and manifest.json, written last, naming the
// format and the source shards (size, modification time, SHA-256). A cache
// whose manifest does not match the source's shards is rebuilt.

// Suffixes of a cached weight's tensors.
const (
	SuffixCodes  = ".qweight"
	SuffixScales = ".scales"
	SuffixBiases = ".biases"
)

// ManifestName is the cache's manifest file.
const ManifestName = "manifest.json"

// SourceFile identifies one source shard.
type SourceFile struct {
	Name    string `json:"name"`
	Size    int64  `json:"size"`
	ModTime int64  `json:"mod_time_unix_nano"`
	SHA256  string `json:"sha256,omitempty"`
}

// Manifest describes a complete cache.
type Manifest struct {
	Bits      int          `json:"bits"`
	GroupSize int          `json:"group_size"`
	Source    []SourceFile `json:"source"`
	Parts     []string     `json:"parts"`
	Tensors   int          `json:"tensors"`
}

// CacheDir is the cache folder of the checkpoint in dir for format f,
// beside it: <dir>.h3studio-int8 (or -int4).
func CacheDir(dir string, f compute.QuantFormat) string {
	return filepath.Clean(dir) + ".h3studio-" + Name(f)
}

// BuildOptions configure Build.
type BuildOptions struct {
	// Select picks the weights to quantize (names ending in ".weight" of
	// 2-D float tensors are offered); their width must split into groups
	// (compute.QuantFormat.ForWidth picks 32 where 64 does not divide).
	Select func(name string, info safetensors.TensorInfo) bool
	// Progress, when set, receives the parts done and the parts in all
	// after each part (parts kept from an earlier build count as done).
	Progress func(done, total int)
}

// fingerprint lists the source shards' sizes and modification times (the
// SHA-256 only when hash is set: it reads every byte).
func fingerprint(src *safetensors.Checkpoint, hash bool) ([]SourceFile, error) {
	var out []SourceFile
	for _, f := range src.Files {
		st, err := os.Stat(f.Path)
		if err != nil {
			return nil, fmt.Errorf("quant: cache: %w", err)
		}
		sf := SourceFile{Name: filepath.Base(f.Path), Size: st.Size(), ModTime: st.ModTime().UnixNano()}
		if hash {
			fh, err := os.Open(f.Path)
			if err != nil {
				return nil, fmt.Errorf("quant: cache: %w", err)
			}
			h := sha256.New()
			_, err = io.Copy(h, fh)
			fh.Close()
			if err != nil {
				return nil, fmt.Errorf("quant: cache: hashing %s: %w", f.Path, err)
			}
			sf.SHA256 = hex.EncodeToString(h.Sum(nil))
		}
		out = append(out, sf)
	}
	return out, nil
}

func sameSource(a, b []SourceFile) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].Size != b[i].Size || a[i].ModTime != b[i].ModTime {
			return false
		}
	}
	return true
}

// ReadManifest reads a cache's manifest and checks it against the source
// and the format; ok is false when the cache is missing, incomplete or
// stale (err says why).
func ReadManifest(dir string, src *safetensors.Checkpoint, f compute.QuantFormat) (Manifest, bool, error) {
	var m Manifest
	b, err := os.ReadFile(filepath.Join(dir, ManifestName))
	if err != nil {
		return m, false, err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, false, fmt.Errorf("quant: cache %s: %s: %w", dir, ManifestName, err)
	}
	if m.Bits != f.Bits || m.GroupSize != f.GroupSize {
		return m, false, fmt.Errorf("quant: cache %s holds int%d/g%d, want %s", dir, m.Bits, m.GroupSize, f)
	}
	cur, err := fingerprint(src, false)
	if err != nil {
		return m, false, err
	}
	if !sameSource(m.Source, cur) {
		return m, false, fmt.Errorf("quant: cache %s was made from other source files", dir)
	}
	for _, p := range m.Parts {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			return m, false, fmt.Errorf("quant: cache %s: %w", dir, err)
		}
	}
	return m, true, nil
}

// partKey groups tensors by block: the name up to its first numeric
// component ("blocks.12.attn.qkv_proj.weight" → "blocks.12"); others "rest".
func partKey(name string) string {
	parts := strings.Split(name, ".")
	for i, p := range parts {
		if _, err := strconv.Atoi(p); err == nil {
			return strings.Join(parts[:i+1], ".")
		}
	}
	return "rest"
}

// Build quantizes the selected weights of src into dir (created if
// missing), keeping the parts an earlier build already wrote for the same
// source and format, and writes the manifest last. It stops between
// tensors when ctx is done (the parts written so far are kept).
func Build(ctx context.Context, src *safetensors.Checkpoint, dir string, f compute.QuantFormat, o BuildOptions) (Manifest, error) {
	cur, err := fingerprint(src, false)
	if err != nil {
		return Manifest{}, err
	}
	groups := map[string][]string{}
	for _, n := range src.Names() {
		info, _ := src.Info(n)
		if !strings.HasSuffix(n, ".weight") || len(info.Shape) != 2 || !info.DType.IsFloat() {
			continue
		}
		if _, ok := f.ForWidth(info.Shape[1]); !ok || (o.Select != nil && !o.Select(n, info)) {
			continue
		}
		k := partKey(n)
		groups[k] = append(groups[k], n)
	}
	keys := make([]string, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Manifest{}, fmt.Errorf("quant: cache: %w", err)
	}
	srcKey := sourceKey(cur, f)
	m := Manifest{Bits: f.Bits, GroupSize: f.GroupSize}
	for i, k := range keys {
		part := "part-" + k + ".safetensors"
		path := filepath.Join(dir, part)
		m.Parts = append(m.Parts, part)
		m.Tensors += len(groups[k])
		if partDone(path, srcKey, groups[k]) {
			if o.Progress != nil {
				o.Progress(i+1, len(keys))
			}
			continue
		}
		var entries []safetensors.Entry
		for _, n := range groups[k] {
			if err := ctx.Err(); err != nil {
				return m, fmt.Errorf("quant: cache stopped after %d of %d parts: %w", i, len(keys), err)
			}
			info, _ := src.Info(n)
			data, err := src.Data(n)
			if err != nil {
				return m, fmt.Errorf("quant: cache: %s: %w", n, err)
			}
			out, in := info.Shape[0], info.Shape[1]
			g, _ := f.ForWidth(in)
			rows, err := Quantize(compute.DecodeFloat32(info.DType, data), out, in, g)
			if err != nil {
				return m, fmt.Errorf("quant: cache: %s: %w", n, err)
			}
			// The source is read once: its pages would otherwise stay in
			// the process for as long as the checkpoint is mapped.
			src.Release(n)
			mx := ToMLX(rows, out, in, g)
			base := strings.TrimSuffix(n, ".weight")
			entries = append(entries,
				safetensors.Entry{Name: base + SuffixCodes, DType: compute.U32, Shape: compute.Shape{out, g.CodeWords(in)}, Data: u32Bytes(mx.Weight)},
				safetensors.Entry{Name: base + SuffixScales, DType: compute.BF16, Shape: compute.Shape{out, g.Groups(in)}, Data: u16Bytes(mx.Scales)},
				safetensors.Entry{Name: base + SuffixBiases, DType: compute.BF16, Shape: compute.Shape{out, g.Groups(in)}, Data: u16Bytes(mx.Biases)})
		}
		meta := map[string]string{"h3studio.source": srcKey, "h3studio.tensors": strings.Join(groups[k], ",")}
		if err := safetensors.Write(path, entries, meta); err != nil {
			return m, fmt.Errorf("quant: cache: %w", err)
		}
		if o.Progress != nil {
			o.Progress(i+1, len(keys))
		}
	}
	if m.Source, err = fingerprint(src, true); err != nil {
		return m, err
	}
	if !sameSource(m.Source, cur) {
		return m, errors.New("quant: cache: the source changed while it was quantized")
	}
	b, _ := json.MarshalIndent(m, "", "  ")
	if err := atomicfile.WriteFile(filepath.Join(dir, ManifestName), append(b, '\n')); err != nil {
		return m, fmt.Errorf("quant: cache: %w", err)
	}
	return m, nil
}

// sourceKey names the source and format a part was made from.
func sourceKey(src []SourceFile, f compute.QuantFormat) string {
	b, _ := json.Marshal(struct {
		S []SourceFile
		F compute.QuantFormat
	}{src, f})
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// partDone reports whether path is a part made from the same source and
// format holding exactly the tensors of names.
func partDone(path, srcKey string, names []string) bool {
	h, err := safetensors.ReadHeader(path)
	if err != nil {
		return false
	}
	return h.Metadata["h3studio.source"] == srcKey && h.Metadata["h3studio.tensors"] == strings.Join(names, ",")
}

func u32Bytes(v []uint32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		b[4*i], b[4*i+1], b[4*i+2], b[4*i+3] = byte(x), byte(x>>8), byte(x>>16), byte(x>>24)
	}
	return b
}

func u16Bytes(v []uint16) []byte {
	b := make([]byte, 2*len(v))
	for i, x := range v {
		b[2*i], b[2*i+1] = byte(x), byte(x>>8)
	}
	return b
}

// Overlay is a source whose named tensors are the base checkpoint's, and
// which also answers for the cache's tensors (looked up by name, not
// listed, so a model's strict accounting of its checkpoint is unchanged).
type Overlay struct {
	Base, Cache safetensors.Source
}

// Info looks a tensor up in the base, then in the cache.
func (o Overlay) Info(name string) (safetensors.TensorInfo, bool) {
	if i, ok := o.Base.Info(name); ok {
		return i, ok
	}
	return o.Cache.Info(name)
}

// Data reads a tensor from the base or the cache.
func (o Overlay) Data(name string) ([]byte, error) {
	if _, ok := o.Base.Info(name); ok {
		return o.Base.Data(name)
	}
	return o.Cache.Data(name)
}

// Names lists the base's tensors.
func (o Overlay) Names() []string { return o.Base.Names() }

// MappingOf forwards zero-copy mappings (safetensors.Binder uses them).
func (o Overlay) MappingOf(name string) []byte {
	for _, s := range []safetensors.Source{o.Base, o.Cache} {
		if _, ok := s.Info(name); ok {
			if m, ok := s.(interface{ MappingOf(string) []byte }); ok {
				return m.MappingOf(name)
			}
			return nil
		}
	}
	return nil
}
