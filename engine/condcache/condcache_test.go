package condcache

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"h3studio/engine/compute"
)

func entry(n int, fill byte) *Entry {
	d := make([]byte, n)
	for i := range d {
		d[i] = fill
	}
	return &Entry{Tensors: []Tensor{{Name: "x", DType: compute.U8, Shape: compute.Shape{n}, Data: d}}, Meta: map[string]string{"k": "v"}}
}

func key(s string) Key { return NewHasher("test").String(s).Key() }

func TestHasherFieldsDoNotCollide(t *testing.T) {
	a := NewHasher("k").String("ab").String("c").Key()
	b := NewHasher("k").String("a").String("bc").Key()
	c := NewHasher("k").Int64s([]int64{1, 2}).Key()
	d := NewHasher("k").Int64s([]int64{1}).Int(2).Key()
	e := NewHasher("k").Float32s([]float32{0}).Key()
	f := NewHasher("k").Float32s([]float32{float32(negZero())}).Key()
	if a == b || c == d || e == f {
		t.Fatal("distinct field sequences share a key")
	}
	k1, k2 := NewHasher("k").String("x").Key(), NewHasher("k").String("x").Key()
	if k1 != k2 {
		t.Fatal("hash not deterministic")
	}
}

func negZero() float64 { z := 0.0; return -z }

func TestMemoryLRU(t *testing.T) {
	c := New(Options{MemoryBytes: 250})
	for _, k := range []string{"a", "b"} {
		if err := c.Put(key(k), entry(100, 1)); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok := c.Get(key("a")); !ok { // a becomes most recent
		t.Fatal("a missing")
	}
	c.Put(key("c"), entry(100, 2)) // evicts b
	if _, ok := c.Get(key("b")); ok {
		t.Fatal("b not evicted")
	}
	for _, k := range []string{"a", "c"} {
		if _, ok := c.Get(key(k)); !ok {
			t.Fatalf("%s evicted", k)
		}
	}
	s := c.Stats()
	if s.Evictions != 1 || s.Entries != 2 || s.MemoryBytes > 250 || s.Misses != 1 {
		t.Fatalf("stats %+v", s)
	}
	c.Put(key("huge"), entry(1000, 3)) // larger than the budget: not held
	if _, ok := c.Get(key("huge")); ok {
		t.Fatal("over-budget entry held")
	}
	if err := c.Put(key("bad"), &Entry{Tensors: []Tensor{{Name: "x", DType: compute.F32, Shape: compute.Shape{3}, Data: make([]byte, 4)}}}); err == nil {
		t.Fatal("malformed entry accepted")
	}
}

func TestDiskRoundTrip(t *testing.T) {
	dir := t.TempDir()
	c := New(Options{Dir: dir})
	want := entry(64, 7)
	if err := c.Put(key("a"), want); err != nil {
		t.Fatal(err)
	}
	// A new cache on the same folder (a restart) finds it on disk.
	c2 := New(Options{Dir: dir})
	got, ok := c2.Get(key("a"))
	if !ok {
		t.Fatal("not found on disk")
	}
	x, _ := got.Tensor("x")
	if len(x.Data) != 64 || x.Data[10] != 7 || got.Meta["k"] != "v" {
		t.Fatalf("entry %+v", got)
	}
	if s := c2.Stats(); s.DiskHits != 1 || s.Entries != 1 {
		t.Fatalf("stats %+v", s)
	}
	if _, ok := c2.Get(key("a")); !ok || c2.Stats().Hits != 1 {
		t.Fatal("second get not served from memory")
	}
	// No temporary files are left behind.
	files, _ := os.ReadDir(dir)
	if len(files) != 1 {
		t.Fatalf("%d files in the cache folder", len(files))
	}
}

func TestDiskCorruptIgnored(t *testing.T) {
	dir := t.TempDir()
	c := New(Options{Dir: dir, MemoryBytes: -1})
	c.Put(key("a"), entry(64, 1))
	p := filepath.Join(dir, key("a").String()+fileExt)
	os.WriteFile(p, []byte("not a safetensors file"), 0o644)
	if _, ok := c.Get(key("a")); ok {
		t.Fatal("corrupt file served")
	}
	if _, err := os.Stat(p); err == nil {
		t.Fatal("corrupt file kept")
	}
	// A file renamed to another key's name is rejected by its recorded key.
	c.Put(key("b"), entry(64, 2))
	os.Rename(filepath.Join(dir, key("b").String()+fileExt), filepath.Join(dir, key("c").String()+fileExt))
	if _, ok := c.Get(key("c")); ok {
		t.Fatal("file of another key served")
	}
}

func TestDiskBudget(t *testing.T) {
	dir := t.TempDir()
	c := New(Options{Dir: dir, DiskBytes: 2500, MemoryBytes: -1})
	base := time.Now()
	for i, k := range []string{"a", "b", "c"} {
		nowFunc = func() time.Time { return base.Add(time.Duration(i) * time.Second) }
		c.Put(key(k), entry(1000, byte(i)))
		p := filepath.Join(dir, key(k).String()+fileExt)
		os.Chtimes(p, nowFunc(), nowFunc())
	}
	nowFunc = time.Now
	if _, ok := c.Get(key("a")); ok {
		t.Fatal("oldest file not trimmed")
	}
	if _, ok := c.Get(key("c")); !ok {
		t.Fatal("newest file trimmed")
	}
}

func TestConcurrent(t *testing.T) {
	c := New(Options{MemoryBytes: 5000, Dir: t.TempDir()})
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				k := key(string(rune('a' + (g+i)%10)))
				if _, ok := c.Get(k); !ok {
					c.Put(k, entry(300, byte(i)))
				}
			}
		}(g)
	}
	wg.Wait()
	if s := c.Stats(); s.MemoryBytes > 5000 {
		t.Fatalf("over budget: %+v", s)
	}
}
