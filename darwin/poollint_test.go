package darwin

// The pool, exception and ownership rules of the macOS code, checked on
// Linux by reading the source (the code cannot run here):
//   - every darwinkit or objc call runs inside objcpool.With, the recovering
//     autorelease-pool helper, or in a function documented to be called
//     inside one ("Called inside a pool."); objc.WithAutoreleasePool is used
//     only by objcpool;
//   - messages documented to raise an Objective-C exception (which Go cannot
//     catch) are sent only from the .m shims, inside @try;
//   - an object from alloc/new/copy (a +1 reference) is released in the
//     function that got it, returned, or stored in a field that a Release
//     method releases.

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// darwinkitPkgs are the import names of darwinkit packages in darwin/.
var darwinkitPkgs = map[string]bool{"objc": true, "metal": true, "foundation": true, "avfoundation": true,
	"coremedia": true, "corevideo": true, "mps": true, "mpsgraph": true}

// poolFree are objc functions that send no message.
var poolFree = map[string]bool{"Sel": true, "GetClass": true, "ObjectFrom": true}

// inPoolDoc marks a function that its callers run inside a pool.
const inPoolDoc = "Called inside a pool."

// throwing are the messages documented to raise: invalid settings, a writer
// or reader in the wrong state, an input not ready for data.
var throwing = []string{
	"initWithMediaType:outputSettings:", "initWithMediaType:outputSettings:sourceFormatHint:",
	"initWithAssetWriterInput:sourcePixelBufferAttributes:", "initWithTrack:outputSettings:",
	"addInput:", "addOutput:", "startSessionAtSourceTime:", "appendPixelBuffer:withPresentationTime:", "appendSampleBuffer:",
}

// throwingWrappers are darwinkit's methods sending them.
var throwingWrappers = map[string]bool{"AddInput": true, "AddOutput": true, "StartSessionAtSourceTime": true,
	"AppendPixelBufferWithPresentationTime": true, "AppendSampleBuffer": true, "InitWithMediaTypeOutputSettings": true,
	"InitWithMediaTypeOutputSettingsSourceFormatHint": true, "InitWithAssetWriterInputSourcePixelBufferAttributes": true,
	"InitWithTrackOutputSettings": true}

// ownedSelector: Cocoa's naming rule for +1 results.
var ownedSelector = regexp.MustCompile(`^(alloc|new|copy|mutableCopy)([A-Z:]|$)`)

// retainedShims are this tree's Go helpers returning an owned object.
var retainedShims = map[string]bool{"newWriterInput": true, "newPixelAdaptor": true, "newTrackOutput": true}

// lintGo checks one package's parsed darwin files; it returns findings.
func lintGo(fset *token.FileSet, files []*ast.File) []string {
	var out []string
	report := func(n ast.Node, format string, args ...any) {
		out = append(out, fmt.Sprintf("%s: %s", fset.Position(n.Pos()), fmt.Sprintf(format, args...)))
	}
	released := map[string]bool{} // fields f of some x.f.Release()
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			if c, ok := n.(*ast.CallExpr); ok {
				if s, ok := c.Fun.(*ast.SelectorExpr); ok && s.Sel.Name == "Release" {
					if fs, ok := s.X.(*ast.SelectorExpr); ok {
						released[fs.Sel.Name] = true
					}
				}
			}
			return true
		})
	}
	for _, f := range files {
		imports := map[string]bool{}
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			n := p[strings.LastIndex(p, "/")+1:]
			if im.Name != nil {
				n = im.Name.Name
			}
			imports[n] = true
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			name := fd.Name.Name
			inPool := fd.Doc != nil && strings.Contains(strings.Join(strings.Fields(fd.Doc.Text()), " "), inPoolDoc)
			// pool and exception rules
			var walk func(n ast.Node, pooled bool)
			walk = func(n ast.Node, pooled bool) {
				ast.Inspect(n, func(m ast.Node) bool {
					c, ok := m.(*ast.CallExpr)
					if !ok {
						return true
					}
					if isCall(c, "objc", "WithAutoreleasePool") {
						report(c, "%s: objc.WithAutoreleasePool: use objcpool.With (a panic inside the bare pool skips its pop)", name)
					}
					if isCall(c, "objcpool", "With") && len(c.Args) == 1 {
						walk(c.Args[0], true)
						return false
					}
					if s, ok := c.Fun.(*ast.SelectorExpr); ok && throwingWrappers[s.Sel.Name] {
						report(c, "%s: %s raises an Objective-C exception on failure: send it through the shim's @try", name, s.Sel.Name)
					}
					if sel := selectorOf(c); sel != "" {
						for _, t := range throwing {
							if sel == t {
								report(c, "%s: %q raises an Objective-C exception on failure: send it through the shim's @try", name, sel)
							}
						}
					}
					if pkg, fn := pkgCall(c); darwinkitPkgs[pkg] && !poolFree[fn] && !strings.HasSuffix(fn, "From") && !strings.HasSuffix(fn, "Ref") && !pooled && !inPool {
						report(c, "%s: %s.%s outside objcpool.With (autoreleased objects would leak into no pool; a panic would cross the cgo frame)", name, pkg, fn)
					}
					return true
				})
			}
			walk(fd.Body, false)
			// ownership rule
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				as, ok := n.(*ast.AssignStmt)
				if !ok || len(as.Rhs) != 1 {
					return true
				}
				c, ok := as.Rhs[0].(*ast.CallExpr)
				if !ok || !owning(c, imports) {
					return true
				}
				switch lhs := as.Lhs[0].(type) {
				case *ast.Ident:
					if lhs.Name != "_" && !disposed(fd.Body, lhs.Name, released) {
						report(c, "%s: %s holds a +1 reference (%s) that is neither released, returned nor kept in a released field", name, lhs.Name, describe(c))
					}
				case *ast.SelectorExpr:
					if !released[lhs.Sel.Name] {
						report(c, "%s: field %s holds a +1 reference (%s) that no Release method releases", name, lhs.Sel.Name, describe(c))
					}
				}
				return true
			})
		}
	}
	return out
}

func isCall(c *ast.CallExpr, pkg, fn string) bool {
	p, f := pkgCall(c)
	return p == pkg && f == fn
}

// pkgCall is the package and function of a call pkg.F(…) or pkg.F[T](…).
func pkgCall(c *ast.CallExpr) (string, string) {
	fun := c.Fun
	switch x := fun.(type) {
	case *ast.IndexExpr:
		fun = x.X
	case *ast.IndexListExpr:
		fun = x.X
	}
	s, ok := fun.(*ast.SelectorExpr)
	if !ok {
		return "", ""
	}
	id, ok := s.X.(*ast.Ident)
	if !ok {
		return "", ""
	}
	return id.Name, s.Sel.Name
}

// selectorOf is the literal selector of objc.Call(recv, objc.Sel("…"), …).
func selectorOf(c *ast.CallExpr) string {
	if !isCall(c, "objc", "Call") || len(c.Args) < 2 {
		return ""
	}
	sc, ok := c.Args[1].(*ast.CallExpr)
	if !ok || !isCall(sc, "objc", "Sel") || len(sc.Args) != 1 {
		return ""
	}
	b, ok := sc.Args[0].(*ast.BasicLit)
	if !ok {
		return ""
	}
	s, _ := strconv.Unquote(b.Value)
	return s
}

// owning reports whether c yields a +1 reference: a raw alloc/new/copy
// send, init sent to an Alloc(), a darwinkit New… method (a new… selector)
// or one of the shim helpers returning a retained object.
func owning(c *ast.CallExpr, imports map[string]bool) bool {
	if sel := selectorOf(c); sel != "" {
		if ownedSelector.MatchString(sel) {
			return true
		}
		if strings.HasPrefix(sel, "init") {
			if rc, ok := c.Args[0].(*ast.CallExpr); ok {
				if s, ok := rc.Fun.(*ast.SelectorExpr); ok && s.Sel.Name == "Alloc" {
					return true
				}
			}
		}
		return false
	}
	switch f := c.Fun.(type) {
	case *ast.Ident:
		return retainedShims[f.Name]
	case *ast.SelectorExpr:
		if id, ok := f.X.(*ast.Ident); ok && imports[id.Name] {
			return false // a package's function (darwinkit's New… constructors autorelease)
		}
		return strings.HasPrefix(f.Sel.Name, "New")
	}
	return false
}

// describe names what produced a +1 reference.
func describe(c *ast.CallExpr) string {
	if s := selectorOf(c); s != "" {
		return s
	}
	if s, ok := c.Fun.(*ast.SelectorExpr); ok {
		return s.Sel.Name
	}
	if id, ok := c.Fun.(*ast.Ident); ok {
		return id.Name
	}
	return "a +1 result"
}

// disposed: v is released (v.Release()), returned, or stored in a released
// field (x.f = v, T{f: v}) somewhere in body.
func disposed(body *ast.BlockStmt, v string, released map[string]bool) bool {
	ok := false
	isV := func(e ast.Expr) bool { id, is := e.(*ast.Ident); return is && id.Name == v }
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			if s, is := n.Fun.(*ast.SelectorExpr); is && s.Sel.Name == "Release" && isV(s.X) {
				ok = true
			}
		case *ast.ReturnStmt:
			for _, r := range n.Results {
				if isV(r) {
					ok = true
				}
			}
		case *ast.AssignStmt:
			for i, r := range n.Rhs {
				if s, is := n.Lhs[min(i, len(n.Lhs)-1)].(*ast.SelectorExpr); is && isV(r) && released[s.Sel.Name] {
					ok = true
				}
			}
		case *ast.KeyValueExpr:
			if k, is := n.Key.(*ast.Ident); is && isV(n.Value) && released[k.Name] {
				ok = true
			}
		}
		return !ok
	})
	return ok
}

var tryBlock = regexp.MustCompile(`(?s)@try\s*\{(.*?)\}\s*@catch`)

// lintShim checks an Objective-C shim: every throwing message inside @try.
func lintShim(path, src string) []string {
	inTry := make([]bool, len(src)+1)
	for _, m := range tryBlock.FindAllStringSubmatchIndex(src, -1) {
		for i := m[2]; i < m[3]; i++ {
			inTry[i] = true
		}
	}
	var out []string
	seen := map[string]bool{}
	for _, t := range throwing {
		// the selector's first part, as it appears in a message expression
		part := strings.SplitN(t, ":", 2)[0] + ":"
		if seen[part] {
			continue
		}
		seen[part] = true
		re := regexp.MustCompile(`\b` + regexp.QuoteMeta(part))
		for _, m := range re.FindAllStringIndex(src, -1) {
			if !inTry[m[0]] && isMessage(src, m[0]) {
				out = append(out, fmt.Sprintf("%s:%d: %s sent outside @try (it raises on failure)", path, strings.Count(src[:m[0]], "\n")+1, part))
			}
		}
	}
	sort.Strings(out)
	return out
}

// isMessage: the word at i sits in an ObjC message expression [recv part…]
// (not in a comment).
func isMessage(src string, i int) bool {
	line := src[strings.LastIndexByte(src[:i], '\n')+1 : i]
	if strings.Contains(line, "//") {
		return false
	}
	depth := 0
	for j := i - 1; j >= 0 && j > i-400; j-- {
		switch src[j] {
		case ']':
			depth++
		case '[':
			if depth == 0 {
				return true
			}
			depth--
		case ';', '{', '}':
			return false
		}
	}
	return false
}

// darwinPackages parses the non-test Go files of each package below darwin/.
func darwinPackages(t *testing.T) (*token.FileSet, map[string][]*ast.File) {
	fset := token.NewFileSet()
	pkgs := map[string][]*ast.File{}
	err := filepath.WalkDir(".", func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(p) != ".go" || strings.HasSuffix(p, "_test.go") || filepath.Dir(p) == "objcpool" {
			return err
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		pkgs[filepath.Dir(p)] = append(pkgs[filepath.Dir(p)], f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return fset, pkgs
}

// TestPoolExceptionOwnershipRules runs the rules over darwin/.
func TestPoolExceptionOwnershipRules(t *testing.T) {
	fset, pkgs := darwinPackages(t)
	n := 0
	for _, files := range pkgs {
		n += len(files)
		for _, e := range lintGo(fset, files) {
			t.Error(e)
		}
	}
	shims, _ := filepath.Glob("*/*.m")
	for _, p := range shims {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range lintShim(p, string(b)) {
			t.Error(e)
		}
	}
	if n < 10 || len(shims) == 0 {
		t.Fatalf("found %d Go files and %d shims below darwin/", n, len(shims))
	}
}

// TestRulesCatchPlants plants each rule's defect and sees it caught.
func TestRulesCatchPlants(t *testing.T) {
	const head = "//go:build darwin\n\npackage p\n\n"
	cases := []struct{ name, src, want string }{
		{"control", `type Q struct{ obj objc.Object }
func (q *Q) Release() { objcpool.With(func() { q.obj.Release() }) }
func NewQ() *Q {
	var q *Q
	objcpool.With(func() {
		o := objc.Call[objc.Object](objc.GetClass("X"), objc.Sel("new"))
		q = &Q{obj: o}
		d := objc.Call[objc.Object](objc.GetClass("D"), objc.Sel("new"))
		defer d.Release()
	})
	return q
}
// helper sends a message. Called inside a pool.
func helper(o objc.Object) { objc.Call[objc.Void](o, objc.Sel("commit")) }
`, ""},
		{"bare pool", `func F() { objc.WithAutoreleasePool(func() {}) }`, "F: objc.WithAutoreleasePool: use objcpool.With"},
		{"outside pool", `func F(o objc.Object) { objc.Call[objc.Void](o, objc.Sel("commit")) }`, "F: objc.Call outside objcpool.With"},
		{"throwing raw", `func F(w, in objc.Object) { objcpool.With(func() { objc.Call[objc.Void](w, objc.Sel("addInput:"), in) }) }`, `F: "addInput:" raises`},
		{"throwing wrapper", `func F(w avfoundation.AssetWriter, in avfoundation.AssetWriterInput) { objcpool.With(func() { w.AddInput(in) }) }`, "F: AddInput raises"},
		{"leaked new", `func F() { objcpool.With(func() { o := objc.Call[objc.Object](objc.GetClass("X"), objc.Sel("new")); _ = o.Ptr() }) }`, "F: o holds a +1 reference (new)"},
		{"unreleased field", `type S struct{ in objc.Object }
func (s *S) F() { objcpool.With(func() { s.in = objc.Call[objc.Object](avfoundation.AssetWriterInputClass.Alloc(), objc.Sel("initWithX:"), 1) }) }`, "F: field in holds a +1 reference (initWithX:)"},
	}
	for _, c := range cases {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, "plant_darwin.go", head+c.src, parser.ParseComments)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got := strings.Join(lintGo(fset, []*ast.File{f}), "\n")
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("%s: got\n%s\nwant %q", c.name, got, c.want)
		}
	}
	shim := "char *ok(void *w, void *in) {\n\t@try {\n\t\t[(__bridge AVAssetWriter *)w addInput:(__bridge id)in];\n\t\treturn NULL;\n\t} @catch (NSException *e) {\n\t\treturn NULL;\n\t}\n}\n"
	if got := lintShim("s.m", shim); len(got) != 0 {
		t.Errorf("shim control: %v", got)
	}
	bad := "void bad(void *w, void *in) {\n\t[(__bridge AVAssetWriter *)w addInput:(__bridge id)in];\n}\n"
	if got := strings.Join(lintShim("s.m", shim+bad), "\n"); !strings.Contains(got, "s.m:10: addInput: sent outside @try") {
		t.Errorf("shim plant: got %q", got)
	}
}
