//go:build linux

package mslcpu

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"h3studio/engine/compute/metal"
	"h3studio/shaders"
)

// cName maps a Go mirror name to the C one: KargsRmsNorm → kargs_rms_norm.
func cName(g string) string {
	var b strings.Builder
	for i, r := range g {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// TestKargsLayoutClang compiles kargs.h with clang and compares offsetof and
// sizeof of every field with the Go mirrors (the MSL compiler lays out these
// scalar structs as clang does): independent of kargs_test.go's parser.
func TestKargsLayoutClang(t *testing.T) {
	tc := Require(t)
	dir := t.TempDir()
	src, err := shaders.Files().(interface{ ReadFile(string) ([]byte, error) }).ReadFile("kargs.h")
	if err != nil {
		t.Fatal(err)
	}
	typedefs := "typedef unsigned int uint; typedef unsigned long ulong;\n"
	var prog strings.Builder
	prog.WriteString("#include <stddef.h>\n#include <stdio.h>\n" + typedefs + "#include \"kargs.h\"\nint main() {\n")
	for _, v := range metal.Kargs() {
		rt := reflect.TypeOf(v)
		cs := cName(rt.Name())
		fmt.Fprintf(&prog, "  printf(\"%s %%zu\\n\", sizeof(struct %s));\n", cs, cs)
		for i := 0; i < rt.NumField(); i++ {
			cf := cName(rt.Field(i).Name)
			fmt.Fprintf(&prog, "  printf(\"%s.%s %%zu %%zu\\n\", offsetof(struct %s, %s), sizeof(((struct %s*)0)->%s));\n", cs, cf, cs, cf, cs, cf)
		}
	}
	prog.WriteString("  return 0;\n}\n")
	os.WriteFile(filepath.Join(dir, "kargs.h"), src, 0o644)
	os.WriteFile(filepath.Join(dir, "probe.cpp"), []byte(prog.String()), 0o644)
	bin := filepath.Join(dir, "probe")
	if out, err := exec.Command(tc.CXX, "-std=c++17", "-I", dir, filepath.Join(dir, "probe.cpp"), "-o", bin).CombinedOutput(); err != nil {
		t.Fatalf("probe does not compile (a Go field with no C field?):\n%s", out)
	}
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][2]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		a, _ := strconv.Atoi(f[1])
		b := 0
		if len(f) > 2 {
			b, _ = strconv.Atoi(f[2])
		}
		got[f[0]] = [2]int{a, b}
	}
	for _, v := range metal.Kargs() {
		rt := reflect.TypeOf(v)
		cs := cName(rt.Name())
		if got[cs][0] != int(rt.Size()) {
			t.Errorf("%s: clang sizeof %d, Go %d", cs, got[cs][0], rt.Size())
		}
		for i := 0; i < rt.NumField(); i++ {
			f := rt.Field(i)
			c := got[cs+"."+cName(f.Name)]
			if c[0] != int(f.Offset) || c[1] != int(f.Type.Size()) {
				t.Errorf("%s.%s: clang offset %d size %d, Go offset %d size %d", cs, cName(f.Name), c[0], c[1], f.Offset, f.Type.Size())
			}
		}
	}
}
