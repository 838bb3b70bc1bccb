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

// bindingPlant is a darwin-only file sending Metal messages; each %s is
// replaced by one send.
const bindingPlant = `//go:build darwin

package gpu

import (
	"unsafe"

	"github.com/progrium/darwinkit/macos/metal"
	"github.com/progrium/darwinkit/objc"
)

func Pipeline(enc metal.ComputeCommandEncoderObject, ps metal.ComputePipelineStateObject, buf metal.BufferObject, opts metal.CompileOptions, dev metal.DeviceObject) {
	_ = unsafe.Pointer(nil)
	SEND
}
`

const bindingTable = "MTLCompileOptions setMathMode: NSInteger 15.0\nMTLDevice newResidencySetWithDescriptor:error: id,NSError** 15.0\n"

// TestBindingLint plants each defect class of the binding lint in a module
// that uses darwinkit and sees it caught, naming the function; the correct
// sends pass.
func TestBindingLint(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks darwinkit (seconds)")
	}
	sum, err := os.ReadFile("../../go.sum")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ name, send, want, table string }{
		{"raw sends", `objc.Call[objc.Void](enc, objc.Sel("setComputePipelineState:"), ps)
	objc.Call[objc.Void](enc, objc.Sel("setBuffer:offset:atIndex:"), buf, uint(0), uint(1))
	if opts.RespondsToSelector(objc.Sel("setMathMode:")) {
		objc.Call[objc.Void](opts, objc.Sel("setMathMode:"), int64(0))
	}`, "", ""},
		{"wrapper", `enc.SetComputePipelineState(ps)`, "(in Pipeline): metal.ComputeCommandEncoderObject.SetComputePipelineState passes its argument through objc.WrapAsProtocol", ""},
		{"wrapper of a buffer", `enc.SetBufferOffsetAtIndex_(buf, 0, 1)`, "SetBufferOffsetAtIndex_ passes its argument through objc.WrapAsProtocol", ""},
		{"arity", `objc.Call[objc.Void](enc, objc.Sel("setBuffer:offset:atIndex:"), buf, uint(0))`, `"setBuffer:offset:atIndex:" (3 colons) passes 2 arguments`, ""},
		{"unknown selector", `objc.Call[objc.Void](enc, objc.Sel("setBufferz:"), buf)`, `"setBufferz:": darwinkit v0.5.0 does not know this selector for MTLComputeCommandEncoder`, ""},
		{"argument kind", `objc.Call[objc.Void](enc, objc.Sel("setBuffer:offset:atIndex:"), buf, int32(0), uint(1))`, "argument 2 is int32(0) (int4), the ObjC parameter wants int8", ""},
		{"unguarded", `objc.Call[objc.Void](opts, objc.Sel("setMathMode:"), int64(0))`, `"setMathMode:" needs macOS 15.0 (the app's minimum is 14.0)`, ""},
		{"table kind", `if opts.RespondsToSelector(objc.Sel("setMathMode:")) {
		objc.Call[objc.Void](opts, objc.Sel("setMathMode:"), true)
	}`, "argument 1 is true (bool), the ObjC parameter wants int8 (the table, line 1", ""},
		// A table row for a class darwinkit binds corrects darwinkit's types: the same send that darwinkit's
		// wrapper types reject passes, and a send against the row's types fails naming the table.
		{"table corrects darwinkit", `objc.Call[objc.Void](enc, objc.Sel("setBuffer:offset:atIndex:"), buf, int32(0), uint(1))`, "",
			bindingTable + "MTLComputeCommandEncoder setBuffer:offset:atIndex: id,int32_t,NSUInteger 10.11\n"},
		{"table corrects darwinkit, wrong kind", `objc.Call[objc.Void](enc, objc.Sel("setBuffer:offset:atIndex:"), buf, uint(0), uint(1))`,
			"the table, line", bindingTable + "MTLComputeCommandEncoder setBuffer:offset:atIndex: id,int32_t,NSUInteger 10.11\n"},
	}
	for _, c := range cases {
		if c.table == "" {
			c.table = bindingTable
		}
		dir := module(t, map[string]string{
			"gpu/gpu.go":        "package gpu\n",
			"gpu/gpu_darwin.go": strings.Replace(bindingPlant, "SEND", c.send, 1),
			"selectors.txt":     c.table,
			"Info.plist":        "<plist><dict><key>LSMinimumSystemVersion</key>\n<string>14.0</string></dict></plist>\n",
		})
		gomod := "module example.com/planted\n\ngo 1.26\n\nrequire github.com/progrium/darwinkit v0.5.0\n"
		os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644)
		os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644)
		st, out := runIn(t, dir, "-bindings", "-selectors", filepath.Join(dir, "selectors.txt"), "-plist", filepath.Join(dir, "Info.plist"), "./...")
		if c.want == "" {
			if st != 0 {
				t.Errorf("%s: exit %d:\n%s", c.name, st, out)
			}
			continue
		}
		if st != 1 || !strings.Contains(out, c.want) || !strings.Contains(out, "gpu_darwin.go:") {
			t.Errorf("%s: exit %d, want 1 and %q:\n%s", c.name, st, c.want, out)
		}
	}
}
