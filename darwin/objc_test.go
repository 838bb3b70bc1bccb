package darwin

// The Objective-C of darwin/ (the .m shims and the cgo preambles compiled as
// Objective-C), compiled on Linux with clang for arm64-apple-macos14 against
// the stub headers of darwin/stubs: with ARC, syntax only, then through the
// static analyzer's retain-count and CoreFoundation checkers with warnings
// as errors. Type errors, ARC bridging mistakes and Create/Copy leaks fail
// here instead of on a Mac.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// objcCompiler finds clang 17 or later (make deps installs clang-19).
func objcCompiler(t *testing.T) string {
	t.Helper()
	for _, c := range []string{"clang-19", "clang-18", "clang-17", "clang"} {
		if p, err := exec.LookPath(c); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no clang found (make deps installs clang-19)")
	}
	t.Skip("no clang found (make deps installs clang-19)")
	return ""
}

// checkObjC compiles one Objective-C file: syntax with ARC, then the
// analyzer. It returns the diagnostics of the first step that fails.
func checkObjC(t *testing.T, cc, file, incDir string) error {
	t.Helper()
	res, err := exec.Command(cc, "-print-resource-dir").Output()
	if err != nil {
		return fmt.Errorf("%s -print-resource-dir: %v", cc, err)
	}
	stubs, err := filepath.Abs("stubs")
	if err != nil {
		return err
	}
	common := []string{"-target", "arm64-apple-macos14", "-x", "objective-c", "-fobjc-arc", "-nostdinc",
		"-isystem", filepath.Join(strings.TrimSpace(string(res)), "include"), "-isystem", stubs,
		"-isystem", filepath.Join(stubs, "libc"), "-I", incDir}
	for _, step := range [][]string{
		{"-fsyntax-only", "-Werror=incompatible-pointer-types", "-Werror=int-conversion", "-Werror=objc-method-access"},
		{"--analyze", "-Xclang", "-analyzer-checker=osx", "-Xclang", "-analyzer-werror", "-o", os.DevNull},
	} {
		out, err := exec.Command(cc, append(append(append([]string{}, common...), step...), file)...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("%s %s:\n%s", filepath.Base(cc), step[0], out)
		}
	}
	return nil
}

var cgoPreamble = regexp.MustCompile(`(?s)/\*(.*?)\*/\s*import "C"`)

// objcSource is one Objective-C file and the folder its quoted includes are in.
type objcSource struct{ file, inc string }

// objcSources lists the .m shims and, written to dir, the cgo preambles
// compiled as Objective-C (#cgo CFLAGS: -x objective-c).
func objcSources(t *testing.T, dir string) []objcSource {
	t.Helper()
	var files []objcSource
	ms, _ := filepath.Glob("*/*.m")
	for _, m := range ms {
		files = append(files, objcSource{m, mustAbs(t, filepath.Dir(m))})
	}
	gos, _ := filepath.Glob("*/*.go")
	for _, g := range gos {
		b, err := os.ReadFile(g)
		if err != nil {
			t.Fatal(err)
		}
		m := cgoPreamble.FindSubmatch(b)
		if m == nil || !strings.Contains(string(m[1]), "-x objective-c") {
			continue
		}
		var pre strings.Builder
		fmt.Fprintf(&pre, "#line 1 %q\n", g)
		for _, l := range strings.Split(string(m[1]), "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), "#cgo") {
				l = ""
			}
			pre.WriteString(l + "\n")
		}
		p := filepath.Join(dir, strings.ReplaceAll(g, string(filepath.Separator), "_")+".m")
		if err := os.WriteFile(p, []byte(pre.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, objcSource{p, mustAbs(t, filepath.Dir(g))})
	}
	return files
}

func mustAbs(t *testing.T, p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestObjectiveCShims compiles and analyzes every shim of darwin/.
func TestObjectiveCShims(t *testing.T) {
	cc := objcCompiler(t)
	dir := t.TempDir()
	files := objcSources(t, dir)
	if len(files) < 3 {
		t.Fatalf("found only %d Objective-C sources (the .m shims and the cgo preambles)", len(files))
	}
	for _, f := range files {
		if err := checkObjC(t, cc, f.file, f.inc); err != nil {
			t.Errorf("%s: %v", f.file, err)
		}
	}
	t.Logf("%d Objective-C sources compiled and analyzed", len(files))
}

// TestObjectiveCPlants: a type error, an unbridged cast under ARC and a
// CoreFoundation leak each fail the check; the correct version passes.
func TestObjectiveCPlants(t *testing.T) {
	cc := objcCompiler(t)
	const good = `#import <Foundation/Foundation.h>
#import <ImageIO/ImageIO.h>
int count(const char *path) {
	NSURL *url = [NSURL fileURLWithPath:[NSString stringWithUTF8String:path]];
	CGImageSourceRef src = CGImageSourceCreateWithURL((__bridge CFURLRef)url, NULL);
	if (!src) return 0;
	int n = (int)CGImageSourceGetCount(src);
	RELEASE
	return n;
}
`
	cases := []struct{ name, from, to, want string }{
		{"control", "", "", ""},
		{"leak", "RELEASE", "", "Potential leak of an object stored into 'src'"},
		{"unbridged cast", "(__bridge CFURLRef)url", "(CFURLRef)url", "requires a bridged cast"},
		{"type error", "stringWithUTF8String:path", "stringWithUTF8String:42", "int"},
	}
	for _, c := range cases {
		src := strings.Replace(good, c.from, c.to, 1)
		if c.from != "RELEASE" {
			src = strings.Replace(src, "RELEASE", "CFRelease(src);", 1)
		}
		if c.from == "" {
			src = strings.Replace(good, "RELEASE", "CFRelease(src);", 1)
		}
		p := filepath.Join(t.TempDir(), "plant.m")
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		err := checkObjC(t, cc, p, filepath.Dir(p))
		if c.want == "" {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "plant.m") {
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
		}
	}
}
