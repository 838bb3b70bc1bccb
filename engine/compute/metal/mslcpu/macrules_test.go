//go:build linux

package mslcpu

import (
	"strings"
	"testing"

	"h3studio/shaders"
)

// TestMacRulesShaders: the project's library passes the MSL rules the
// harness would otherwise not see (grid-attribute widths, buffer indices,
// address spaces). make check-mac runs it.
func TestMacRulesShaders(t *testing.T) {
	tc := Require(t)
	if !strings.HasPrefix(shaders.Source(), shaders.Prelude) {
		t.Errorf("shaders.Source does not start with #include <metal_stdlib>")
	}
	if err := tc.CheckRules(shaders.Source()); err != nil {
		t.Fatal(err)
	}
	if err := tc.CheckAddressSpaces(shaders.Source()); err != nil {
		t.Fatal(err)
	}
}

// TestMacAddressSpacesPlanted: C++ for OpenCL rejects a device pointer
// assigned to a thread one (which the token scan does not follow) and a
// device element bound to a helper's thread reference; the correct version
// passes.
func TestMacAddressSpacesPlanted(t *testing.T) {
	tc := Require(t)
	const src = `#include <metal_stdlib>
using namespace metal;

inline void acc_add(SPACE float& s, float v) { s += v; }

kernel void k_plant(device const float* x [[buffer(0)]],
                    device float* acc [[buffer(1)]],
                    uint tid [[thread_position_in_grid]]) {
    PTR float* p = acc + tid;
    USE;
}
`
	for _, c := range []struct{ space, ptr, use, want string }{
		{"device", "device", "acc_add(*p, x[tid])", ""},
		{"device", "thread", "*p += x[tid]", "plant.metal:9:"},
		{"thread", "device", "acc_add(acc[tid], x[tid])", "plant.metal:10:"},
	} {
		s := strings.NewReplacer("SPACE", c.space, "PTR", c.ptr, "USE", c.use).Replace(src)
		err := tc.CheckAddressSpaces("#line 1 \"plant.metal\"\n" + s)
		if c.want == "" {
			if err != nil {
				t.Errorf("control: %v", err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s/%s: got %v, want an error at %s", c.space, c.ptr, err, c.want)
		}
	}
}
