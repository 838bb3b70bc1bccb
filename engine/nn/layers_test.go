package nn

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"h3studio/engine/compute"
	"h3studio/engine/compute/cpu"
)

func upload(t *testing.T, b compute.Backend, v []float32, shape ...int) *compute.Tensor {
	t.Helper()
	x, err := compute.FromFloat32(b, compute.F32, compute.Shape(shape), v)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func download(t *testing.T, x *compute.Tensor) []float32 {
	t.Helper()
	v, err := compute.ToFloat32(x)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func arange(n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(i)
	}
	return v
}

// TestSplitHeads checks qkv[c, h, s, d] against the element each layout
// stores it at.
func TestSplitHeads(t *testing.T) {
	b := cpu.New(cpu.Options{})
	const S, H, D = 3, 2, 4
	for _, tc := range []struct {
		name   string
		layout compute.QKVLayout
		shape  []int
		at     func(c, h, s, d int) int
	}{
		{"interleaved", compute.QKVInterleaved, []int{S, H, 3, D}, func(c, h, s, d int) int { return ((s*H+h)*3+c)*D + d }},
		{"planar", compute.QKVPlanar, []int{3, S, H, D}, func(c, h, s, d int) int { return ((c*S+s)*H+h)*D + d }},
		{"packed", compute.QKVPacked, []int{S, 3, H, D}, func(c, h, s, d int) int { return ((s*3+c)*H+h)*D + d }},
	} {
		p := upload(t, b, arange(3*S*H*D), tc.shape...)
		qkv := compute.MustAlloc(b, compute.F32, 3, H, S, D)
		SplitHeads(b, qkv, p, tc.layout)
		got := download(t, qkv)
		for c := 0; c < 3; c++ {
			for h := 0; h < H; h++ {
				for s := 0; s < S; s++ {
					for d := 0; d < D; d++ {
						if g, w := got[((c*H+h)*S+s)*D+d], float32(tc.at(c, h, s, d)); g != w {
							t.Fatalf("%s: qkv[%d,%d,%d,%d] = %v, want %v", tc.name, c, h, s, d, g, w)
						}
					}
				}
			}
		}
		b.Free(p, qkv)
	}
}

// TestGatedMLP checks Down(silu(gate)·value) against a host computation
// for both half orders.
func TestGatedMLP(t *testing.T) {
	b := cpu.New(cpu.Options{})
	const S, In, F, Out = 2, 3, 2, 2
	x := []float32{0.5, -1, 2, 1.5, 0.25, -0.75}
	wu := []float32{0.1, -0.2, 0.3, 0.4, 0.5, -0.6, -0.7, 0.8, 0.9, 1.0, -1.1, 1.2} // [2F, In]
	wd := []float32{0.3, -0.1, 0.2, 0.7}                                            // [Out, F]
	bd := []float32{0.05, -0.05}
	for _, gateFirst := range []bool{true, false} {
		m := GatedMLP{
			Up:        Linear{W: upload(t, b, wu, 2*F, In)},
			Down:      Linear{W: upload(t, b, wd, Out, F), B: upload(t, b, bd, Out)},
			GateFirst: gateFirst,
			Act:       compute.SiLU,
		}
		xt := upload(t, b, x, S, In)
		dst := compute.MustAlloc(b, compute.F32, S, Out)
		up := compute.MustAlloc(b, compute.F32, S, 2*F)
		gated := compute.MustAlloc(b, compute.F32, S, F)
		m.Forward(b, dst, xt, up, gated)
		got := download(t, dst)
		for s := 0; s < S; s++ {
			u := make([]float64, 2*F)
			for o := range u {
				for i := 0; i < In; i++ {
					u[o] += float64(x[s*In+i]) * float64(wu[o*In+i])
				}
			}
			gate, val := u[:F], u[F:]
			if !gateFirst {
				gate, val = val, gate
			}
			for o := 0; o < Out; o++ {
				want := float64(bd[o])
				for f := 0; f < F; f++ {
					g := gate[f] / (1 + math.Exp(-gate[f]))
					want += g * val[f] * float64(wd[o*F+f])
				}
				if d := math.Abs(float64(got[s*Out+o]) - want); d > 1e-5 {
					t.Errorf("gateFirst=%v: y[%d,%d] = %v, want %v", gateFirst, s, o, got[s*Out+o], want)
				}
			}
		}
		b.Free(append(m.Tensors(), xt, dst, up, gated)...)
	}
}

// TestQKNormRoPERefusesPacked: the packed layout is split by SplitHeads
// only; the fused kernel's argument check names it instead of reading the
// projection as another layout.
func TestQKNormRoPERefusesPacked(t *testing.T) {
	b := cpu.New(cpu.Options{})
	const S, H, D = 2, 1, 4
	qkv := compute.MustAlloc(b, compute.F32, S, 3, H, D)
	q, k, v := compute.MustAlloc(b, compute.F32, H, S, D), compute.MustAlloc(b, compute.F32, H, S, D), compute.MustAlloc(b, compute.F32, H, S, D)
	defer b.Free(qkv, q, k, v)
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "packed layout is not fused") {
			t.Errorf("QKNormRoPE over a packed projection: panic %v, want the packed layout refused", r)
		}
	}()
	b.QKNormRoPE(q, k, v, qkv, compute.QKNormRoPEParams{Layout: compute.QKVPacked, Eps: 1e-6})
}
