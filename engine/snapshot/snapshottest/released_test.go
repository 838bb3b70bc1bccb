package snapshottest

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"h3studio/engine/audiovae"
	"h3studio/engine/dit"
	"h3studio/engine/safetensors"
	"h3studio/engine/snapshot"
	"h3studio/engine/videovae"
)

func TestInventories(t *testing.T) {
	// Released counts and byte totals (H3-DIT.md §1.1, §3; H3-ENCODERS-VAES.md §2.1, §9.9).
	cases := []struct {
		name    string
		inv     []Tensor
		tensors int
		params  int64
		bytes   int64
	}{
		{"transformer", TransformerInventory(), 535, 33122992912, 66280430144},
		{"text encoder", TextEncoderInventory(), 1058, 33357390064, 66714780128},
		{"video VAE", VideoVAEInventory(), 560, 2603871032, 10415484128},
		{"audio VAE", AudioVAEInventory(), 1087, 151326585, 605306340},
	}
	for _, c := range cases {
		n, p, b := Totals(c.inv)
		if n != c.tensors || p != c.params || b != c.bytes {
			t.Errorf("%s: %d tensors, %d params, %d bytes; want %d, %d, %d", c.name, n, p, b, c.tensors, c.params, c.bytes)
		}
	}
}

// TestVAEReleasedConfigs: the VAE packages' ReleasedConfig (what `h3studio
// plan` estimates with) is valid and names exactly the released tensors
// with their shapes (these inventories reproduce the released byte totals,
// TestInventories).
func TestVAEReleasedConfigs(t *testing.T) {
	v := videovae.ReleasedConfig()
	a := audiovae.ReleasedConfig()
	for _, c := range []struct {
		name  string
		valid error
		got   map[string][]int
		want  []Tensor
	}{
		{"video VAE", v.Validate(), videovae.TensorShapes(v), VideoVAEInventory()},
		{"audio VAE", a.Validate(), audiovae.TensorShapes(a), AudioVAEInventory()},
	} {
		if c.valid != nil {
			t.Errorf("%s: %v", c.name, c.valid)
		}
		if len(c.got) != len(c.want) {
			t.Errorf("%s: %d tensors, the release has %d", c.name, len(c.got), len(c.want))
		}
		for _, x := range c.want {
			if !slices.Equal(c.got[x.Name], x.Shape) {
				t.Errorf("%s %s: %v, the release has %v", c.name, x.Name, c.got[x.Name], x.Shape)
			}
		}
	}
	if v.SpatialRatio() != 16 || v.TemporalRatio() != 4 || v.DecoderFFNHidden != 8192 || a.Hop() != 800 ||
		!slices.Equal(a.DecoderKernels, []int{9, 9, 4, 4, 4, 4, 4}) {
		t.Errorf("geometry: video %d×/%d×, MLP %d; audio hop %d, kernels %v", v.SpatialRatio(), v.TemporalRatio(), v.DecoderFFNHidden, a.Hop(), a.DecoderKernels)
	}
}

// sparseRoot writes the released snapshot into a temporary folder, or skips
// (loudly) where the file system does not keep zero-filled files sparse.
func sparseRoot(tb testing.TB) string {
	tb.Helper()
	root := tb.TempDir()
	probe := filepath.Join(root, "probe.safetensors")
	if err := WriteSparse(probe, TransformerInventory()[:40]); err != nil {
		tb.Fatal(err)
	}
	if u := DiskUsage(root); u < 0 || u > 64<<20 {
		tb.Skipf("snapshottest: this file system does not keep a %s file sparse (%d bytes on disk): the full-size snapshot would use real disk", "40-tensor", u)
	}
	os.Remove(probe)
	if err := WriteReleased(root); err != nil {
		tb.Fatal(err)
	}
	return root
}

func TestReleasedSnapshot(t *testing.T) {
	root := sparseRoot(t)
	if u := DiskUsage(root); u > 64<<20 {
		t.Errorf("the released snapshot occupies %d bytes on disk; it should be sparse", u)
	}
	r, err := snapshot.Inspect(root)
	if err != nil {
		t.Fatal(err)
	}
	if !r.OK() || len(r.Missing) != 0 || len(r.Warnings) != 0 {
		t.Fatalf("problems %v, missing %v, warnings %v", r.Problems, r.Missing, r.Warnings)
	}
	for _, tr := range r.Tasks {
		if !tr.Available {
			t.Errorf("%s unavailable: %s", tr.Task, tr.Why())
		}
	}
	want := map[snapshot.Kind][3]int64{
		snapshot.Transformer: {13, 535, 66280430144},
		snapshot.TextEncoder: {14, 1058, 66714780128},
		snapshot.VideoVAE:    {1, 560, 10415484128},
		snapshot.AudioVAE:    {1, 1087, 605306340},
	}
	for _, c := range r.Components {
		if w, ok := want[c.Kind]; ok && (int64(c.Shards) != w[0] || int64(c.Tensors) != w[1] || c.Bytes != w[2]) {
			t.Errorf("%s: %d files, %d tensors, %d bytes; want %v", c.Where, c.Shards, c.Tensors, c.Bytes, w)
		}
	}
	params, bytes := r.Totals()
	t.Logf("released snapshot: %s parameters, %s of weights in two partitions, %d bytes on disk",
		snapshot.HumanCount(params), snapshot.HumanBytes(bytes), DiskUsage(root))
	cfg := r.Components[3].Config.(dit.Config)
	if cfg.HiddenSize != 5376 || cfg.Inner() != 7168 || cfg.PatchDim() != 96 {
		t.Errorf("transformer config %+v", cfg)
	}
	// The mapped checkpoint opens and serves a tensor (zeros) from a shard.
	ck, err := safetensors.OpenDir(filepath.Join(root, "FL2VA", "transformer"))
	if err != nil {
		t.Fatal(err)
	}
	defer ck.Close()
	d, err := ck.Data("blocks.49.mlp.fc2.weight")
	if err != nil || len(d) != 5376*14336*2 || d[0] != 0 || d[len(d)-1] != 0 {
		t.Fatalf("blocks.49.mlp.fc2.weight: %d bytes, %v", len(d), err)
	}
}

// Benchmarks of the full-size released snapshot (two partitions, 286 GB
// apparent, sparse) against the tiny one: inspection (what `h3studio info`
// does: configs and every header) and checkpoint open (index, headers and
// mmap of every shard). Target: < 100 ms, independent of checkpoint size.
func BenchmarkInspect(b *testing.B) {
	benchSnapshots(b, func(b *testing.B, root string) func() {
		r, err := snapshot.Inspect(root)
		if err != nil || !r.OK() {
			b.Fatal(err, r.Problems)
		}
		return func() {}
	})
}

func BenchmarkOpenTransformer(b *testing.B) {
	benchSnapshots(b, func(b *testing.B, root string) func() {
		ck, err := safetensors.OpenDir(filepath.Join(root, "FL2VA", "transformer"))
		if err != nil {
			b.Fatal(err)
		}
		return func() { ck.Close() }
	})
}

// benchSnapshots runs op on the released and the tiny snapshot with Bench.
func benchSnapshots(b *testing.B, op func(b *testing.B, root string) (cleanup func())) {
	for _, c := range []struct {
		name  string
		build func(testing.TB) string
	}{{"released", sparseRoot}, {"tiny", tinyRoot}} {
		b.Run(c.name, func(b *testing.B) {
			root := c.build(b)
			Bench(b, func() func() { return op(b, root) })
		})
	}
}

// tinyRoot writes the released structure with one-element tensors.
func tinyRoot(tb testing.TB) string {
	tb.Helper()
	root := tb.TempDir()
	if err := WriteReleasedMinimal(root); err != nil {
		tb.Fatal(err)
	}
	return root
}
