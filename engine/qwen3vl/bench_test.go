package qwen3vl

import (
	"context"
	"testing"

	"h3studio/engine/compute"
	"h3studio/engine/compute/cpu"
	"h3studio/engine/condcache"
)

// BenchmarkEncode times one Encode of the oracle's tiny model (5 of 6
// decoder layers; the fl2va case adds a 192×352 keyframe through the
// vision tower) on the CPU reference backend, per memory mode and
// precision, and a conditioning-cache hit.
func BenchmarkEncode(b *testing.B) {
	t := &testing.T{}
	p := openParity(b)
	be := cpu.New(cpu.Options{})
	for _, mode := range []compute.Residency{compute.Resident, compute.Streaming} {
		m, err := Open(be, testEncoder, testEncoder, &Options{Residency: mode})
		if err != nil {
			b.Fatal(err)
		}
		defer m.Close()
		for _, c := range []string{"text_t2va", "text_fl2va"} {
			in := caseInput(t, p, m, c)
			for _, dt := range []compute.DType{compute.BF16, compute.F32} {
				b.Run(c[5:]+"/"+mode.String()+"/"+dt.String(), func(b *testing.B) {
					b.ReportMetric(float64(len(in.IDs)), "tokens")
					for i := 0; i < b.N; i++ {
						out, err := m.Encode(context.Background(), in, EncodeOptions{Precision: dt})
						if err != nil {
							b.Fatal(err)
						}
						be.Free(out.Hidden)
					}
				})
			}
		}
	}
	m, _ := Open(be, testEncoder, testEncoder, nil)
	defer m.Close()
	in := caseInput(t, p, m, "text_fl2va")
	cache := condcache.New(condcache.Options{})
	b.Run("fl2va/cache-hit", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			out, err := m.Encode(context.Background(), in, EncodeOptions{Cache: cache})
			if err != nil {
				b.Fatal(err)
			}
			be.Free(out.Hidden)
		}
	})
}
