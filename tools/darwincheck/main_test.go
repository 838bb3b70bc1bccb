package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// module writes a throw-away module with the given files.
func module(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	files["go.mod"] = "module example.com/planted\n\ngo 1.26\n"
	for name, src := range files {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const common = `package gpu

// Device is what both platforms provide.
type Device struct{ Name string; Memory uint64 }
`

const goodDarwin = `//go:build darwin

package gpu

/*
#cgo LDFLAGS: -framework Metal
#include <stdint.h>
static uint64_t recommended(void) { return 1; }
*/
import "C"

import "unsafe"

// Open reads the Metal device (cgo: C references are not checked).
func Open() Device {
	var p unsafe.Pointer
	_ = p
	return Device{Name: "Apple GPU", Memory: uint64(C.recommended())}
}
`

const other = `//go:build !darwin

package gpu

func Open() Device { return Device{Name: "cpu"} }
`

func runIn(t *testing.T, dir string, args ...string) (int, string) {
	t.Helper()
	t.Setenv("GOWORK", "off")
	t.Setenv("GOFLAGS", "")
	var out, errb bytes.Buffer
	st := run(append([]string{"-C", dir}, args...), &out, &errb)
	return st, out.String() + errb.String()
}

func TestGoodModule(t *testing.T) {
	dir := module(t, map[string]string{"gpu/gpu.go": common, "gpu/gpu_darwin.go": goodDarwin, "gpu/gpu_other.go": other})
	st, out := runIn(t, dir, "./...")
	if st != 0 || !strings.Contains(out, "1 only in this target") {
		t.Fatalf("exit %d:\n%s", st, out)
	}
}

// A type error in darwin-only code is found, naming the file and line,
// while a host `go vet` would not see the file at all.
func TestPlantedErrors(t *testing.T) {
	bad := strings.Replace(goodDarwin, `Name: "Apple GPU"`, `Name: 42`, 1)
	dir := module(t, map[string]string{
		"gpu/gpu.go": common, "gpu/gpu_darwin.go": bad, "gpu/gpu_other.go": other,
		"gpu/extra_darwin.go":    "package gpu\n\nfunc Extra() string { return Open().Memory }\n",
		"gpu/gpu_darwin_test.go": "package gpu\n\nimport \"testing\"\n\nfunc TestOpen(t *testing.T) { var n int = Open().Name; _ = n }\n",
	})
	st, out := runIn(t, dir, "./...")
	if st != 1 {
		t.Fatalf("exit %d, want 1:\n%s", st, out)
	}
	for _, want := range []string{
		"gpu_darwin.go:18:", "cannot use 42", // the planted field type error
		"extra_darwin.go:3:", "Open().Memory", // a whole darwin-only file
		"gpu_darwin_test.go:5:", // a darwin-only test
		"type errors: 3 in the darwin/arm64 build",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// Without tests, the test file's error is not reported.
	st, out = runIn(t, dir, "-test=false", "./...")
	if st != 1 || strings.Contains(out, "gpu_darwin_test.go") || !strings.Contains(out, "2 in the darwin/arm64 build") {
		t.Errorf("-test=false: exit %d:\n%s", st, out)
	}
}

func TestBrokenPackage(t *testing.T) {
	dir := module(t, map[string]string{"p/p_darwin.go": "package p\n\nfunc F( {\n"})
	st, out := runIn(t, dir, "./...")
	if st != 1 || !strings.Contains(out, "p_darwin.go") {
		t.Fatalf("syntax error: exit %d:\n%s", st, out)
	}
	if st, out := runIn(t, t.TempDir(), "./..."); st == 0 || !strings.Contains(out, "main module") {
		t.Errorf("no module: exit %d:\n%s", st, out)
	}
}
