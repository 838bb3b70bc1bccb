package safetensors

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"h3studio/engine/compute"
)

func mustWrite(t *testing.T, path string, entries ...Entry) {
	t.Helper()
	if err := Write(path, entries, nil); err != nil {
		t.Fatal(err)
	}
}

func f32(name string, v ...float32) Entry {
	return F32(name, compute.F32, compute.Shape{len(v)}, v)
}

func writeIndex(t *testing.T, path string, m map[string]string, meta map[string]any) {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"metadata": meta, "weight_map": m})
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// sharded writes a two-shard checkpoint with its index and returns the dir.
func sharded(t *testing.T) string {
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "model-00001-of-00002.safetensors"), f32("a", 1, 2), f32("b", 3))
	mustWrite(t, filepath.Join(dir, "model-00002-of-00002.safetensors"), f32("c", 4, 5, 6),
		Entry{Name: "d", DType: compute.BF16, Shape: compute.Shape{2}, Data: []byte{1, 2, 3, 4}})
	writeIndex(t, filepath.Join(dir, "model.safetensors.index.json"), map[string]string{
		"a": "model-00001-of-00002.safetensors", "b": "model-00001-of-00002.safetensors",
		"c": "model-00002-of-00002.safetensors", "d": "model-00002-of-00002.safetensors",
	}, map[string]any{"total_size": 28})
	return dir
}

func TestOpenDirSharded(t *testing.T) {
	dir := sharded(t)
	ck, err := OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ck.Close()
	if got := ck.Names(); !slices.Equal(got, []string{"a", "b", "c", "d"}) {
		t.Errorf("names %v", got)
	}
	if ck.TotalBytes() != 28 || len(ck.Warnings) != 0 {
		t.Errorf("total %d, warnings %v", ck.TotalBytes(), ck.Warnings)
	}
	data, err := ck.Data("c")
	if err != nil || !slices.Equal(compute.DecodeFloat32(compute.F32, data), []float32{4, 5, 6}) {
		t.Errorf("c = %v, %v", data, err)
	}
	if d, _ := ck.Data("d"); !bytes.Equal(d, []byte{1, 2, 3, 4}) {
		t.Errorf("d = %v", d)
	}
	if _, err := ck.Data("zz"); err == nil {
		t.Error("missing tensor returned data")
	}
	// Headers only: same inventory, nothing mapped.
	v, err := ValidateDir(dir)
	if err != nil || v.TotalBytes() != 28 || len(v.Files) != 2 || v.Files[0].Mapping() != nil {
		t.Errorf("ValidateDir: %v %v", v, err)
	}
	// A stray shard and a wrong total_size are warnings.
	mustWrite(t, filepath.Join(dir, "old.safetensors"), f32("zz", 1))
	writeIndex(t, filepath.Join(dir, "model.safetensors.index.json"), map[string]string{
		"a": "model-00001-of-00002.safetensors", "b": "model-00001-of-00002.safetensors",
		"c": "model-00002-of-00002.safetensors", "d": "model-00002-of-00002.safetensors",
	}, map[string]any{"total_size": 99})
	v, err = ValidateDir(dir)
	if err != nil || len(v.Warnings) != 2 || !strings.Contains(strings.Join(v.Warnings, "|"), "old.safetensors") {
		t.Errorf("warnings %q, %v", v.Warnings, err)
	}
}

func TestOpenDirUnsharded(t *testing.T) {
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "b.safetensors"), f32("y", 1))
	mustWrite(t, filepath.Join(dir, "a.safetensors"), f32("x", 1))
	ck, err := OpenDir(dir)
	if err != nil || len(ck.Files) != 2 || filepath.Base(ck.Files[0].Path) != "a.safetensors" {
		t.Fatalf("%v %v", ck, err)
	}
	ck.Close()
	if _, err := OpenDir(t.TempDir()); !errors.Is(err, ErrNoWeights) {
		t.Errorf("empty dir: %v", err)
	}
	if _, err := OpenDir(filepath.Join(dir, "nope")); err == nil {
		t.Error("missing dir accepted")
	}
	// Glob metacharacters in the folder name are harmless.
	odd := filepath.Join(t.TempDir(), "models [h3]*")
	os.Mkdir(odd, 0o755)
	mustWrite(t, filepath.Join(odd, "m.safetensors"), f32("x", 1))
	if ck, err := ValidateDir(odd); err != nil || len(ck.Files) != 1 {
		t.Errorf("odd folder name: %v %v", ck, err)
	}
}

// Every checkpoint-level rule, with the file and rule the error must name.
func TestCheckpointRules(t *testing.T) {
	cases := []struct {
		name       string
		mutate     func(t *testing.T, dir string)
		file, rule string
	}{
		{"shard missing", func(t *testing.T, d string) { os.Remove(filepath.Join(d, "model-00002-of-00002.safetensors")) },
			"model-00002-of-00002.safetensors", "shard named in the index is missing"},
		{"shard truncated", func(t *testing.T, d string) {
			p := filepath.Join(d, "model-00002-of-00002.safetensors")
			st, _ := os.Stat(p)
			os.Truncate(p, st.Size()-3)
		}, "model-00002-of-00002.safetensors", "beyond the"},
		{"shard header garbage", func(t *testing.T, d string) {
			os.WriteFile(filepath.Join(d, "model-00001-of-00002.safetensors"), []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 1}, 0o644)
		}, "model-00001-of-00002.safetensors", "header length past end of file"},
		{"shard is a folder", func(t *testing.T, d string) {
			p := filepath.Join(d, "model-00001-of-00002.safetensors")
			os.Remove(p)
			os.Mkdir(p, 0o755)
		}, "model-00001-of-00002.safetensors", "is a directory"},
		{"index invalid json", func(t *testing.T, d string) {
			os.WriteFile(filepath.Join(d, "model.safetensors.index.json"), []byte("{ not json"), 0o644)
		}, "model.safetensors.index.json", "index is not a valid JSON object"},
		{"index empty", func(t *testing.T, d string) {
			writeIndex(t, filepath.Join(d, "model.safetensors.index.json"), map[string]string{}, nil)
		}, "model.safetensors.index.json", "no weight_map entries"},
		{"index escapes folder", func(t *testing.T, d string) {
			writeIndex(t, filepath.Join(d, "model.safetensors.index.json"), map[string]string{"a": "../x.safetensors"}, nil)
		}, "model.safetensors.index.json", "invalid shard name"},
		{"index bad total_size", func(t *testing.T, d string) {
			writeIndex(t, filepath.Join(d, "model.safetensors.index.json"), map[string]string{"a": "model-00001-of-00002.safetensors"}, map[string]any{"total_size": -5})
		}, "model.safetensors.index.json", "total_size"},
		{"tensor not in its shard", func(t *testing.T, d string) {
			writeIndex(t, filepath.Join(d, "model.safetensors.index.json"), map[string]string{
				"a": "model-00002-of-00002.safetensors", "b": "model-00001-of-00002.safetensors",
				"c": "model-00002-of-00002.safetensors", "d": "model-00002-of-00002.safetensors"}, nil)
		}, "model-00002-of-00002.safetensors", `tensor "a" named in the index is not in this shard`},
		{"tensor not indexed", func(t *testing.T, d string) {
			writeIndex(t, filepath.Join(d, "model.safetensors.index.json"), map[string]string{
				"a": "model-00001-of-00002.safetensors", "c": "model-00002-of-00002.safetensors", "d": "model-00002-of-00002.safetensors"}, nil)
		}, "model-00001-of-00002.safetensors", `tensor "b" is not in the index`},
		{"duplicate tensor", func(t *testing.T, d string) {
			mustWrite(t, filepath.Join(d, "model-00002-of-00002.safetensors"), f32("a", 7), f32("c", 4, 5, 6),
				Entry{Name: "d", DType: compute.BF16, Shape: compute.Shape{2}, Data: []byte{1, 2, 3, 4}})
		}, "model-00002-of-00002.safetensors", `tensor "a" also in model-00001-of-00002.safetensors`},
		{"two indexes", func(t *testing.T, d string) {
			writeIndex(t, filepath.Join(d, "other.safetensors.index.json"), map[string]string{"a": "model-00001-of-00002.safetensors"}, nil)
		}, "model.safetensors.index.json", "more than one index file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := sharded(t)
			c.mutate(t, dir)
			for _, open := range []func(string) (*Checkpoint, error){OpenDir, ValidateDir} {
				ck, err := open(dir)
				if err == nil {
					ck.Close()
					t.Fatalf("accepted, want an error naming %s and %q", c.file, c.rule)
				}
				if !strings.Contains(err.Error(), c.file) || !strings.Contains(err.Error(), c.rule) {
					t.Fatalf("error %q does not name %s and %q", err, c.file, c.rule)
				}
			}
		})
	}
}

func TestWriteLayout(t *testing.T) {
	p := filepath.Join(t.TempDir(), "w.safetensors")
	entries := []Entry{
		{Name: "u8", DType: compute.U8, Shape: compute.Shape{3}, Data: []byte{1, 2, 3}},
		f32("f", 1, 2, 3),
		{Name: "i64", DType: compute.I64, Shape: compute.Shape{1}, Data: make([]byte, 8)},
		{Name: "bf", DType: compute.BF16, Shape: compute.Shape{}, Data: []byte{9, 9}},
	}
	if err := Write(p, entries, map[string]string{"k": "v"}); err != nil {
		t.Fatal(err)
	}
	f, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var order []string
	for _, ti := range f.Header.Tensors {
		order = append(order, ti.Name)
		if ti.Begin%int64(ti.DType.Size()) != 0 {
			t.Errorf("%s at %d is not aligned to %d", ti.Name, ti.Begin, ti.DType.Size())
		}
	}
	if !slices.Equal(order, []string{"i64", "f", "bf", "u8"}) {
		t.Errorf("order %v, want largest dtype first", order)
	}
	if f.Header.DataStart%8 != 0 || f.Header.Metadata["k"] != "v" {
		t.Errorf("data start %d, metadata %v", f.Header.DataStart, f.Header.Metadata)
	}
	for _, bad := range [][]Entry{
		{f32("x", 1), f32("x", 2)},
		{{Name: "__metadata__", DType: compute.F32, Shape: compute.Shape{1}, Data: make([]byte, 4)}},
		{{Name: "s", DType: compute.F32, Shape: compute.Shape{2}, Data: make([]byte, 4)}},
	} {
		if err := Write(filepath.Join(t.TempDir(), "bad.safetensors"), bad, nil); err == nil {
			t.Errorf("Write accepted %v", bad)
		}
	}
	// A failed write leaves no file behind and never clobbers the old one.
	if err := Write(p, []Entry{f32("x", 1), f32("x", 2)}, nil); err == nil {
		t.Fatal("duplicate accepted")
	}
	if _, err := ReadHeader(p); err != nil {
		t.Errorf("old file damaged: %v", err)
	}
	ents, _ := os.ReadDir(filepath.Dir(p))
	if len(ents) != 1 {
		t.Errorf("left %d files behind", len(ents))
	}
}

func FuzzParseIndex(f *testing.F) {
	f.Add([]byte(`{"metadata":{"total_size":28},"weight_map":{"a":"m-1.safetensors","b":"m-2.safetensors"}}`))
	f.Add([]byte(`{"weight_map":{"a":"../x.safetensors"}}`))
	f.Add([]byte(`{"metadata":null,"weight_map":{}}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		ix, err := ParseIndex("i.json", b)
		if err != nil {
			var fe *FormatError
			if !errors.As(err, &fe) || fe.Path != "i.json" {
				t.Fatalf("error %v does not name the file", err)
			}
			return
		}
		if len(ix.WeightMap) == 0 {
			t.Fatal("accepted an empty weight_map")
		}
		for _, s := range ix.Shards() {
			if s == "" || strings.ContainsAny(s, `/\`) || filepath.Base(s) != s {
				t.Fatalf("accepted shard name %q", s)
			}
		}
		if n, ok := ix.TotalSize(); ok && n < 0 {
			t.Fatalf("accepted total_size %d", n)
		}
	})
}
