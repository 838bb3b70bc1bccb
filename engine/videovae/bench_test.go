package videovae

import (
	"context"
	"math/rand/v2"
	"testing"

	"h3studio/engine/compute/cpu"
)

// BenchmarkDecodeTiny256 decodes the demo geometry (256×256, 22 frames =
// 7 latents) with TinyConfig's random model on the CPU backend. Target:
// a few seconds on 2 cores (the end-to-end demo).
func BenchmarkDecodeTiny256(b *testing.B) {
	be := cpu.New(cpu.Options{})
	m := tinyModel(b, be)
	rng := rand.New(rand.NewPCG(1, 2))
	z := NewVolume(24, 7, 16, 16)
	for i := range z.Data {
		z.Data[i] = float32(rng.NormFloat64())
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := m.Decode(context.Background(), z, nil); err != nil {
			b.Fatal(err)
		}
	}
}
