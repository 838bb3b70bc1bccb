package darwin

// Object-lifetime rules of the macOS code, checked on Linux (there is no Mac
// to run it): each rule is a way to crash the app on its first use that the
// darwin type-check cannot see.

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"unsafe"
)

// sources calls each with every non-test .go, .m, .h file below darwin/.
func sources(t *testing.T, each func(path string, src []byte)) {
	t.Helper()
	n := 0
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		switch filepath.Ext(p) {
		case ".go", ".m", ".h":
			if strings.HasSuffix(p, "_test.go") {
				return nil
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			n++
			each(p, b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 10 {
		t.Fatalf("found only %d source files below darwin/", n)
	}
}

// TestNoRetainOfFields: darwinkit's objc.Retain(&x) sets a Go finalizer on
// &x, and runtime.SetFinalizer aborts the process (a throw, not a panic)
// when &x points into the middle of an allocation, e.g. &sink.writer.
// Objects kept in struct fields are retained with their Retain method and
// released explicitly.
func TestNoRetainOfFields(t *testing.T) {
	fset := token.NewFileSet()
	calls := 0
	sources(t, func(p string, src []byte) {
		if filepath.Ext(p) != ".go" {
			return
		}
		f, err := parser.ParseFile(fset, p, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			c, ok := n.(*ast.CallExpr)
			if !ok || len(c.Args) != 1 {
				return true
			}
			sel, ok := c.Fun.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "Retain" {
				return true
			}
			if pkg, ok := sel.X.(*ast.Ident); !ok || pkg.Name != "objc" {
				return true
			}
			calls++
			if u, ok := c.Args[0].(*ast.UnaryExpr); !ok || u.Op != token.AND {
				t.Errorf("%s: objc.Retain needs &variable", fset.Position(c.Pos()))
			} else if _, ok := u.X.(*ast.Ident); !ok {
				t.Errorf("%s: objc.Retain(&…) of a field or element: its finalizer aborts the process; use the object's Retain method and release it explicitly", fset.Position(c.Pos()))
			}
			return true
		})
	})
	t.Logf("%d objc.Retain calls checked", calls)
}

// TestNoBridgedReturnOfARCObjects: in the ARC-compiled shims, returning
// `(__bridge void *)obj` of an object the function created hands C a
// pointer that ARC releases at the end of the function; the caller may get a
// freed object. Return it retained (__bridge_retained) or autoreleased.
func TestNoBridgedReturnOfARCObjects(t *testing.T) {
	re := regexp.MustCompile(`return\s*\(\s*__bridge\s+(const\s+)?void\s*\*\s*\)`)
	sources(t, func(p string, src []byte) {
		for i, line := range strings.Split(string(src), "\n") {
			if code, _, _ := strings.Cut(line, "//"); re.MatchString(code) {
				t.Errorf("%s:%d: %s — returns an ARC-owned object unowned", p, i+1, strings.TrimSpace(line))
			}
		}
	})
}

// fieldHolder has a pointer-bearing field at a non-zero offset, like a sink
// that keeps an AVAssetWriter.
type fieldHolder struct {
	name string
	obj  struct{ ptr unsafe.Pointer }
}

// TestSetFinalizerOnFieldAborts is the evidence for TestNoRetainOfFields:
// runtime.SetFinalizer on the address of such a field kills the process.
func TestSetFinalizerOnFieldAborts(t *testing.T) {
	if os.Getenv("H3_FINALIZER_CHILD") == "1" {
		h := &fieldHolder{name: "sink"}
		runtime.SetFinalizer(&h.obj, func(any) {})
		os.Exit(0) // not reached
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^TestSetFinalizerOnFieldAborts$")
	cmd.Env = append(os.Environ(), "H3_FINALIZER_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "pointer not at beginning of allocated block") {
		t.Fatalf("SetFinalizer on a field did not abort as expected (err %v):\n%s", err, out)
	}
}
