//go:build linux

package mslcpu

import (
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"h3studio/engine/compute"
)

var testSrc = os.DirFS("testdata/src")

func toolchain(t *testing.T) *Toolchain {
	t.Helper()
	return Require(t)
}

func build(t *testing.T, file string) *Module {
	t.Helper()
	m, err := toolchain(t).Build(testSrc, file)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func f32s(b []byte) []float32 { return compute.DecodeFloat32(compute.F32, b) }

func bytesF32(v []float32) []byte { return compute.EncodeFloat32(compute.F32, v) }

func argsN(n uint32, eps float32) []byte {
	b := make([]byte, 8)
	binary.LittleEndian.PutUint32(b, n)
	binary.LittleEndian.PutUint32(b[4:], math.Float32bits(eps))
	return b
}

func TestTranslateKeepsLines(t *testing.T) {
	src := "#include <metal_stdlib>\n# 1 \"k.metal\"\nkernel void k(device float* y [[buffer(0)]],\n   uint i [[thread_position_in_grid]]) {\n  threadgroup float a[4], b[2];\n  y[i] = 1.0f;\n}\n"
	tr, err := Translate(src)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Count(tr.Source, "\n"), strings.Count(src, "\n"); got != want {
		t.Fatalf("translation has %d lines, source %d:\n%s", got, want, tr.Source)
	}
	if len(tr.Kernels) != 1 || tr.Kernels[0].Name != "k" || tr.Kernels[0].Line != 1 || tr.Kernels[0].File != "k.metal" {
		t.Fatalf("kernels %+v", tr.Kernels)
	}
	ps := tr.Kernels[0].Params
	if len(ps) != 2 || ps[0].Role != RoleBuffer || ps[1].Role != RolePosition {
		t.Fatalf("params %+v", ps)
	}
	for _, want := range []string{"auto& a = *::msl::tg<float[4]>(0);", "auto& b = *::msl::tg<float[2]>(1);"} {
		if !strings.Contains(tr.Source, want) {
			t.Errorf("translation lacks %q:\n%s", want, tr.Source)
		}
	}
	if strings.Contains(tr.Source, "[[") {
		t.Errorf("attributes left in:\n%s", tr.Source)
	}
}

func TestLint(t *testing.T) {
	_, err := toolchain(t).Build(testSrc, "lint.metal")
	var ce *CompileError
	if !errors.As(err, &ce) {
		t.Fatalf("lint.metal built (err %v); want style errors", err)
	}
	for _, want := range []string{
		"lint.metal:6: kernel bad_style: parameter other has no [[buffer(n)]]",
		"lint.metal:7: C-style cast to float4",
		"lint.metal:8: floating literal 0.5 needs a suffix",
	} {
		if !strings.Contains(ce.Msg, want) {
			t.Errorf("errors lack %q:\n%s", want, ce.Msg)
		}
	}
}

func TestGoodKernels(t *testing.T) {
	m := build(t, "good.metal")
	names := map[string]bool{}
	for _, k := range m.Kernels {
		names[k.Name] = true
	}
	for _, n := range []string{"row_sumsq", "scale_f32", "scale_f16", "sgmm", "reverse_tg"} {
		if !names[n] {
			t.Errorf("entry point %s missing (have %v)", n, names)
		}
	}
	if names["scale_t"] {
		t.Errorf("template scale_t listed as an entry point")
	}
	rng := rand.New(rand.NewPCG(1, 2))

	t.Run("row_sumsq", func(t *testing.T) {
		const rows, n = 5, 1000
		x := make([]float32, rows*n)
		for i := range x {
			x[i] = rng.Float32()*2 - 1
		}
		for _, tpg := range []int{32, 96, 256} {
			res, err := m.Run("row_sumsq", Launch{Size: [3]int{rows, 1, 1}, Group: [3]int{tpg, 1, 1}, Schedules: []int{0, 1, 2},
				Buffers: []Buffer{{Index: 0, Data: argsN(n, 0), Align: 4}, {Index: 1, Data: bytesF32(x), Align: 4}, {Index: 2, Data: make([]byte, 4*rows), Writable: true, Align: 4}}})
			if err != nil {
				t.Fatal(err)
			}
			got := f32s(res.Buffers[2])
			for r := 0; r < rows; r++ {
				var want float64
				for _, v := range x[r*n : (r+1)*n] {
					want += float64(v) * float64(v)
				}
				if math.Abs(float64(got[r])-want) > 1e-4*want {
					t.Errorf("tpg %d row %d: %g, want %g", tpg, r, got[r], want)
				}
			}
		}
	})

	t.Run("scale", func(t *testing.T) {
		x := []float32{1, 2, 3, 4, 5}
		res, err := m.Run("scale_f32", Launch{Size: [3]int{5, 1, 1}, Group: [3]int{4, 1, 1}, PerThread: true,
			Buffers: []Buffer{{Index: 0, Data: argsN(5, 0.5), Align: 4}, {Index: 1, Data: bytesF32(x), Align: 4}, {Index: 2, Data: make([]byte, 20), Writable: true, Align: 4}}})
		if err != nil {
			t.Fatal(err)
		}
		if got := f32s(res.Buffers[2]); got[4] != 2.5 || got[0] != 0.5 {
			t.Errorf("scale_f32: %v", got)
		}
	})

	t.Run("sgmm", func(t *testing.T) {
		const n = 24
		a, b := make([]float32, n*n), make([]float32, n*n)
		for i := range a {
			a[i], b[i] = float32(rng.IntN(7)-3), float32(rng.IntN(7)-3)
		}
		res, err := m.Run("sgmm", Launch{Size: [3]int{n / 8, n / 8, 1}, Group: [3]int{32, 1, 1},
			Buffers: []Buffer{{Index: 0, Data: argsN(n, 0), Align: 4}, {Index: 1, Data: bytesF32(a), Align: 4}, {Index: 2, Data: bytesF32(b), Align: 4}, {Index: 3, Data: make([]byte, 4*n*n), Writable: true, Align: 4}}})
		if err != nil {
			t.Fatal(err)
		}
		got := f32s(res.Buffers[3])
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				var want float32
				for k := 0; k < n; k++ {
					want += a[i*n+k] * b[k*n+j]
				}
				if got[i*n+j] != want { // small integers: exact in any order
					t.Fatalf("C[%d,%d] = %g, want %g", i, j, got[i*n+j], want)
				}
			}
		}
	})

	t.Run("reverse_tg", func(t *testing.T) {
		x := make([]byte, 4*128)
		for i := 0; i < 128; i++ {
			binary.LittleEndian.PutUint32(x[4*i:], uint32(i))
		}
		res, err := m.Run("reverse_tg", Launch{Size: [3]int{2, 1, 1}, Group: [3]int{64, 1, 1},
			Buffers: []Buffer{{Index: 0, Data: x, Align: 4}, {Index: 1, Data: make([]byte, 4*128), Writable: true, Align: 4}}})
		if err != nil {
			t.Fatal(err)
		}
		y := res.Buffers[1]
		for i := 0; i < 128; i++ {
			want := uint32(i/64*64 + 63 - i%64)
			if got := binary.LittleEndian.Uint32(y[4*i:]); got != want {
				t.Fatalf("y[%d] = %d, want %d", i, got, want)
			}
		}
	})
}

// TestCatchesBugs runs the broken kernels of bad.metal: each must fail with
// the right diagnosis.
func TestCatchesBugs(t *testing.T) {
	m := build(t, "bad.metal")
	u32 := func(n int) []byte {
		b := make([]byte, 4*n)
		for i := 0; i < n; i++ {
			binary.LittleEndian.PutUint32(b[4*i:], uint32(i))
		}
		return b
	}
	cases := []struct {
		kernel string
		l      Launch
		want   string
	}{
		{"missing_barrier", Launch{Size: [3]int{1, 1, 1}, Group: [3]int{64, 1, 1},
			Buffers: []Buffer{{Index: 0, Data: u32(64), Align: 4}, {Index: 1, Data: make([]byte, 256), Writable: true, Align: 4}}},
			"result depends on the thread schedule"},
		{"off_by_one", Launch{Size: [3]int{3, 1, 1}, Group: [3]int{32, 1, 1},
			Buffers: []Buffer{{Index: 0, Data: argsN(64, 0), Align: 4}, {Index: 1, Data: make([]byte, 256), Align: 4}, {Index: 2, Data: make([]byte, 256), Writable: true, Align: 4}}},
			"outside buffer(1), offset 256 of 256 bytes in thread_position_in_grid (64,0,0)"},
		{"early_return", Launch{Size: [3]int{1, 1, 1}, Group: [3]int{64, 1, 1},
			Buffers: []Buffer{{Index: 0, Data: argsN(40, 0), Align: 4}, {Index: 1, Data: make([]byte, 256), Writable: true, Align: 4}}},
			"threadgroup_barrier at line 34:5 reached by 40 threads while 24 threads of the group had returned"},
		{"writes_input", Launch{Size: [3]int{1, 1, 1}, Group: [3]int{8, 1, 1},
			Buffers: []Buffer{{Index: 0, Data: make([]byte, 32), Align: 4}}},
			"write to read-only buffer(0)"},
		{"divergent_simd", Launch{Size: [3]int{1, 1, 1}, Group: [3]int{32, 1, 1},
			Buffers: []Buffer{{Index: 0, Data: make([]byte, 128), Writable: true, Align: 4}}},
			"wait at different simd operations"},
		{"endless", Launch{Size: [3]int{1, 1, 1}, Group: [3]int{1, 1, 1}, Timeout: 2 * time.Second,
			Buffers: []Buffer{{Index: 0, Data: argsN(1, 0), Align: 4}, {Index: 1, Data: make([]byte, 4), Writable: true, Align: 4}}},
			"watchdog"},
	}
	for _, c := range cases {
		t.Run(c.kernel, func(t *testing.T) {
			_, err := m.Run(c.kernel, c.l)
			var ke *KernelError
			if !errors.As(err, &ke) {
				t.Fatalf("%s ran (err %v); want a kernel error containing %q", c.kernel, err, c.want)
			}
			if !strings.Contains(ke.Msg, c.want) {
				t.Fatalf("%s: %q, want it to contain %q", c.kernel, ke.Msg, c.want)
			}
		})
	}

	// Uninitialised threadgroup memory reads as NaN (0xFF bytes).
	res, err := m.Run("uninitialised", Launch{Size: [3]int{1, 1, 1}, Group: [3]int{32, 1, 1},
		Buffers: []Buffer{{Index: 0, Data: make([]byte, 128), Writable: true, Align: 4}}})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range f32s(res.Buffers[0]) {
		if !math.IsNaN(float64(v)) {
			t.Fatalf("y[%d] = %g read from unwritten threadgroup memory; want NaN", i, v)
		}
	}
}
