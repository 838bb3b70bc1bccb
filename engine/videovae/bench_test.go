package videovae

import (
	"context"
	"h3studio/engine/testkit"
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

// BenchmarkTilePlans decodes 512×512×22 with the reference fixed plan and
// h3.c's adaptive plan (TinyConfig's random model) and reports the passes,
// tokens per pass and the rel-L2 between the two outputs.
func BenchmarkTilePlans(b *testing.B) {
	be := cpu.New(cpu.Options{})
	m := tinyModel(b, be)
	z := randomVolume(24, 7, 32, 32, 7)
	outs := map[Tiling]*Volume{}
	for _, tl := range []Tiling{TileFixed, TileAdaptive} {
		b.Run(tl.String(), func(b *testing.B) {
			o := &DecodeOptions{Tiling: tl}
			est, err := EstimateDecode(m.Config, z.T, z.H, z.W, o, 0)
			if err != nil {
				b.Fatal(err)
			}
			for i := 0; i < b.N; i++ {
				v, err := m.Decode(context.Background(), z, o)
				if err != nil {
					b.Fatal(err)
				}
				outs[tl] = v
			}
			b.ReportMetric(float64(est.TilePasses), "passes")
			b.ReportMetric(float64(est.TileTokens), "tokens/pass")
			b.ReportMetric(est.FLOPs/1e9, "GFLOP")
			b.ReportMetric(est.Plan.Overhead()*100, "%overlap")
		})
	}
	if a, f := outs[TileAdaptive], outs[TileFixed]; a != nil && f != nil {
		b.Logf("512×512×22: rel-L2(adaptive, fixed) = %.3g", testkit.RelL2(a.Data, f.Data))
	}
}
