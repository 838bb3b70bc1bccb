package safetensors

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"h3studio/engine/compute"
)

// Source is a set of named tensors: an open checkpoint, or a data-less
// inventory used for planning (Data then returns nil, nil).
type Source interface {
	Info(name string) (TensorInfo, bool)
	Data(name string) ([]byte, error)
	Names() []string
}

// Index is a parsed *.safetensors.index.json.
type Index struct {
	Metadata  map[string]any    `json:"metadata"`
	WeightMap map[string]string `json:"weight_map"`
}

// ReadIndex parses and checks an index file: valid JSON with a non-empty
// weight_map whose shard names are plain file names.
func ReadIndex(path string) (*Index, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("safetensors: %w", err)
	}
	return ParseIndex(path, b)
}

// ParseIndex parses index bytes (path is used in errors): a JSON object with
// a non-empty "weight_map" of tensor names to plain shard file names and an
// optional "metadata" object whose "total_size", when present, is a
// non-negative integer.
func ParseIndex(path string, b []byte) (*Index, error) {
	var ix Index
	if err := json.Unmarshal(b, &ix); err != nil {
		return nil, &FormatError{Path: path, Rule: "index is not a valid JSON object with a weight_map of strings", Err: err}
	}
	if len(ix.WeightMap) == 0 {
		return nil, &FormatError{Path: path, Rule: "index has no weight_map entries"}
	}
	for name, shard := range ix.WeightMap {
		if name == "" {
			return nil, &FormatError{Path: path, Rule: "weight_map has an empty tensor name"}
		}
		if shard == "" || strings.ContainsAny(shard, `/\`) || shard == "." || shard == ".." || !strings.HasSuffix(shard, ".safetensors") {
			return nil, &FormatError{Path: path, Rule: fmt.Sprintf("tensor %q maps to an invalid shard name %q (want a .safetensors file in the same folder)", name, shard)}
		}
	}
	if _, _, err := ix.totalSize(); err != nil {
		return nil, &FormatError{Path: path, Rule: "metadata.total_size is not a non-negative integer", Err: err}
	}
	return &ix, nil
}

// TotalSize returns metadata.total_size (the bytes of all tensor data, as
// the writer recorded it) and whether the index has it.
func (ix *Index) TotalSize() (int64, bool) {
	n, ok, _ := ix.totalSize()
	return n, ok
}

func (ix *Index) totalSize() (int64, bool, error) {
	v, ok := ix.Metadata["total_size"]
	if !ok || v == nil {
		return 0, false, nil
	}
	f, isNum := v.(float64)
	if !isNum || f < 0 || f != math.Trunc(f) || f > 1<<62 {
		return 0, false, fmt.Errorf("got %v", v)
	}
	return int64(f), true, nil
}

// Shards returns the distinct shard file names of the index, sorted.
func (ix *Index) Shards() []string {
	set := map[string]bool{}
	for _, s := range ix.WeightMap {
		set[s] = true
	}
	return slices.Sorted(maps.Keys(set))
}

// Checkpoint is a component folder's tensors: one file or index-linked
// shards, opened and validated together. Safe for concurrent use.
type Checkpoint struct {
	Dir   string
	Files []*File
	Index *Index // nil for an unsharded folder
	// Warnings lists oddities that do not make the checkpoint unusable: an
	// index total_size that disagrees with the shards, *.safetensors files
	// the index does not name (they are ignored).
	Warnings []string
	where    map[string]*File
}

// ErrNoWeights means a folder holds no safetensors file.
var ErrNoWeights = errors.New("safetensors: no .safetensors file")

// OpenDir opens the checkpoint in dir. With a *.safetensors.index.json it
// opens exactly the shards the index names (a missing shard is an error
// naming it) and checks that every indexed tensor is in its shard and that
// no shard holds an unindexed tensor. Without an index it opens every
// *.safetensors file in the folder (sorted) and requires distinct names.
func OpenDir(dir string) (*Checkpoint, error) {
	ck, err := scanDir(dir, Open)
	return ck, err
}

// ValidateDir checks the folder like OpenDir but reads headers only.
func ValidateDir(dir string) (*Checkpoint, error) {
	return scanDir(dir, func(path string) (*File, error) {
		h, err := ReadHeader(path)
		if err != nil {
			return nil, err
		}
		f := &File{Path: path, Header: h, byName: map[string]int{}}
		for i, t := range h.Tensors {
			f.byName[t.Name] = i
		}
		return f, nil
	})
}

func scanDir(dir string, open func(string) (*File, error)) (*Checkpoint, error) {
	ck := &Checkpoint{Dir: dir, where: map[string]*File{}}
	indexes, err := filesWithSuffix(dir, ".safetensors.index.json")
	if err != nil {
		return nil, fmt.Errorf("safetensors: %w", err)
	}
	var shards []string
	if len(indexes) > 0 {
		if len(indexes) > 1 {
			return nil, &FormatError{Path: dir, Rule: fmt.Sprintf("more than one index file (%s, %s)", filepath.Base(indexes[0]), filepath.Base(indexes[1]))}
		}
		ix, err := ReadIndex(indexes[0])
		if err != nil {
			return nil, err
		}
		ck.Index = ix
		for _, s := range ix.Shards() {
			p := filepath.Join(dir, s)
			if _, err := os.Stat(p); err != nil {
				rule := "shard named in the index is missing"
				if !errors.Is(err, fs.ErrNotExist) {
					rule = "shard named in the index is unreadable"
				}
				return nil, &FormatError{Path: p, Rule: rule + " (" + filepath.Base(indexes[0]) + ")", Err: err}
			}
			shards = append(shards, p)
		}
	} else {
		shards, _ = filesWithSuffix(dir, ".safetensors")
		if len(shards) == 0 {
			return nil, fmt.Errorf("%w in %s", ErrNoWeights, dir)
		}
	}
	// Headers are read (and files mapped) concurrently; the first failure
	// in shard order is reported.
	files := make([]*File, len(shards))
	errs := make([]error, len(shards))
	Parallel(len(shards), func(i int) { files[i], errs[i] = open(shards[i]) })
	for _, err := range errs {
		if err != nil {
			for _, f := range files {
				if f != nil {
					f.Close()
				}
			}
			return nil, err
		}
	}
	for i, f := range files {
		p := shards[i]
		ck.Files = append(ck.Files, f)
		for _, t := range f.Header.Tensors {
			if prev, dup := ck.where[t.Name]; dup {
				ck.Close()
				return nil, &FormatError{Path: p, Rule: fmt.Sprintf("tensor %q also in %s", t.Name, filepath.Base(prev.Path))}
			}
			ck.where[t.Name] = f
		}
	}
	if ck.Index != nil {
		for name, shard := range ck.Index.WeightMap {
			f, ok := ck.where[name]
			if !ok || filepath.Base(f.Path) != shard {
				ck.Close()
				return nil, &FormatError{Path: filepath.Join(dir, shard), Rule: fmt.Sprintf("tensor %q named in the index is not in this shard", name)}
			}
		}
		for name, f := range ck.where {
			if _, ok := ck.Index.WeightMap[name]; !ok {
				ck.Close()
				return nil, &FormatError{Path: f.Path, Rule: fmt.Sprintf("tensor %q is not in the index", name)}
			}
		}
		if want, ok := ck.Index.TotalSize(); ok && want != ck.TotalBytes() {
			ck.Warnings = append(ck.Warnings, fmt.Sprintf("%s: metadata.total_size is %d but the shards hold %d bytes of tensors", filepath.Base(indexes[0]), want, ck.TotalBytes()))
		}
		all, _ := filesWithSuffix(dir, ".safetensors")
		for _, p := range all {
			if !slices.Contains(shards, p) {
				ck.Warnings = append(ck.Warnings, fmt.Sprintf("%s is not named by %s and is ignored", filepath.Base(p), filepath.Base(indexes[0])))
			}
		}
	}
	return ck, nil
}

// Close unmaps every file.
func (c *Checkpoint) Close() error {
	var first error
	for _, f := range c.Files {
		if err := f.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Info returns a tensor's description.
func (c *Checkpoint) Info(name string) (TensorInfo, bool) {
	f, ok := c.where[name]
	if !ok {
		return TensorInfo{}, false
	}
	return f.Info(name)
}

// Data returns the mapped bytes of a tensor.
func (c *Checkpoint) Data(name string) ([]byte, error) {
	f, ok := c.where[name]
	if !ok {
		return nil, fmt.Errorf("safetensors: %s: no tensor %q", c.Dir, name)
	}
	return f.Data(name)
}

// FileOf returns the file holding a tensor.
func (c *Checkpoint) FileOf(name string) (*File, bool) {
	f, ok := c.where[name]
	return f, ok
}

// registered notes that hm registered the shard holding name.
func (c *Checkpoint) registered(name string, hm compute.HostMapper) {
	if f, ok := c.FileOf(name); ok {
		f.registered(name, hm)
	}
}

// MappingOf returns the mapped shard holding tensor name, or nil.
func (c *Checkpoint) MappingOf(name string) []byte {
	if f, ok := c.FileOf(name); ok {
		return f.Mapping()
	}
	return nil
}

// Names lists every tensor name, sorted.
func (c *Checkpoint) Names() []string {
	return slices.Sorted(maps.Keys(c.where))
}

// TotalBytes is the size of all tensor data.
func (c *Checkpoint) TotalBytes() int64 {
	var n int64
	for _, f := range c.Files {
		for _, t := range f.Header.Tensors {
			n += t.Bytes()
		}
	}
	return n
}

// filesWithSuffix lists the regular files (or links to them) in dir whose
// names end in suffix, sorted, as paths. Unlike filepath.Glob it is not
// confused by glob metacharacters in dir.
func filesWithSuffix(dir, suffix string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), suffix) || strings.HasPrefix(e.Name(), ".") || e.IsDir() {
			continue
		}
		out = append(out, filepath.Join(dir, e.Name()))
	}
	sort.Strings(out)
	return out, nil
}

// Parallel runs fn(0 … n−1) on up to GOMAXPROCS goroutines and waits
// (on the calling goroutine when one is enough). A panic in fn, a fault on
// a mapped file included, is raised again on the caller (ForwardPanic).
func Parallel(n int, fn func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		for i := range n {
			fn(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	fwd := NewForwardPanic()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer fwd.Recover()
			fwd.Start()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				fn(i)
			}
		}()
	}
	wg.Wait()
	fwd.Repanic()
}
