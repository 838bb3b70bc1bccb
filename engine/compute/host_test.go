package compute

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// ConvertFloat gives the bytes of the one-core conversion, across chunk
// boundaries and for a ragged last chunk.
func TestConvertFloatMatchesDecodeEncode(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	n := 3<<16 + 77
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(rng.NormFloat64()) * 3
	}
	for _, c := range []struct{ src, dst DType }{{BF16, F32}, {F32, BF16}, {F16, F32}, {F32, F16}, {F64, F32}, {BF16, BF16}} {
		src := EncodeFloat32(c.src, v)
		want := EncodeFloat32(c.dst, DecodeFloat32(c.src, src))
		if got := ConvertFloat(c.dst, c.src, src); !bytes.Equal(got, want) {
			t.Errorf("ConvertFloat(%v, %v) differs from EncodeFloat32(DecodeFloat32)", c.dst, c.src)
		}
	}
	if got := ConvertFloat(F32, BF16, nil); len(got) != 0 {
		t.Errorf("empty input gave %d bytes", len(got))
	}
}
