package videovae

import (
	"context"
	"testing"

	"h3studio/engine/compute/cpu"
)

// tinyModel writes TinyConfig's random model to a temporary folder and
// opens it (a full load: strict accounting checks TensorShapes against
// Load).
func tinyModel(t testing.TB, b *cpu.Backend) *Model { return tinyModelWith(t, b, nil) }

// tinyModelWith is tinyModel opened with the options o.
func tinyModelWith(t testing.TB, b *cpu.Backend, o *Options) *Model {
	t.Helper()
	dir := t.TempDir()
	if err := WriteTestModel(dir, TinyConfig(), 1); err != nil {
		t.Fatal(err)
	}
	m, err := Open(b, dir, dir+"/source", o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

func TestWriteTestModelLoads(t *testing.T) {
	m := tinyModel(t, cpu.New(cpu.Options{}))
	if m.Config.DecoderFFNHidden != 128 || m.Config.DecoderRegisters != 4 || m.Config.SpatialRatio() != 16 {
		t.Fatalf("config read back as %+v", m.Config)
	}
	z := NewVolume(24, 7, 2, 3)
	for i := range z.Data {
		z.Data[i] = float32(i%7) - 3
	}
	v, err := m.Decode(context.Background(), z, nil)
	if err != nil {
		t.Fatal(err)
	}
	if v.C != 3 || v.T != 22 || v.H != 32 || v.W != 48 {
		t.Fatalf("decoded %v", v.Shape())
	}
}
