package qwen3vl

import (
	"context"
	"testing"

	"h3studio/engine/compute"
	"h3studio/engine/compute/cpu"
	"h3studio/engine/condcache"
)

// TestCacheSkipsEncoder: re-running a request (another seed changes nothing
// the text encoder sees) is served from the conditioning cache without a
// single encoder forward, bit-identically; a new prompt with the same
// reference reuses the cached vision features; the precision is part of the
// key; a cache folder serves a fresh session (a restart).
func TestCacheSkipsEncoder(t *testing.T) {
	p := openParity(t)
	b := cpu.New(cpu.Options{})
	dir := t.TempDir()
	for _, mode := range []compute.Residency{compute.Resident, compute.Streaming} {
		t.Run(mode.String(), func(t *testing.T) {
			m := loadTest(t, b, mode)
			cache := condcache.New(condcache.Options{Dir: dir})
			cache.Clear(true)
			in := caseInput(t, p, m, "text_fl2va")
			enc := func(in *Input, dt compute.DType, c *condcache.Cache) ([]float32, *Output) {
				t.Helper()
				out, err := m.Encode(context.Background(), in, EncodeOptions{Precision: dt, Cache: c})
				if err != nil {
					t.Fatal(err)
				}
				v, _ := compute.ToFloat32(out.Hidden)
				b.Free(out.Hidden)
				return v, out
			}
			first, out := enc(in, compute.BF16, cache)
			s1 := m.Stats()
			if out.Cached || s1.Encodes != 1 || s1.VisionBlocks != 1 {
				t.Fatalf("first run: cached=%v stats %+v", out.Cached, s1)
			}
			again, out := enc(in, compute.BF16, cache)
			if s := m.Stats(); !out.Cached || s.Encodes != 1 || s.VisionBlocks != 1 || s.LayersRun != s1.LayersRun || s.BytesStreamed != s1.BytesStreamed {
				t.Fatalf("second run not served from the cache: cached=%v stats %+v", out.Cached, s)
			}
			for i := range first {
				if first[i] != again[i] {
					t.Fatalf("cached output differs at %d", i)
				}
			}
			if len(out.Tags) != len(in.IDs) || out.Positions[1][len(in.IDs)-1] == 0 {
				t.Fatal("cached tags/positions missing")
			}
			// New prompt, same image: the LM runs, the vision tower does not.
			other := *in
			other.IDs = append(append([]int64(nil), in.IDs...), 17, 18)
			enc(&other, compute.BF16, cache)
			if s := m.Stats(); s.Encodes != 2 || s.VisionBlocks != 1 {
				t.Fatalf("new prompt: stats %+v", s)
			}
			// Precision is part of the key.
			enc(in, compute.F32, cache)
			if s := m.Stats(); s.Encodes != 3 || s.VisionBlocks != 2 {
				t.Fatalf("fp32 run: stats %+v", s)
			}
			// A fresh cache over the same folder (a restarted app) hits on disk.
			fresh := condcache.New(condcache.Options{Dir: dir})
			again, out = enc(in, compute.BF16, fresh)
			if s := m.Stats(); !out.Cached || s.Encodes != 3 || fresh.Stats().DiskHits != 1 {
				t.Fatalf("restart: cached=%v stats %+v cache %+v", out.Cached, s, fresh.Stats())
			}
			for i := range first {
				if first[i] != again[i] {
					t.Fatalf("disk-cached output differs at %d", i)
				}
			}
		})
	}
}

// TestCacheKeys: every input that changes the result changes the key.
func TestCacheKeys(t *testing.T) {
	p := openParity(t)
	m := loadTest(t, cpu.New(cpu.Options{}), compute.Resident)
	in := caseInput(t, p, m, "text_fl2va")
	base := m.TextKey(in, compute.BF16)
	if m.TextKey(in, compute.BF16) != base {
		t.Fatal("key not deterministic")
	}
	ids := *in
	ids.IDs = append([]int64(nil), in.IDs...)
	ids.IDs[len(ids.IDs)-1]++
	px := *in
	px.Images = []VisionInput{{Pixels: append([]float32(nil), in.Images[0].Pixels...), Grid: in.Images[0].Grid}}
	px.Images[0].Pixels[1000] += 1e-3
	asVideo := *in
	asVideo.Images, asVideo.Videos = nil, in.Images
	for name, k := range map[string]condcache.Key{
		"precision": m.TextKey(in, compute.F32), "ids": m.TextKey(&ids, compute.BF16),
		"pixels": m.TextKey(&px, compute.BF16), "modality": m.TextKey(&asVideo, compute.BF16),
	} {
		if k == base {
			t.Errorf("changing %s keeps the key", name)
		}
	}
	m2, err := Open(cpu.New(cpu.Options{}), testEncoder, testEncoder, &Options{Layers: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer m2.Close()
	if m2.TextKey(in, compute.BF16) == base {
		t.Error("layer count not in the key")
	}
}
