package computetest

import (
	"strings"
	"testing"

	"h3studio/engine/compute"
	"h3studio/engine/compute/cpu"
)

// mutant is a CPU backend with one planted bug.
type mutant struct {
	*cpu.Backend
	bug string
}

func (m *mutant) Add(dst, a, b *compute.Tensor) {
	m.Backend.Add(dst, a, b)
	raw := cpu.Bytes(dst)
	switch m.bug {
	case "ulp": // one element one unit off
		raw[0] ^= 1
	case "overrun": // writes the element after the view
		buf, off := dst.Buffer()
		past := compute.NewTensor(dst.DType(), compute.Shape{1}, buf, off+dst.Bytes())
		cpu.Bytes(past)[0] ^= 0x40
	case "input": // scribbles on an input
		cpu.Bytes(a)[1] ^= 0x10
	case "skip": // leaves the last element unwritten
		for i := len(raw) - dst.DType().Size(); i < len(raw); i++ {
			raw[i] = 0xFF
		}
	}
}

func (m *mutant) MatMul(dst, x, w, bias *compute.Tensor) {
	if m.bug != "matmul" {
		m.Backend.MatMul(dst, x, w, bias)
		return
	}
	// Reads w as if it were stored transposed [K, N]: a classic layout bug.
	wt, _ := m.Backend.Alloc(w.DType(), w.Dim(1), w.Dim(0))
	m.Backend.Transpose(wt, w, 1, 0)
	m.Backend.MatMul(dst, x, wt.Reshape(w.Dim(0), w.Dim(1)), bias)
}

func (m *mutant) RMSNormModulate(dst, x *compute.Tensor, p compute.NormModulation) {
	switch m.bug {
	case "fused-ulp": // the fused result one unit off
		m.Backend.RMSNormModulate(dst, x, p)
		cpu.Bytes(dst)[0] ^= 1
	case "single-rounding": // h3.c's fused rounding: no rounding between the norm and the modulation
		n, _ := m.Backend.Alloc(compute.F32, x.Shape()...)
		m.Backend.RMSNorm(n, x, p.Weight, p.Eps)
		m.Backend.Modulate(dst, n, p.Table, p.Rows, p.ShiftCol, p.ScaleCol)
	default:
		m.Backend.RMSNormModulate(dst, x, p)
	}
}

func find(t *testing.T, name string) Case {
	for _, c := range Cases(Options{}) {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no case %s", name)
	return Case{}
}

// TestSuiteCatchesBugs makes sure each check of the suite can fail.
func TestSuiteCatchesBugs(t *testing.T) {
	ref := cpu.New(cpu.Options{Threads: 1})
	for _, tc := range []struct {
		bug, kase, want string
	}{
		{"ulp", "Add/bf16_bf16", "outside the bound"},
		{"overrun", "Add/f32_f32", "wrote outside the output view"},
		{"input", "Add/f16_f32", "changed input 0"},
		{"skip", "Add/f32_bf16", "outside the bound"},
		{"matmul", "MatMul/f32_f32", "outside the bound"},
		{"fused-ulp", "RMSNormModulate/bf16_bf16/unfused", "outside the bound"},
		{"single-rounding", "RMSNormModulate/bf16_bf16/unfused", "outside the bound"},
	} {
		err := Check(ref, &mutant{Backend: cpu.New(cpu.Options{}), bug: tc.bug}, find(t, tc.kase))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("bug %q on %s: got %v, want an error containing %q", tc.bug, tc.kase, err, tc.want)
		}
	}
	// And the unmodified backend passes those cases.
	for _, k := range []string{"Add/bf16_bf16", "MatMul/f32_f32", "RMSNormModulate/bf16_bf16/unfused"} {
		if err := Check(ref, cpu.New(cpu.Options{}), find(t, k)); err != nil {
			t.Errorf("%s: %v", k, err)
		}
	}
}

// TestULP pins the spacing function the bounds use.
func TestULP(t *testing.T) {
	for _, c := range []struct {
		dt   compute.DType
		v    float64
		want float64
	}{
		{compute.F32, 1, 0x1p-23}, {compute.F32, 1.5, 0x1p-23}, {compute.F32, 2, 0x1p-22}, {compute.F32, 0, 0x1p-149},
		{compute.BF16, 1, 0x1p-7}, {compute.BF16, -3, 0x1p-6}, {compute.F16, 1, 0x1p-10}, {compute.F16, 1e-6, 0x1p-24},
	} {
		if got := ulp(c.dt, c.v); got != c.want {
			t.Errorf("ulp(%v, %g) = %g, want %g", c.dt, c.v, got, c.want)
		}
	}
}
