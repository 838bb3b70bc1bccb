package qwen3vl

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"weak"

	"h3studio/engine/compute"
	"h3studio/engine/compute/cpu"
	"h3studio/engine/safetensors"
	"h3studio/engine/testkit"
)

func TestInputErrors(t *testing.T) {
	p := openParity(t)
	m := loadTest(t, cpu.New(cpu.Options{}), compute.Resident)
	c := m.Config()
	img := caseInput(t, p, m, "text_fl2va")
	ids := img.IDs
	withIDs := func(f func([]int64) []int64) []int64 { return f(append([]int64(nil), ids...)) }
	cases := []struct {
		name string
		in   *Input
		opt  EncodeOptions
		want string
	}{
		{"empty", &Input{}, EncodeOptions{}, "empty token sequence"},
		{"id past vocabulary", &Input{IDs: []int64{1, int64(c.Text.VocabSize)}}, EncodeOptions{}, "outside the vocabulary"},
		{"negative id", &Input{IDs: []int64{-1}}, EncodeOptions{}, "outside the vocabulary"},
		{"pads without image", &Input{IDs: ids}, EncodeOptions{}, "no image left"},
		{"image without pads", &Input{IDs: []int64{1, 2, 3}, Images: img.Images}, EncodeOptions{}, "have pad runs"},
		{"short pad run", &Input{IDs: withIDs(func(v []int64) []int64 { return append(v[:10], v[11:]...) }), Images: img.Images}, EncodeOptions{}, "needs 66"},
		{"pixels short", &Input{IDs: ids, Images: []VisionInput{{Pixels: img.Images[0].Pixels[:100], Grid: img.Images[0].Grid}}}, EncodeOptions{}, "pixel values"},
		{"odd grid", &Input{IDs: ids, Images: []VisionInput{{Pixels: img.Images[0].Pixels, Grid: Grid{1, 3, 88}}}}, EncodeOptions{}, "multiples of 2"},
		{"video pads as image", &Input{IDs: ids, Videos: []VisionInput{{Pixels: img.Images[0].Pixels, Grid: img.Images[0].Grid}}}, EncodeOptions{}, "no image left"},
		{"f16 precision", &Input{IDs: []int64{1}}, EncodeOptions{Precision: compute.F16}, "not supported"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, err := m.Encode(context.Background(), tc.in, tc.opt)
			if err == nil {
				m.b.Free(out.Hidden)
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q does not say %q", err, tc.want)
			}
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := m.Encode(ctx, img, EncodeOptions{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled encode: %v", err)
	}
}

// copyEncoder copies the test encoder into a temporary folder.
func copyEncoder(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	ents, err := os.ReadDir(testEncoder)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b := testkit.ReadFile(t, filepath.Join(testEncoder, e.Name()))
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// editTensors rewrites the shard holding name with edit applied to its
// entries, and the index to match.
func editTensors(t *testing.T, dir, name string, edit func([]safetensors.Entry) []safetensors.Entry) {
	t.Helper()
	ix, err := safetensors.ReadIndex(filepath.Join(dir, "model.safetensors.index.json"))
	if err != nil {
		t.Fatal(err)
	}
	shard := ix.WeightMap[name]
	entries, _ := testkit.Entries(t, filepath.Join(dir, shard))
	for _, e := range entries {
		delete(ix.WeightMap, e.Name)
	}
	entries = edit(entries)
	for _, e := range entries {
		ix.WeightMap[e.Name] = shard
	}
	if err := safetensors.Write(filepath.Join(dir, shard), entries, nil); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(ix)
	if err := os.WriteFile(filepath.Join(dir, "model.safetensors.index.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLoadErrors(t *testing.T) {
	q := LayerPrefix(2) + "self_attn.q_proj.weight"
	cases := []struct {
		name  string
		setup func(t *testing.T, dir string)
		want  []string
	}{
		{"missing tensor", func(t *testing.T, dir string) {
			editTensors(t, dir, q, func(e []safetensors.Entry) []safetensors.Entry {
				out := e[:0]
				for _, x := range e {
					if x.Name != q {
						out = append(out, x)
					}
				}
				return out
			})
		}, []string{"missing tensor", q}},
		{"wrong shape", func(t *testing.T, dir string) {
			editTensors(t, dir, q, func(e []safetensors.Entry) []safetensors.Entry {
				for i := range e {
					if e[i].Name == q {
						e[i].Shape = compute.Shape{e[i].Shape[1], e[i].Shape[0]}
					}
				}
				return e
			})
		}, []string{q, "want shape [128 64]"}},
		{"unexpected tensor", func(t *testing.T, dir string) {
			editTensors(t, dir, q, func(e []safetensors.Entry) []safetensors.Entry {
				return append(e, safetensors.Entry{Name: "model.visual.extra.weight", DType: compute.BF16, Shape: compute.Shape{2}, Data: make([]byte, 4)})
			})
		}, []string{"unexpected tensor model.visual.extra.weight"}},
		{"missing shard", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "model-00002-of-00003.safetensors"))
		}, []string{"model-00002-of-00003.safetensors", "missing"}},
		{"truncated shard", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "model-00003-of-00003.safetensors")
			st, _ := os.Stat(p)
			os.Truncate(p, st.Size()/2)
		}, []string{"model-00003-of-00003.safetensors"}},
		{"bad config", func(t *testing.T, dir string) {
			editConfig(t, dir, func(c map[string]any) { c["text_config"].(map[string]any)["num_key_value_heads"] = 3 })
		}, []string{"config.json", "num_key_value_heads"}},
		{"config not json", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, "config.json"), []byte("{"), 0o644)
		}, []string{"config.json", "not a valid JSON object"}},
		{"no config", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "config.json"))
		}, []string{"config.json"}},
		{"bad preprocessor", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, "preprocessor_config.json"), []byte(`{"size":{"shortest_edge":10,"longest_edge":5}}`), 0o644)
		}, []string{"preprocessor_config.json", "size"}},
	}
	for _, tc := range cases {
		for _, mode := range []compute.Residency{compute.Resident, compute.Streaming} {
			t.Run(tc.name+"/"+mode.String(), func(t *testing.T) {
				dir := copyEncoder(t)
				tc.setup(t, dir)
				m, err := Open(cpu.New(cpu.Options{}), dir, dir, &Options{Residency: mode})
				if err == nil {
					m.Close()
					t.Fatal("loaded")
				}
				for _, w := range tc.want {
					if !strings.Contains(err.Error(), w) {
						t.Fatalf("error %q does not name %q", err, w)
					}
				}
			})
		}
	}
}

func editConfig(t *testing.T, dir string, edit func(map[string]any)) {
	t.Helper()
	b := testkit.ReadFile(t, filepath.Join(dir, "config.json"))
	var c map[string]any
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	edit(c)
	b, _ = json.Marshal(c)
	if err := os.WriteFile(filepath.Join(dir, "config.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestStreamingReadError: a shard that becomes unreadable after Load makes
// Encode fail with the layer and file named, and leaves no layer held.
func TestStreamingReadError(t *testing.T) {
	dir := copyEncoder(t)
	m := loadTestDir(t, dir, compute.Streaming)
	p := filepath.Join(dir, "model-00002-of-00003.safetensors")
	b := testkit.ReadFile(t, p)
	// Replace the file (the mapping keeps the old one) with a truncated copy.
	tmp := p + ".new"
	os.WriteFile(tmp, b[:len(b)/3], 0o644)
	if err := os.Rename(tmp, p); err != nil {
		t.Fatal(err)
	}
	_, err := m.Encode(context.Background(), &Input{IDs: []int64{1, 2, 3}}, EncodeOptions{})
	if err == nil || !strings.Contains(err.Error(), "layer") || !strings.Contains(err.Error(), "model-00002") {
		t.Fatalf("error %v", err)
	}
	if st := m.Stats(); st.ResidentLayers != 0 {
		t.Fatalf("%d layers still held", st.ResidentLayers)
	}
}

func loadTestDir(t *testing.T, dir string, mode compute.Residency) *Model {
	t.Helper()
	m, err := Open(cpu.New(cpu.Options{}), dir, dir, &Options{Residency: mode})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// TestInventoryIsWhatLoadBinds writes a text_encoder/ holding exactly
// Inventory's tensors and checks that Load accepts it in both memory modes
// and refuses one tensor fewer or one more, naming it.
func TestInventoryIsWhatLoadBinds(t *testing.T) {
	cfg, err := ReadConfig(testEncoder)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := Inventory(cfg).Entries(3)
	if err != nil {
		t.Fatal(err)
	}
	load := func(es []safetensors.Entry, mode compute.Residency) error {
		dir := t.TempDir()
		for _, f := range []string{"config.json", "preprocessor_config.json", "video_preprocessor_config.json"} {
			if err := os.WriteFile(filepath.Join(dir, f), testkit.ReadFile(t, filepath.Join(testEncoder, f)), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := safetensors.WriteSharded(dir, "model", es, 1<<16); err != nil {
			t.Fatal(err)
		}
		m, err := Open(cpu.New(cpu.Options{}), dir, dir, &Options{Residency: mode})
		if err != nil {
			return err
		}
		return m.Close()
	}
	for _, mode := range []compute.Residency{compute.Resident, compute.Streaming} {
		if err := load(entries, mode); err != nil {
			t.Fatalf("%v: the inventory's own checkpoint: %v", mode, err)
		}
	}
	if err := load(entries[1:], compute.Resident); err == nil || !strings.Contains(err.Error(), entries[0].Name) {
		t.Errorf("without %s: %v", entries[0].Name, err)
	}
	extra := append(append([]safetensors.Entry(nil), entries...), safetensors.F32("model.visual.extra.weight", compute.F32, compute.Shape{2}, []float32{1, 2}))
	if err := load(extra, compute.Resident); err == nil || !strings.Contains(err.Error(), "model.visual.extra.weight") {
		t.Errorf("with an unexpected tensor: %v", err)
	}
}

func FuzzParseConfig(f *testing.F) {
	b := testkit.ReadFile(f, filepath.Join(testEncoder, "config.json"))
	f.Add(b)
	f.Add([]byte(`{"text_config":{},"vision_config":{}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseConfig("config.json", data)
		if err != nil {
			return
		}
		// A valid config must be usable by the pure host math.
		_ = c.TapLayers()
		_ = mropeAxis(c)
		_ = c.VisionSpecs()
		_ = c.LayerSpecs(0)
	})
}

// TestStreamingCloseDropsLayerBuffers: once a streaming model is closed its
// two layer buffers (1.8 GiB at the released width) are garbage even while
// the Model value itself is still reachable, so the engine's collection after
// a release returns them to the OS.
func TestStreamingCloseDropsLayerBuffers(t *testing.T) {
	m := loadTestDir(t, copyEncoder(t), compute.Streaming)
	if _, err := m.Encode(context.Background(), &Input{IDs: []int64{1, 2, 3}}, EncodeOptions{}); err != nil {
		t.Fatal(err)
	}
	var held []weak.Pointer[byte]
	for _, b := range m.streamer.bufs {
		if len(b) > 0 {
			held = append(held, weak.Make(&b[0]))
		}
	}
	if len(held) == 0 {
		t.Fatal("the streamer read no layer into its buffers")
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	for i, p := range held {
		if p.Value() != nil {
			t.Errorf("layer buffer %d is still reachable after Close", i)
		}
	}
	runtime.KeepAlive(m)
}
