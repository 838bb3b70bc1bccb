package qwen3vl

import (
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"h3studio/engine/compute"
	"h3studio/engine/safetensors"
	"h3studio/engine/testkit"
)

// The package's test data is a copy of the oracle's seed-0 text set
// (shared/oracle-data/text, made by shared/oracle/make_text_fixtures.py with
// transformers 5.17): the tiny text_encoder/ without the tensors H3 never
// reads (decoder layers past the tap, the final norm, lm_head), and one
// file, parity.safetensors, with the inputs and reference results the tests
// compare against. Regenerate with
//
//	go test ./engine/qwen3vl -run TestMakeTestdata -update [-oracle DIR]
var (
	update    = flag.Bool("update", false, "regenerate testdata/ from the oracle data set")
	oracleDir = flag.String("oracle", "", "oracle text data set (text_encoder/, fixtures/); default: shared/oracle-data/text beside the checkout")
)

const testEncoder = "testdata/text_encoder"

// parityKeep lists, per oracle fixture, the tensors copied into
// parity.safetensors (stored under "<case>.<name>").
var parityKeep = map[string][]string{
	"text_t2va": {"in.input_ids", "in.position_ids", "h3.text_token_tags", "mid.embed", "mid.layer0",
		"mid.layer0.self_attn", "mid.rope_cos", "out.hidden_tap", "bf16.mid.layer0", "bf16.out.hidden_tap"},
	"text_fl2va": {"in.input_ids", "in.position_ids", "in.image", "in.image_grid_thw", "h3.text_token_tags",
		"mid.embed", "out.hidden_tap", "bf16.out.hidden_tap", "out.vision.merged", "out.vision.deepstack2", "bf16.out.vision.merged"},
	"text_video": {"in.input_ids", "in.position_ids", "in.video_frames", "in.video_grid_thw", "h3.text_token_tags",
		"out.hidden_tap", "bf16.out.hidden_tap", "out.vision.merged", "out.vision.deepstack0"},
	"text_ref2va": {"in.input_ids", "in.position_ids", "h3.text_token_tags", "out.hidden_tap", "bf16.out.hidden_tap"},
	"processor": {"in.image_upscale", "out.upscale.image_grid_thw", "in.smart_resize.image",
		"out.smart_resize.image", "in.smart_resize.video", "out.smart_resize.video", "out.smart_resize.video_capped"},
}

func TestMakeTestdata(t *testing.T) {
	if !*update {
		t.Skip("regenerates testdata/ from the oracle set; run with -update")
	}
	if *oracleDir == "" {
		for _, d := range []string{"../../../shared/oracle-data/text", "../../../../shared/oracle-data/text"} {
			if _, err := os.Stat(filepath.Join(d, "text_encoder", "config.json")); err == nil {
				*oracleDir = d
				break
			}
		}
	}
	src := filepath.Join(*oracleDir, "text_encoder")
	cfg, err := ReadConfig(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(testEncoder); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(testEncoder, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"config.json", "preprocessor_config.json", "video_preprocessor_config.json"} {
		b := testkit.ReadFile(t, filepath.Join(src, f))
		if err := os.WriteFile(filepath.Join(testEncoder, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Shards: the oracle's split minus the unused tensors.
	ck, err := safetensors.OpenDir(src)
	if err != nil {
		t.Fatal(err)
	}
	defer ck.Close()
	unused := cfg.UnusedPrefixes(cfg.TapLayers())
	weightMap := map[string]string{}
	var total int64
	for _, f := range ck.Files {
		var entries []safetensors.Entry
		for _, name := range f.Names() {
			if hasAnyPrefix(name, unused) {
				continue
			}
			info, _ := f.Info(name)
			data, _ := f.Data(name)
			entries = append(entries, safetensors.Entry{Name: name, DType: info.DType, Shape: info.Shape, Data: data})
			weightMap[name] = filepath.Base(f.Path)
			total += info.Bytes()
		}
		if err := safetensors.Write(filepath.Join(testEncoder, filepath.Base(f.Path)), entries, map[string]string{"format": "pt"}); err != nil {
			t.Fatal(err)
		}
	}
	idx, _ := json.MarshalIndent(map[string]any{"metadata": map[string]any{"total_size": total}, "weight_map": weightMap}, "", "  ")
	if err := os.WriteFile(filepath.Join(testEncoder, "model.safetensors.index.json"), append(idx, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	// Reference tensors.
	var entries []safetensors.Entry
	meta := map[string]string{"source": "shared/oracle-data/text (make_text_fixtures.py, transformers 5.17), seed 0"}
	cases := make([]string, 0, len(parityKeep))
	for c := range parityKeep {
		cases = append(cases, c)
	}
	sort.Strings(cases)
	for _, c := range cases {
		fx, err := safetensors.Open(filepath.Join(*oracleDir, "fixtures", c+".safetensors"))
		if err != nil {
			t.Fatal(err)
		}
		meta[c+".attrs"] = fx.Header.Metadata["attrs"]
		if c == "processor" { // 196 KB: kept as a digest (the Go resize is bit-exact)
			data, err := fx.Data("out.upscale.resized_u8")
			if err != nil {
				t.Fatal(err)
			}
			meta["processor.out.upscale.resized_u8.sha256"] = fmt.Sprintf("%x", sha256.Sum256(data))
		}
		for _, name := range parityKeep[c] {
			info, ok := fx.Info(name)
			if !ok {
				t.Fatalf("%s: no %s", c, name)
			}
			data, _ := fx.Data(name)
			entries = append(entries, safetensors.Entry{Name: c + "." + name, DType: info.DType, Shape: info.Shape, Data: append([]byte(nil), data...)})
		}
		fx.Close()
	}
	if err := safetensors.Write("testdata/parity.safetensors", entries, meta); err != nil {
		t.Fatal(err)
	}
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// parity is the committed reference data.
type parity struct {
	t testing.TB
	f *safetensors.File
}

func openParity(t testing.TB) *parity {
	t.Helper()
	f, err := safetensors.Open("testdata/parity.safetensors")
	if err != nil {
		t.Fatalf("test data missing (regenerate with -update): %v", err)
	}
	t.Cleanup(func() { f.Close() })
	return &parity{t: t, f: f}
}

func (p *parity) has(name string) bool { _, ok := p.f.Info(name); return ok }

func (p *parity) floats(name string) ([]float32, compute.Shape) {
	p.t.Helper()
	return testkit.Float32s(p.t, p.f, name)
}

func (p *parity) ints(name string) ([]int64, compute.Shape) {
	p.t.Helper()
	return testkit.Int64s(p.t, p.f, name)
}

// rgb reads a uint8 (…, H, W, 3) tensor as frames.
func (p *parity) rgb(name string) []*RGB {
	v, s := p.ints(name)
	if len(s) == 3 {
		s = append(compute.Shape{1}, s...)
	}
	T, H, W := s[0], s[1], s[2]
	out := make([]*RGB, T)
	for i := range out {
		out[i] = NewRGB(W, H)
		for j := range out[i].Pix {
			out[i].Pix[j] = uint8(v[i*H*W*3+j])
		}
	}
	return out
}

func (p *parity) grids(name string) []Grid {
	v, s := p.ints(name)
	out := make([]Grid, s[0])
	for i := range out {
		out[i] = Grid{T: int(v[3*i]), H: int(v[3*i+1]), W: int(v[3*i+2])}
	}
	return out
}

func (p *parity) String() string { return fmt.Sprint(p.f.Path) }
