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
}

const ruleKernel = `# 1 "plant.metal"
#include <metal_stdlib>
using namespace metal;

inline void acc_add(SPACE float& s, float v) { s += v; }

template <typename T>
kernel void k_plant(device const T* x [[buffer(0)]],
                    device float* acc [[buffer(BUF)]],
                    GRID tg [[threadgroup_position_in_grid]],
                    uint2 tpg [[threads_per_threadgroup]],
                    uint tid [[thread_index_in_threadgroup]]) {
    threadgroup float part[32];
    part[tid] = float(x[tid]);
    acc_add(ARG, part[0]);
}
template [[host_name("k_plant_f32")]] [[kernel]] decltype(k_plant<float>) k_plant<float>;
`

// TestMacRulesPlanted plants each rule's defect in a small kernel and sees it
// caught, naming the kernel or helper; the correct version passes.
func TestMacRulesPlanted(t *testing.T) {
	good := map[string]string{"SPACE": "device", "BUF": "1", "GRID": "uint2", "ARG": "acc[tid]"}
	cases := []struct {
		name, key, val, want string
	}{
		{"control", "", "", ""},
		{"grid width", "GRID", "uint", "kernel k_plant: grid attributes disagree in vector width"},
		{"buffer twice", "BUF", "0", "[[buffer(0)]] bound twice"},
		{"buffer index", "BUF", "31", "Metal has buffer indices 0…30"},
		{"device to thread", "SPACE", "thread", "k_plant: address spaces disagree: passes acc[tid] (device, through acc) to acc_add's thread parameter s"},
		{"threadgroup to device", "ARG", "part[1]", "passes part[1] (threadgroup, through part) to acc_add's device parameter s"},
		{"no address space", "SPACE", "", "helper acc_add: pointer or reference parameter s names no address space"},
	}
	for _, c := range cases {
		src := ruleKernel
		for k, v := range good {
			if k == c.key {
				v = c.val
			}
			src = strings.ReplaceAll(src, k, v)
		}
		_, err := Translate(src)
		if c.want == "" {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
		}
	}
}
