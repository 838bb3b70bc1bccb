package quant

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"h3studio/engine/compute"
	"h3studio/engine/testkit"
)

// bf16Matrix is a [out, in] matrix of BF16-representable values (the DiT's
// weights are BF16), with a few constant and one-signed groups.
func bf16Matrix(out, in int, seed uint64) []float32 {
	rng := rand.New(rand.NewPCG(seed, 3))
	w := make([]float32, out*in)
	for i := range w {
		w[i] = compute.RoundBF16(float32(rng.NormFloat64() * 0.05))
	}
	for j := 0; j < 64 && j < in; j++ {
		w[j] = 0.25 // a constant group
		if in >= 128 {
			w[64+j] = compute.RoundBF16(float32(0.5 + 0.001*float64(j))) // one-signed
		}
	}
	return w
}

func TestRoundTripWithinStep(t *testing.T) {
	for _, f := range []compute.QuantFormat{compute.Int8, compute.Int4} {
		const out, in = 5, 256
		w := bf16Matrix(out, in, 1)
		rows, err := Quantize(w, out, in, f)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Dequantize(rows, out, in, f)
		if err != nil {
			t.Fatal(err)
		}
		rw := f.RowWords(in)
		for r := 0; r < out; r++ {
			for g := 0; g < f.Groups(in); g++ {
				grp := w[r*in+g*f.GroupSize : r*in+(g+1)*f.GroupSize]
				bound := ErrorBound(f, rows[r*rw:(r+1)*rw], in, g, grp)
				for j := 0; j < f.GroupSize; j++ {
					i := r*in + g*f.GroupSize + j
					if d := math.Abs(float64(got[i] - w[i])); d > bound {
						t.Fatalf("%s row %d group %d: |%g − %g| = %g > %g", f, r, g, got[i], w[i], d, bound)
					}
				}
			}
		}
		// The constant group is exact.
		for j := 0; j < 64; j++ {
			if got[j] != 0.25 {
				t.Fatalf("%s: constant group element %d = %g, want 0.25", f, j, got[j])
			}
		}
	}
}

func TestPacking(t *testing.T) {
	// Codes 0..15 repeated: with 4 bits, word 0 holds codes 0..7 at bits 0, 4, …
	in := 64
	w := make([]float32, in)
	for j := range w {
		w[j] = float32(j%16 - 15) // the low end has the larger magnitude: bias −15, scale 1
	}
	rows, err := Quantize(w, 1, in, compute.Int4)
	if err != nil {
		t.Fatal(err)
	}
	if rows[0] != 0x76543210 || rows[1] != 0xfedcba98 {
		t.Fatalf("code words %08x %08x, want 76543210 fedcba98", rows[0], rows[1])
	}
	s, b := compute.Int4.GroupParams(rows, in, 0)
	if s != 1 || b != -15 {
		t.Fatalf("scale %g bias %g, want 1 −15", s, b)
	}
	for j := range w {
		if c := compute.Int4.Code(rows, j); c != uint32(j%16) {
			t.Fatalf("code %d = %d", j, c)
		}
	}
}

func TestMLXForm(t *testing.T) {
	const out, in = 3, 128
	rows, _ := Quantize(bf16Matrix(out, in, 2), out, in, compute.Int8)
	m := ToMLX(rows, out, in, compute.Int8)
	if len(m.Weight) != out*in/4 || len(m.Scales) != out*2 {
		t.Fatalf("MLX shapes %d %d", len(m.Weight), len(m.Scales))
	}
	back, err := FromMLX(m, out, in, compute.Int8)
	if err != nil {
		t.Fatal(err)
	}
	for i := range rows {
		if rows[i] != back[i] {
			t.Fatalf("word %d differs after the MLX round trip", i)
		}
	}
	m.Scales = m.Scales[1:]
	if _, err := FromMLX(m, out, in, compute.Int8); err == nil || !strings.Contains(err.Error(), "MLX tensors") {
		t.Fatalf("short scales: %v", err)
	}
}

func TestBadShapes(t *testing.T) {
	if _, err := Quantize(make([]float32, 100), 1, 100, compute.Int4); err == nil {
		t.Error("100 inputs (not whole groups of 64) accepted")
	}
	if _, err := Quantize(make([]float32, 64), 1, 64, compute.QuantFormat{Bits: 3, GroupSize: 64}); err == nil {
		t.Error("3 bits accepted")
	}
	if _, err := Quantize(make([]float32, 63), 1, 64, compute.Int4); err == nil {
		t.Error("63 values for [1, 64] accepted")
	}
}

// TestAgainstMLX quantizes the same BF16 matrices with mlx.core.quantize
// (the CPU build of MLX from PyPI) and requires identical code words,
// scales and biases, and identical dequantized values.
func TestAgainstMLX(t *testing.T) {
	py := testkit.PythonPeer(t, "mlx.core")
	dir := t.TempDir()
	const out, in = 16, 512
	for _, f := range []compute.QuantFormat{compute.Int8, compute.Int4} {
		w := bf16Matrix(out, in, 4)
		raw := make([]byte, 4*len(w))
		for i, v := range w {
			binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(v))
		}
		src := filepath.Join(dir, "w.f32")
		if err := os.WriteFile(src, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		script := `
import sys, numpy as np, mlx.core as mx
src, out, inn, bits, gs, dst = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
w = mx.array(np.fromfile(src, dtype=np.float32).reshape(out, inn)).astype(mx.bfloat16)
q, s, b = mx.quantize(w, group_size=gs, bits=bits)
d = mx.dequantize(q, s, b, group_size=gs, bits=bits).astype(mx.float32)
with open(dst, "wb") as fh:
    fh.write(np.array(q).astype("<u4").tobytes())
    fh.write(np.array(s.view(mx.uint16)).astype("<u2").tobytes())
    fh.write(np.array(b.view(mx.uint16)).astype("<u2").tobytes())
    fh.write(np.array(d).astype("<f4").tobytes())
`
		dst := filepath.Join(dir, "q.bin")
		cmd := exec.Command(py, "-c", script, src, itoa(out), itoa(in), itoa(f.Bits), itoa(f.GroupSize), dst)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("mlx: %v\n%s", err, b)
		}
		got, err := os.ReadFile(dst)
		if err != nil {
			t.Fatal(err)
		}
		cw, ng := out*f.CodeWords(in), out*f.Groups(in)
		if len(got) != 4*cw+4*ng+4*out*in {
			t.Fatalf("mlx wrote %d bytes", len(got))
		}
		var m MLX
		for i := 0; i < cw; i++ {
			m.Weight = append(m.Weight, binary.LittleEndian.Uint32(got[4*i:]))
		}
		off := 4 * cw
		for i := 0; i < ng; i++ {
			m.Scales = append(m.Scales, binary.LittleEndian.Uint16(got[off+2*i:]))
			m.Biases = append(m.Biases, binary.LittleEndian.Uint16(got[off+2*ng+2*i:]))
		}
		off += 4 * ng
		rows, err := Quantize(w, out, in, f)
		if err != nil {
			t.Fatal(err)
		}
		ours := ToMLX(rows, out, in, f)
		codes, params := 0, 0
		for i := range m.Weight {
			if m.Weight[i] != ours.Weight[i] {
				codes++
			}
		}
		for i := range m.Scales {
			if m.Scales[i] != ours.Scales[i] || m.Biases[i] != ours.Biases[i] {
				params++
			}
		}
		if codes != 0 || params != 0 {
			t.Errorf("%s: %d of %d code words and %d of %d (scale, bias) pairs differ from mlx.core.quantize", f, codes, cw, params, ng)
		}
		theirs, _ := FromMLX(m, out, in, f)
		bad := 0
		rw := f.RowWords(in)
		for i := 0; i < out*in; i++ {
			want := math.Float32frombits(binary.LittleEndian.Uint32(got[off+4*i:]))
			row := theirs[(i/in)*rw : (i/in+1)*rw]
			s, b := f.GroupParams(row, in, (i%in)/f.GroupSize)
			// mlx.dequantize computes in BF16: the product and the sum round.
			if v := compute.RoundBF16(compute.RoundBF16(float32(f.Code(row, i%in))*s) + b); v != want {
				bad++
			}
		}
		if bad != 0 {
			t.Errorf("%s: %d of %d dequantized values differ from mlx.core.dequantize (BF16)", f, bad, out*in)
		}
	}
}

func itoa(n int) string {
	s := ""
	if n == 0 {
		return "0"
	}
	for ; n > 0; n /= 10 {
		s = string(rune('0'+n%10)) + s
	}
	return s
}
