package compute_test

import (
	"fmt"
	"strings"
	"testing"

	"h3studio/engine/compute"
	"h3studio/engine/compute/cpu"
)

// TestQKNormRoPERefusesPacked: the packed layout is split by nn.SplitHeads
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
