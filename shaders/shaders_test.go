package shaders

import (
	"regexp"
	"strings"
	"testing"
)

func TestSource(t *testing.T) {
	src := Source()
	if strings.Contains(src, `#include "`) {
		t.Error(`Source keeps an #include "…" line the Metal compiler cannot open`)
	}
	for _, f := range append(append([]string{}, Headers...), MetalFiles()...) {
		if !strings.Contains(src, `#line 1 "`+f+`"`) {
			t.Errorf("Source lacks the #line directive of %s", f)
		}
	}
	if !strings.Contains(src, "#include <metal_stdlib>") {
		t.Error("Source does not include <metal_stdlib>")
	}
}

var nameRe = regexp.MustCompile(`^kernel_[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// TestEntryPoints checks the naming rule kernel_<op>[_<fused>]_<in>_<out>[_<variant>]
// and that there are kernels at all.
func TestEntryPoints(t *testing.T) {
	eps := EntryPoints()
	if len(eps) < 20 {
		t.Fatalf("%d entry points", len(eps))
	}
	seen := map[string]bool{}
	for _, e := range eps {
		if !nameRe.MatchString(e.Name) {
			t.Errorf("%s (%s:%d) does not follow kernel_<op>_<in>_<out>[_<variant>]", e.Name, e.File, e.Line)
		}
		if seen[e.Name] {
			t.Errorf("%s defined twice", e.Name)
		}
		seen[e.Name] = true
	}
}

func TestDiagnostics(t *testing.T) {
	// A Metal compiler error inside the template kernel_rms_norm and one in a header helper.
	line := 0
	for i, l := range strings.Split(read("norm.metal"), "\n") {
		if strings.Contains(l, "float inv = precise::rsqrt(ss") {
			line = i + 1
		}
	}
	if line == 0 {
		t.Fatal("marker line not found in norm.metal")
	}
	log := "Compilation failed:\n\nnorm.metal:" + itoa(line) + ":17: error: use of undeclared identifier 'ss2'\n" +
		"common.h:30:5: warning: unused variable 'u'\nprogram_source:1:1: note: something\n"
	ds := ParseDiagnostics(log)
	if len(ds) != 3 {
		t.Fatalf("parsed %d diagnostics: %+v", len(ds), ds)
	}
	if ds[0].File != "norm.metal" || ds[0].Line != line || ds[0].Severity != "error" || ds[0].Kernel != "kernel_rms_norm" {
		t.Errorf("first diagnostic %+v", ds[0])
	}
	if ds[1].Kernel != "" || ds[2].Kernel != "" {
		t.Errorf("header/unknown lines attributed to a kernel: %+v", ds[1:])
	}
	if !strings.Contains(ds[0].String(), "(in kernel_rms_norm)") {
		t.Errorf("String() = %q", ds[0].String())
	}
	if k := KernelAt("copy.metal", 1); k != "" {
		t.Errorf("line 1 of copy.metal is in %q", k)
	}
}

func itoa(n int) string {
	s := ""
	for ; n > 0; n /= 10 {
		s = string(rune('0'+n%10)) + s
	}
	return s
}
