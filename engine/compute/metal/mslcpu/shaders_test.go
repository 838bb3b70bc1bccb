//go:build linux

package mslcpu

import (
	"runtime"
	"testing"

	"h3studio/shaders"
)

// TestShadersBuild builds every shader file of the project and checks the
// concatenated library (as the Metal backend compiles it) for clashes.
func TestShadersBuild(t *testing.T) {
	tc := Require(t)
	lib, err := tc.BuildLibrary(shaders.Files(), runtime.GOMAXPROCS(0))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, e := range shaders.EntryPoints() {
		want[e.Name] = true
	}
	got := lib.Names()
	for _, n := range got {
		if !want[n] {
			t.Errorf("the harness found entry point %s, shaders.EntryPoints did not", n)
		}
		delete(want, n)
	}
	for n := range want {
		t.Errorf("shaders.EntryPoints lists %s, the harness found no such kernel", n)
	}
	if err := tc.CheckLibrary(shaders.Source()); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d entry points in %d files", len(got), len(lib.Modules))
}
