//go:build linux

package metal_test

import (
	"context"
	"flag"
	"os"
	"sort"
	"strings"
	"testing"

	"h3studio/engine/compute"
	"h3studio/engine/compute/computetest"
	"h3studio/engine/compute/metal"
	"h3studio/engine/compute/metal/mslcpu"
	"h3studio/engine/safetensors"
	"h3studio/shaders"
)

// emulated is a Metal backend with o over a device whose kernels package
// mslcpu runs on the CPU (with do); the test is skipped where there is no
// C++ toolchain.
func emulated(t *testing.T, do mslcpu.DeviceOptions, o metal.Options) (*mslcpu.Device, *metal.Backend) {
	t.Helper()
	dev, err := mslcpu.NewDevice(mslcpu.Require(t), shaders.Files(), do)
	if err != nil {
		t.Fatal(err)
	}
	return dev, metal.New(dev, o)
}

// TestConformanceEmulated runs the conformance suite on the Metal backend
// with the kernels executed on the CPU by package mslcpu, and takes the
// kernel census: every entry point of shaders/*.metal must be dispatched by at
// least one passing case. With H3_KERNEL_CENSUS=path it writes the census
// there (tools/kernelcensus prints it for `make test-kernels`).
func TestConformanceEmulated(t *testing.T) {
	dev, b := emulated(t, mslcpu.DeviceOptions{}, metal.Options{})
	tested := map[string]int{}
	computetest.RunAll(t, b, computetest.Options{AfterCase: func(name string, passed bool) {
		for k, n := range dev.Dispatched() {
			if passed {
				tested[k] += n
			}
		}
	}})
	sw, el := dev.Cost()
	t.Logf("emulation: %d fiber switches, %v in the kernel runtime; %d dispatches, %d CPU fallbacks",
		sw, el, b.Stats().Dispatches, b.Stats().CPUFallbacks)
	if p := os.Getenv("H3_KERNEL_CENSUS"); p != "" {
		var lines []string
		for _, e := range shaders.EntryPoints() {
			lines = append(lines, e.Name+" "+itoa(tested[e.Name]))
		}
		if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if f := flag.Lookup("test.run"); f != nil && strings.Contains(f.Value.String(), "/") {
		t.Logf("census skipped: only some cases ran (-run %s)", f.Value.String())
		return
	}
	var missing []string
	for _, e := range shaders.EntryPoints() {
		if tested[e.Name] == 0 {
			missing = append(missing, e.Name+" ("+e.File+":"+itoa(e.Line)+")")
		}
	}
	sort.Strings(missing)
	for _, m := range missing {
		t.Errorf("kernel census: %s has no passing emulated test", m)
	}
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

// TestSplitDispatchesEmulated runs the attention and product cases with a
// tiny dispatch budget, so that attention runs in one dispatch per query tile
// and products (dense and quantized) in runs of 32 rows: the results must
// not change.
func TestSplitDispatchesEmulated(t *testing.T) {
	dev, b := emulated(t, mslcpu.DeviceOptions{}, metal.Options{DispatchBudget: 2e4})
	split := map[string]int{} // dispatches of the case's own kernel
	computetest.RunAll(t, b, computetest.Options{Filter: "^(Attention/d64/f32_f32|Attention/d128_causal/f16_f16|MatMul/f32_f32|MatMul/q4/f32_f32)$",
		AfterCase: func(name string, passed bool) {
			for k, n := range dev.Dispatched() {
				if strings.HasPrefix(k, "kernel_attention") || strings.HasPrefix(k, "kernel_matmul") || strings.HasPrefix(k, "kernel_qmatmul") {
					split[name] += n
				}
			}
		}})
	// 37 and 40 queries are two tiles of 32; 37 rows are two runs of 32.
	for name, want := range map[string]int{"Attention/d64/f32_f32": 2, "Attention/d128_causal/f16_f16": 2, "MatMul/f32_f32": 2, "MatMul/q4/f32_f32": 2} {
		if split[name] != want {
			t.Errorf("%s: %d dispatches, want %d (split by the budget): %v", name, split[name], want, split)
		}
	}
}

// TestMappingLifecycleEmulated: a checkpoint bound with zero-copy views is
// registered with the device once, and closing it unregisters it (after the
// work reading it) before the file is unmapped, so no device view outlives
// its mapping.
func TestMappingLifecycleEmulated(t *testing.T) {
	dev, b := emulated(t, mslcpu.DeviceOptions{}, metal.Options{})
	vals := make([]float32, 4096)
	for i := range vals {
		vals[i] = float32(i)
	}
	f, bind := metal.WriteCheckpoint(t, b, safetensors.F32("w", compute.F32, compute.Shape{64, 64}, vals))
	w := bind.Tensor("w", 64, 64)
	if err := b.Sync(context.Background()); err != nil || w == nil {
		t.Fatalf("bind: %v", err)
	}
	if dev.HostBytes() == 0 {
		t.Fatal("the shard was not registered with the device (the zero-copy path is not exercised)")
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if n := dev.HostBytes(); n != 0 {
		t.Fatalf("%d bytes of host regions still registered after the checkpoint closed", n)
	}
}
