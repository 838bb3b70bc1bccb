package quant

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"h3studio/engine/compute"
	"h3studio/engine/safetensors"
)

// writeSource writes a small BF16 checkpoint: three blocks of two linears
// and a norm, and a head.
func writeSource(t *testing.T, dir string) *safetensors.Checkpoint {
	t.Helper()
	var es []safetensors.Entry
	for _, n := range []string{"blocks.0.a", "blocks.0.b", "blocks.1.a", "blocks.1.b", "blocks.2.a", "blocks.2.b", "head"} {
		es = append(es, safetensors.F32(n+".weight", compute.BF16, compute.Shape{8, 128}, bf16Matrix(8, 128, uint64(len(es)+1))))
	}
	es = append(es, safetensors.F32("blocks.0.norm.bias", compute.BF16, compute.Shape{128}, make([]float32, 128)))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := safetensors.Write(filepath.Join(dir, "model.safetensors"), es, nil); err != nil {
		t.Fatal(err)
	}
	ck, err := safetensors.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ck.Close() })
	return ck
}

func TestCacheBuildResumeAndReuse(t *testing.T) {
	root := t.TempDir()
	src := filepath.Join(root, "transformer")
	ck := writeSource(t, src)
	f := compute.Int4
	dir := CacheDir(src, f)
	sel := BuildOptions{Select: func(name string, _ safetensors.TensorInfo) bool { return name != "head.weight" }}
	if _, ok, _ := ReadManifest(dir, ck, f); ok {
		t.Fatal("a missing cache reads as complete")
	}
	// Cancelled after the first part: that part stays, no manifest.
	ctx, cancel := context.WithCancel(context.Background())
	o := sel
	o.Progress = func(done, total int) {
		if done == 1 {
			cancel()
		}
	}
	if _, err := Build(ctx, ck, dir, f, o); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled build: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, ManifestName)); err == nil {
		t.Fatal("a cancelled build wrote the manifest")
	}
	first := filepath.Join(dir, "part-blocks.0.safetensors")
	st0, err := os.Stat(first)
	if err != nil {
		t.Fatalf("the finished part is gone: %v", err)
	}
	// Resumed: the first part is kept, the rest written, the manifest last.
	time.Sleep(10 * time.Millisecond)
	m, err := Build(context.Background(), ck, dir, f, sel)
	if err != nil {
		t.Fatal(err)
	}
	if st1, _ := os.Stat(first); !st1.ModTime().Equal(st0.ModTime()) {
		t.Error("the resumed build rewrote a finished part")
	}
	if m.Tensors != 6 || len(m.Parts) != 3 || len(m.Source) != 1 || len(m.Source[0].SHA256) != 64 {
		t.Fatalf("manifest %+v", m)
	}
	if _, ok, err := ReadManifest(dir, ck, f); !ok {
		t.Fatalf("complete cache not accepted: %v", err)
	}
	if _, ok, _ := ReadManifest(dir, ck, compute.Int8); ok {
		t.Error("an int4 cache accepted for int8")
	}
	// The cached tensors, through the overlay, are MLX's form of Quantize.
	cc, err := safetensors.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	ov := Overlay{Base: ck, Cache: cc}
	if len(ov.Names()) != len(ck.Names()) {
		t.Error("the overlay lists the cache's tensors")
	}
	info, _ := ck.Info("blocks.1.b.weight")
	data, _ := ck.Data("blocks.1.b.weight")
	rows, _ := Quantize(compute.DecodeFloat32(info.DType, data), 8, 128, f)
	want := ToMLX(rows, 8, 128, f)
	codes, err := ov.Data("blocks.1.b" + SuffixCodes)
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range want.Weight {
		if got := uint32(codes[4*i]) | uint32(codes[4*i+1])<<8 | uint32(codes[4*i+2])<<16 | uint32(codes[4*i+3])<<24; got != w {
			t.Fatalf("code word %d: %08x, want %08x", i, got, w)
		}
	}
	if _, ok := ov.Info("head" + SuffixScales); ok {
		t.Error("an unselected weight was cached")
	}
	// A changed source makes the cache stale.
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(filepath.Join(src, "model.safetensors"), later, later); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := ReadManifest(dir, ck, f); ok || err == nil {
		t.Error("a cache of a changed source accepted")
	}
}
