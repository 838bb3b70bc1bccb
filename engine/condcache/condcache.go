// Package condcache caches encoded conditioning by content hash: the text
// encoder's output for a prompt, a reference's vision-tower features, a
// reference's VAE latents. Re-running a request with another seed finds its
// conditioning here and skips the encoders (h3.c's session cache does the
// same for the prompt).
//
// Entries are sets of named host tensors plus string metadata. The cache
// holds them in memory up to a byte budget, evicting the least recently
// used, and optionally mirrors them to a folder as safetensors files
// (written atomically; a corrupt or foreign file is ignored and removed),
// which survives restarts. Keys are SHA-256 digests of everything the
// result depends on, built with a Hasher. A Cache is safe for concurrent
// use.
package condcache

import (
	"container/list"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"h3studio/engine/compute"
	"h3studio/engine/safetensors"
)

// Key identifies an entry: a SHA-256 digest.
type Key [32]byte

func (k Key) String() string { return hex.EncodeToString(k[:]) }

// Hasher builds a Key from typed, length-prefixed fields, so that no two
// different field sequences collide by concatenation.
type Hasher struct{ h hash.Hash }

// NewHasher starts a key for a kind of entry ("qwen3vl.text", …).
func NewHasher(kind string) *Hasher {
	h := &Hasher{h: sha256.New()}
	h.String(kind)
	return h
}

func (h *Hasher) u64(v uint64) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	h.h.Write(b[:])
}

// String adds a string field.
func (h *Hasher) String(s string) *Hasher {
	h.u64(uint64(len(s)))
	h.h.Write([]byte(s))
	return h
}

// Int adds an integer field.
func (h *Hasher) Int(v int64) *Hasher { h.u64(uint64(v)); return h }

// Int64s adds an integer slice field.
func (h *Hasher) Int64s(v []int64) *Hasher {
	h.u64(uint64(len(v)))
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], uint64(x))
	}
	h.h.Write(b)
	return h
}

// Float32s adds a float32 slice field (bit patterns).
func (h *Hasher) Float32s(v []float32) *Hasher {
	h.u64(uint64(len(v)))
	const chunk = 1 << 16
	b := make([]byte, 4*min(len(v), chunk))
	for len(v) > 0 {
		n := min(len(v), chunk)
		for i := 0; i < n; i++ {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v[i]))
		}
		h.h.Write(b[:4*n])
		v = v[n:]
	}
	return h
}

// Bytes adds a byte slice field.
func (h *Hasher) Bytes(b []byte) *Hasher {
	h.u64(uint64(len(b)))
	h.h.Write(b)
	return h
}

// Key returns the digest.
func (h *Hasher) Key() Key {
	var k Key
	copy(k[:], h.h.Sum(nil))
	return k
}

// Tensor is one cached host tensor.
type Tensor struct {
	Name  string
	DType compute.DType
	Shape compute.Shape
	Data  []byte // little-endian, len = elements × dtype size
}

// Entry is one cached result.
type Entry struct {
	Tensors []Tensor
	Meta    map[string]string
}

// Tensor returns the named tensor.
func (e *Entry) Tensor(name string) (Tensor, bool) {
	for _, t := range e.Tensors {
		if t.Name == name {
			return t, true
		}
	}
	return Tensor{}, false
}

// Bytes is the entry's data size.
func (e *Entry) Bytes() int64 {
	var n int64
	for _, t := range e.Tensors {
		n += int64(len(t.Data))
	}
	for k, v := range e.Meta {
		n += int64(len(k) + len(v))
	}
	return n
}

func (e *Entry) validate() error {
	seen := map[string]bool{}
	for _, t := range e.Tensors {
		if t.Name == "" || seen[t.Name] {
			return fmt.Errorf("condcache: tensor name %q empty or repeated", t.Name)
		}
		seen[t.Name] = true
		if int64(len(t.Data)) != int64(t.Shape.NumElements())*int64(t.DType.Size()) {
			return fmt.Errorf("condcache: tensor %s: %d bytes for %v%v", t.Name, len(t.Data), t.DType, t.Shape)
		}
	}
	return nil
}

// Options configure a cache. The zero value is an in-memory cache of 1 GiB.
type Options struct {
	// MemoryBytes bounds the entries held in memory (0: 1 GiB; negative:
	// nothing is held in memory).
	MemoryBytes int64
	// Dir, when set, mirrors entries to this folder.
	Dir string
	// DiskBytes bounds the folder (0: unbounded); the least recently
	// written files are removed first.
	DiskBytes int64
}

// Stats count cache traffic.
type Stats struct {
	Hits, DiskHits, Misses, Puts, Evictions int64
	MemoryBytes                             int64 // held now
	Entries                                 int
}

// Cache is a conditioning cache.
type Cache struct {
	o     Options
	mu    sync.Mutex
	lru   *list.List // front = most recent; values *item
	items map[Key]*list.Element
	bytes int64
	stats Stats
}

type item struct {
	key   Key
	entry *Entry
	size  int64
}

// New returns a cache.
func New(o Options) *Cache {
	if o.MemoryBytes == 0 {
		o.MemoryBytes = 1 << 30
	}
	return &Cache{o: o, lru: list.New(), items: map[Key]*list.Element{}}
}

// Get returns the entry of key from memory, else from the folder (then it
// is kept in memory too). The entry must not be modified.
func (c *Cache) Get(key Key) (*Entry, bool) {
	c.mu.Lock()
	if el, ok := c.items[key]; ok {
		c.lru.MoveToFront(el)
		c.stats.Hits++
		c.mu.Unlock()
		return el.Value.(*item).entry, true
	}
	c.mu.Unlock()
	if c.o.Dir != "" {
		if e, err := c.readFile(key); err == nil {
			c.mu.Lock()
			c.stats.DiskHits++
			c.insert(key, e)
			c.mu.Unlock()
			return e, true
		}
	}
	c.mu.Lock()
	c.stats.Misses++
	c.mu.Unlock()
	return nil, false
}

// Put stores an entry (the cache keeps e; the caller must not modify it)
// and writes it to the folder when one is configured. A write failure is
// returned; the entry is cached in memory regardless.
func (c *Cache) Put(key Key, e *Entry) error {
	if err := e.validate(); err != nil {
		return err
	}
	c.mu.Lock()
	c.stats.Puts++
	c.insert(key, e)
	c.mu.Unlock()
	if c.o.Dir != "" {
		return c.writeFile(key, e)
	}
	return nil
}

// insert adds e under key and evicts to the budget. c.mu is held.
func (c *Cache) insert(key Key, e *Entry) {
	if el, ok := c.items[key]; ok {
		it := el.Value.(*item)
		c.bytes -= it.size
		c.lru.Remove(el)
		delete(c.items, key)
	}
	size := e.Bytes()
	if c.o.MemoryBytes < 0 || size > c.o.MemoryBytes {
		return
	}
	c.items[key] = c.lru.PushFront(&item{key: key, entry: e, size: size})
	c.bytes += size
	for c.bytes > c.o.MemoryBytes {
		el := c.lru.Back()
		it := el.Value.(*item)
		c.lru.Remove(el)
		delete(c.items, it.key)
		c.bytes -= it.size
		c.stats.Evictions++
	}
}

// Stats returns the counters.
func (c *Cache) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.stats
	s.MemoryBytes = c.bytes
	s.Entries = len(c.items)
	return s
}

// Clear drops every entry from memory and, when remove is set, the folder's
// cache files.
func (c *Cache) Clear(remove bool) error {
	c.mu.Lock()
	c.lru.Init()
	c.items = map[Key]*list.Element{}
	c.bytes = 0
	c.mu.Unlock()
	if remove && c.o.Dir != "" {
		files, _ := filepath.Glob(filepath.Join(c.o.Dir, "*"+fileExt))
		for _, f := range files {
			if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("condcache: %w", err)
			}
		}
	}
	return nil
}

const (
	fileExt = ".h3cond.safetensors"
	metaKey = "h3_condcache_key"
	metaPfx = "m."
)

func (c *Cache) path(key Key) string { return filepath.Join(c.o.Dir, key.String()+fileExt) }

func (c *Cache) writeFile(key Key, e *Entry) error {
	if err := os.MkdirAll(c.o.Dir, 0o755); err != nil {
		return fmt.Errorf("condcache: %w", err)
	}
	entries := make([]safetensors.Entry, len(e.Tensors))
	for i, t := range e.Tensors {
		entries[i] = safetensors.Entry{Name: t.Name, DType: t.DType, Shape: t.Shape, Data: t.Data}
	}
	meta := map[string]string{metaKey: key.String()}
	for k, v := range e.Meta {
		meta[metaPfx+k] = v
	}
	if err := safetensors.Write(c.path(key), entries, meta); err != nil {
		return fmt.Errorf("condcache: %w", err)
	}
	if c.o.DiskBytes > 0 {
		c.trimDisk()
	}
	return nil
}

// readFile loads and checks a cache file; a file that is corrupt or holds
// another key is removed.
func (c *Cache) readFile(key Key) (*Entry, error) {
	p := c.path(key)
	f, err := safetensors.Open(p)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			os.Remove(p)
		}
		return nil, err
	}
	defer f.Close()
	if f.Header.Metadata[metaKey] != key.String() {
		os.Remove(p)
		return nil, fmt.Errorf("condcache: %s holds another key", p)
	}
	e := &Entry{Meta: map[string]string{}}
	for k, v := range f.Header.Metadata {
		if strings.HasPrefix(k, metaPfx) {
			e.Meta[strings.TrimPrefix(k, metaPfx)] = v
		}
	}
	for _, name := range f.Names() {
		info, _ := f.Info(name)
		d, err := f.Data(name)
		if err != nil {
			return nil, err
		}
		e.Tensors = append(e.Tensors, Tensor{Name: name, DType: info.DType, Shape: info.Shape, Data: append([]byte(nil), d...)})
	}
	now := nowFunc()
	os.Chtimes(p, now, now) // recency for trimDisk
	return e, nil
}

// trimDisk removes the least recently used files beyond DiskBytes.
func (c *Cache) trimDisk() {
	files, _ := filepath.Glob(filepath.Join(c.o.Dir, "*"+fileExt))
	type fi struct {
		path string
		size int64
		mod  int64
	}
	var all []fi
	var total int64
	for _, f := range files {
		st, err := os.Stat(f)
		if err != nil {
			continue
		}
		all = append(all, fi{f, st.Size(), st.ModTime().UnixNano()})
		total += st.Size()
	}
	sort.Slice(all, func(i, j int) bool { return all[i].mod < all[j].mod })
	for _, f := range all {
		if total <= c.o.DiskBytes {
			break
		}
		if os.Remove(f.path) == nil {
			total -= f.size
		}
	}
}

var nowFunc = time.Now
