package main

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// The binding lint checks the module's use of darwinkit against darwinkit's
// own generated source (which the type-check reads anyway), so defects that
// only show on a Mac fail here:
//   - a call of a generated function whose body passes an argument through
//     objc.WrapAsProtocol: it panics for darwinkit's struct object types
//     ("generic type T should be interface type") and would in any case hand
//     Objective-C a Go proxy instead of the real object;
//   - a raw objc.Call whose selector's colons differ from its arguments;
//   - a raw objc.Call whose selector darwinkit does not know for the
//     receiver's class and that the selector table (SelectorTable) does not
//     list, or that the table dates after the minimum macOS without a
//     respondsToSelector: guard around the send;
//   - a Go argument whose kind disagrees with the ObjC parameter (from
//     darwinkit's wrapper or the table).

const darwinkitPath = "github.com/progrium/darwinkit"

// selEntry is one row of the selector table: a message darwinkit v0.5.0
// does not bind for the class, with its ObjC argument types and the macOS
// version that introduced it.
type selEntry struct {
	Class, Sel string
	Args       []string
	MacOS      [2]int
	// OfNewClass marks a message to an instance of a class introduced in
	// MacOS ("15.0*"): the instance exists only where its creation passed a
	// guard, so the send itself needs none.
	OfNewClass bool
	Line       int
}

// readSelectorTable reads lines "Class selector argtype,argtype|- macOS[*]"
// ('#' comments; see selEntry).
func readSelectorTable(path string) (map[string][]selEntry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string][]selEntry{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line, _, _ := strings.Cut(sc.Text(), "#")
		fs := strings.Fields(line)
		if len(fs) == 0 {
			continue
		}
		if len(fs) != 4 {
			return nil, fmt.Errorf("%s:%d: want `Class selector argtypes macOS`, got %q", path, n, strings.TrimSpace(line))
		}
		e := selEntry{Class: fs[0], Sel: fs[1], Line: n}
		if fs[2] != "-" {
			e.Args = strings.Split(fs[2], ",")
		}
		for _, a := range e.Args {
			if objcKind(a) == "" {
				return nil, fmt.Errorf("%s:%d: unknown ObjC argument type %q", path, n, a)
			}
		}
		if len(e.Args) != strings.Count(e.Sel, ":") {
			return nil, fmt.Errorf("%s:%d: %s takes %d arguments, the row lists %d", path, n, e.Sel, strings.Count(e.Sel, ":"), len(e.Args))
		}
		e.OfNewClass = strings.HasSuffix(fs[3], "*")
		v, err := parseVersion(strings.TrimSuffix(fs[3], "*"))
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, n, err)
		}
		e.MacOS = v
		out[e.Sel] = append(out[e.Sel], e)
	}
	return out, sc.Err()
}

func parseVersion(s string) ([2]int, error) {
	maj, min, _ := strings.Cut(s, ".")
	a, err := strconv.Atoi(maj)
	if err != nil {
		return [2]int{}, fmt.Errorf("bad macOS version %q", s)
	}
	b := 0
	if min != "" {
		if b, err = strconv.Atoi(strings.SplitN(min, ".", 2)[0]); err != nil {
			return [2]int{}, fmt.Errorf("bad macOS version %q", s)
		}
	}
	return [2]int{a, b}, nil
}

var plistMinOS = regexp.MustCompile(`<key>LSMinimumSystemVersion</key>\s*<string>([^<]*)</string>`)

// readMinOS is the LSMinimumSystemVersion of an Info.plist.
func readMinOS(path string) ([2]int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return [2]int{}, err
	}
	m := plistMinOS.FindSubmatch(b)
	if m == nil {
		return [2]int{}, fmt.Errorf("%s: no LSMinimumSystemVersion", path)
	}
	return parseVersion(strings.TrimSpace(string(m[1])))
}

// objcKind maps a table's ObjC type to the kind Go arguments are compared by.
func objcKind(t string) string {
	switch t {
	case "id", "NSString*", "NSArray*", "NSDictionary*", "Class":
		return "obj"
	case "NSUInteger", "NSInteger", "uint64_t", "int64_t":
		return "int8"
	case "uint32_t", "int32_t", "MPSDataType":
		return "int4"
	case "BOOL":
		return "bool"
	case "float":
		return "float4"
	case "double", "CFTimeInterval":
		return "float8"
	case "void*", "NSError**":
		return "ptr"
	case "SEL":
		return "sel"
	case "block":
		return "block"
	case "MTLSize":
		return "struct"
	}
	return ""
}

// goKind classifies a Go argument or parameter type the way darwinkit's
// objc.Call marshals it.
func goKind(t types.Type, sizes types.Sizes) string {
	if t == nil {
		return "?"
	}
	if b, ok := t.(*types.Basic); ok && b.Kind() == types.UntypedNil {
		return "nil"
	}
	if n, ok := types.Unalias(t).(*types.Named); ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == darwinkitPath+"/objc" {
		switch n.Obj().Name() {
		case "Selector":
			return "sel"
		case "Object", "Class", "Protocol":
			return "obj"
		}
	}
	switch u := t.Underlying().(type) {
	case *types.Basic:
		switch {
		case u.Kind() == types.Bool || u.Kind() == types.UntypedBool:
			return "bool"
		case u.Kind() == types.String || u.Kind() == types.UntypedString:
			return "obj" // an NSString
		case u.Kind() == types.UnsafePointer || u.Kind() == types.Uintptr:
			return "ptr"
		case u.Info()&types.IsInteger != 0:
			if u.Info()&types.IsUntyped != 0 {
				return "int8"
			}
			return fmt.Sprintf("int%d", sizes.Sizeof(u))
		case u.Info()&types.IsFloat != 0:
			if u.Info()&types.IsUntyped != 0 {
				return "float8"
			}
			return fmt.Sprintf("float%d", sizes.Sizeof(u))
		}
	case *types.Interface, *types.Map, *types.Slice:
		return "obj" // interfaces of objects; maps and slices become NSDictionary/NSArray
	case *types.Signature:
		return "block"
	case *types.Pointer:
		return "ptr"
	case *types.Struct:
		if embedsObject(u) {
			return "obj"
		}
		return "struct"
	}
	return "?"
}

func embedsObject(s *types.Struct) bool {
	for i := 0; i < s.NumFields(); i++ {
		f := s.Field(i)
		if !f.Embedded() {
			continue
		}
		if n, ok := types.Unalias(f.Type()).(*types.Named); ok && n.Obj().Pkg() != nil &&
			n.Obj().Pkg().Path() == darwinkitPath+"/objc" && n.Obj().Name() == "Object" {
			return true
		}
		if st, ok := f.Type().Underlying().(*types.Struct); ok && embedsObject(st) {
			return true
		}
	}
	return false
}

func kindsAgree(arg, param string) bool {
	if arg == param {
		return true
	}
	if arg == "nil" {
		return param == "obj" || param == "ptr" || param == "block"
	}
	return false
}

// darwinkitIndex is what the lint needs of darwinkit's generated source.
type darwinkitIndex struct {
	wraps   map[string]bool                // "pkg.Recv.Method" or "pkg.Func" whose body uses objc.WrapAsProtocol
	sels    map[string]map[string][]string // "pkg.Type" -> selector -> methods sending it
	classOf map[string]string              // "pkg.Type" -> ObjC class or protocol name
	typeOf  map[string]string              // ObjC class name -> "pkg.Type"
}

var pkgPrefix = map[string]string{"metal": "MTL", "mps": "MPS", "mpsgraph": "MPSGraph", "foundation": "NS",
	"avfoundation": "AV", "coremedia": "CM", "corevideo": "CV", "quartzcore": "CA", "coregraphics": "CG", "appkit": "NS"}

func newDarwinkitIndex() *darwinkitIndex {
	return &darwinkitIndex{wraps: map[string]bool{}, sels: map[string]map[string][]string{},
		classOf: map[string]string{}, typeOf: map[string]string{}}
}

// add indexes one parsed darwinkit package.
func (ix *darwinkitIndex) add(path string, files []*ast.File) {
	base := path[strings.LastIndex(path, "/")+1:]
	for _, f := range files {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.GenDecl: // var XClass = _XClass{objc.GetClass("NSFoo")}
				for _, s := range d.Specs {
					vs, ok := s.(*ast.ValueSpec)
					if !ok || len(vs.Values) != 1 {
						continue
					}
					cl, ok := vs.Values[0].(*ast.CompositeLit)
					if !ok || len(cl.Elts) != 1 {
						continue
					}
					tn, ok := cl.Type.(*ast.Ident)
					if !ok || !strings.HasPrefix(tn.Name, "_") || !strings.HasSuffix(tn.Name, "Class") {
						continue
					}
					if name, ok := getClassLit(cl.Elts[0]); ok {
						goName := strings.TrimSuffix(strings.TrimPrefix(tn.Name, "_"), "Class")
						ix.classOf[path+"."+goName] = name
						ix.classOf[path+"."+tn.Name] = name
						ix.typeOf[name] = path + "." + goName
					}
				}
			case *ast.FuncDecl:
				if d.Body == nil {
					continue
				}
				key := path + "." + d.Name.Name
				recv := ""
				if d.Recv != nil && len(d.Recv.List) == 1 {
					recv = recvName(d.Recv.List[0].Type)
					key = path + "." + recv + "." + d.Name.Name
					if strings.HasSuffix(recv, "Object") && ix.classOf[path+"."+recv] == "" && pkgPrefix[base] != "" {
						ix.classOf[path+"."+recv] = pkgPrefix[base] + strings.TrimSuffix(recv, "Object") // a protocol
					}
				}
				ast.Inspect(d.Body, func(n ast.Node) bool {
					c, ok := n.(*ast.CallExpr)
					if !ok {
						return true
					}
					if isPkgFunc(c.Fun, "objc", "WrapAsProtocol") {
						ix.wraps[key] = true
					}
					if recv != "" && isPkgFunc(c.Fun, "objc", "Sel") && len(c.Args) == 1 {
						if s, ok := stringLit(c.Args[0]); ok && !strings.HasPrefix(d.Name.Name, "Has") {
							m := ix.sels[path+"."+recv]
							if m == nil {
								m = map[string][]string{}
								ix.sels[path+"."+recv] = m
							}
							m[s] = append(m[s], d.Name.Name)
						}
					}
					return true
				})
			}
		}
	}
}

func recvName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return recvName(e.X)
	case *ast.Ident:
		return e.Name
	case *ast.IndexExpr:
		return recvName(e.X)
	}
	return ""
}

func isPkgFunc(e ast.Expr, pkg, name string) bool {
	switch x := e.(type) {
	case *ast.IndexExpr:
		e = x.X
	case *ast.IndexListExpr:
		e = x.X
	}
	s, ok := e.(*ast.SelectorExpr)
	if !ok || s.Sel.Name != name {
		return false
	}
	id, ok := s.X.(*ast.Ident)
	return ok && id.Name == pkg
}

func stringLit(e ast.Expr) (string, bool) {
	b, ok := e.(*ast.BasicLit)
	if !ok || b.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(b.Value)
	return s, err == nil
}

func getClassLit(e ast.Expr) (string, bool) {
	c, ok := e.(*ast.CallExpr)
	if !ok || !isPkgFunc(c.Fun, "objc", "GetClass") || len(c.Args) != 1 {
		return "", false
	}
	return stringLit(c.Args[0])
}

// nsObjectSelectors are NSObject's argument-less lifecycle messages, which
// every class answers.
var nsObjectSelectors = map[string]bool{"alloc": true, "new": true, "init": true, "retain": true, "release": true, "autorelease": true}

// bindingLint checks one type-checked module package.
type bindingLint struct {
	ix       *darwinkitIndex
	checked  map[string]*types.Package
	table    map[string][]selEntry
	minOS    [2]int
	sizes    types.Sizes
	fset     *token.FileSet
	sends    map[token.Pos]bool
	findings []string
}

func (b *bindingLint) report(pos token.Pos, fn, format string, args ...any) {
	where := ""
	if fn != "" {
		where = " (in " + fn + ")"
	}
	b.findings = append(b.findings, fmt.Sprintf("%s: binding%s: %s", b.fset.Position(pos), where, fmt.Sprintf(format, args...)))
}

func (b *bindingLint) checkFile(f *ast.File, info *types.Info) {
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		fn := fd.Name.Name
		if fd.Recv != nil && len(fd.Recv.List) == 1 {
			fn = recvName(fd.Recv.List[0].Type) + "." + fn
		}
		var stack []ast.Node
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			if n == nil {
				stack = stack[:len(stack)-1]
				return true
			}
			stack = append(stack, n)
			if c, ok := n.(*ast.CallExpr); ok {
				b.checkCall(c, fn, info, stack)
			}
			return true
		})
	}
}

func (b *bindingLint) checkCall(c *ast.CallExpr, fn string, info *types.Info, stack []ast.Node) {
	fun := c.Fun
	switch x := fun.(type) {
	case *ast.IndexExpr:
		fun = x.X
	case *ast.IndexListExpr:
		fun = x.X
	}
	var obj types.Object
	switch x := fun.(type) {
	case *ast.SelectorExpr:
		obj = info.Uses[x.Sel]
	case *ast.Ident:
		obj = info.Uses[x]
	}
	f, ok := obj.(*types.Func)
	if !ok || f.Pkg() == nil || !strings.HasPrefix(f.Pkg().Path(), darwinkitPath) {
		return
	}
	key := f.Pkg().Path() + "." + f.Name()
	if sig, ok := f.Type().(*types.Signature); ok && sig.Recv() != nil {
		rt := sig.Recv().Type()
		if p, ok := rt.(*types.Pointer); ok {
			rt = p.Elem()
		}
		if n, ok := types.Unalias(rt).(*types.Named); ok {
			key = f.Pkg().Path() + "." + n.Obj().Name() + "." + f.Name()
		}
	}
	if b.ix.wraps[key] {
		b.report(c.Pos(), fn, "%s passes its argument through objc.WrapAsProtocol, which panics for darwinkit's struct object types and would hand Objective-C a Go proxy: send the selector raw with objc.Call", strings.TrimPrefix(key, darwinkitPath+"/macos/"))
		return
	}
	if f.Pkg().Path() != darwinkitPath+"/objc" || f.Name() != "Call" || len(c.Args) < 2 {
		return
	}
	b.sends[c.Pos()] = true
	selCall, ok := c.Args[1].(*ast.CallExpr)
	var sel string
	if ok && isPkgFunc(selCall.Fun, "objc", "Sel") && len(selCall.Args) == 1 {
		sel, ok = stringLit(selCall.Args[0])
	}
	if !ok {
		b.report(c.Args[1].Pos(), fn, "objc.Call's selector is not a literal objc.Sel(\"…\"): it cannot be checked")
		return
	}
	args := c.Args[2:]
	if n := strings.Count(sel, ":"); n != len(args) {
		b.report(c.Pos(), fn, "objc.Call %q (%d colons) passes %d arguments", sel, n, len(args))
		return
	}
	if nsObjectSelectors[sel] {
		return
	}
	class, goType := b.receiverClass(c.Args[0], info)
	// A table row for this class wins over darwinkit's wrapper: it records
	// Apple's documented types where darwinkit's generator mistyped one
	// (a CMPersistentTrackID taken as an object, say).
	var entry *selEntry
	for i, e := range b.table[sel] {
		if class != "" && e.Class == class {
			entry = &b.table[sel][i]
			break
		}
	}
	if entry == nil {
		if params := b.darwinkitParams(goType, sel); params != nil {
			for _, ps := range params {
				if b.kindsMatch(args, ps, info) == "" {
					return
				}
			}
			b.report(c.Pos(), fn, "objc.Call %q: %s (darwinkit's %s takes %s)", sel, b.kindsMatch(args, params[0], info), class, strings.Join(params[0], ", "))
			return
		}
		for i, e := range b.table[sel] {
			if class == "" || e.Class == class {
				entry = &b.table[sel][i]
				break
			}
		}
	}
	if entry == nil {
		cl := class
		if cl == "" {
			cl = "an untyped objc.Object receiver"
		}
		b.report(c.Pos(), fn, "objc.Call %q: darwinkit v0.5.0 does not know this selector for %s, and the selector table does not list it (class, selector, ObjC argument types, macOS version)", sel, cl)
		return
	}
	if msg := b.kindsMatch(args, kindsOf(entry.Args), info); msg != "" {
		b.report(c.Pos(), fn, "objc.Call %q: %s (the table, line %d, says %s)", sel, msg, entry.Line, strings.Join(entry.Args, ", "))
	}
	if versionLess(b.minOS, entry.MacOS) && !entry.OfNewClass && !guarded(stack, sel) {
		b.report(c.Pos(), fn, "objc.Call %q needs macOS %d.%d (the app's minimum is %d.%d): guard it with respondsToSelector:", sel, entry.MacOS[0], entry.MacOS[1], b.minOS[0], b.minOS[1])
	}
}

func versionLess(a, b [2]int) bool { return a[0] < b[0] || a[0] == b[0] && a[1] < b[1] }

func kindsOf(objcTypes []string) []string {
	out := make([]string, len(objcTypes))
	for i, t := range objcTypes {
		out[i] = objcKind(t)
	}
	return out
}

// kindsMatch says which argument disagrees with the parameter kinds ("" when none).
func (b *bindingLint) kindsMatch(args []ast.Expr, params []string, info *types.Info) string {
	for i, a := range args {
		if i >= len(params) {
			break
		}
		k := goKind(info.TypeOf(a), b.sizes)
		if tv, ok := info.Types[a]; ok && tv.Value != nil && tv.Value.Kind() == constant.Int && (params[i] == "int4" || params[i] == "int8") && tv.Type != nil {
			if bt, ok := tv.Type.(*types.Basic); ok && bt.Info()&types.IsUntyped != 0 {
				continue // an untyped constant converts to either width
			}
		}
		if !kindsAgree(k, params[i]) {
			return fmt.Sprintf("argument %d is %s (%s), the ObjC parameter wants %s", i+1, types.ExprString(a), k, params[i])
		}
	}
	return ""
}

// receiverClass resolves the ObjC class of a send's receiver: a darwinkit
// type, or an objc.GetClass("X") literal. goType is "pkg.Type" or "".
func (b *bindingLint) receiverClass(e ast.Expr, info *types.Info) (class, goType string) {
	if name, ok := getClassLit(e); ok {
		return name, b.ix.typeOf[name]
	}
	t := info.TypeOf(e)
	if t == nil {
		return "", ""
	}
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := types.Unalias(t).(*types.Named)
	if !ok || n.Obj().Pkg() == nil || !strings.HasPrefix(n.Obj().Pkg().Path(), darwinkitPath+"/macos/") {
		return "", ""
	}
	goType = n.Obj().Pkg().Path() + "." + n.Obj().Name()
	return b.ix.classOf[goType], goType
}

// darwinkitParams lists the parameter kinds of darwinkit's wrappers that
// send sel on goType or a type it embeds (nil: darwinkit does not know sel
// there).
func (b *bindingLint) darwinkitParams(goType, sel string) [][]string {
	if goType == "" {
		return nil
	}
	var out [][]string
	seen := map[string]bool{}
	var walk func(key string)
	walk = func(key string) {
		if seen[key] {
			return
		}
		seen[key] = true
		dot := strings.LastIndex(key, ".")
		path, name := key[:dot], key[dot+1:]
		pkg := b.checked[path]
		if pkg == nil {
			return
		}
		for _, tname := range []string{name, "_" + name + "Class"} {
			tobj, _ := pkg.Scope().Lookup(tname).(*types.TypeName)
			if tobj == nil {
				continue
			}
			for _, m := range b.ix.sels[path+"."+tname][sel] {
				mobj, _, _ := types.LookupFieldOrMethod(tobj.Type(), true, pkg, m)
				fm, ok := mobj.(*types.Func)
				if !ok {
					continue
				}
				sig := fm.Type().(*types.Signature)
				ks := make([]string, sig.Params().Len())
				for i := range ks {
					ks[i] = goKind(sig.Params().At(i).Type(), b.sizes)
				}
				if len(ks) == strings.Count(sel, ":") {
					out = append(out, ks)
				}
			}
			if st, ok := tobj.Type().Underlying().(*types.Struct); ok {
				for i := 0; i < st.NumFields(); i++ {
					if fld := st.Field(i); fld.Embedded() {
						if n, ok := types.Unalias(fld.Type()).(*types.Named); ok && n.Obj().Pkg() != nil {
							walk(n.Obj().Pkg().Path() + "." + n.Obj().Name())
						}
					}
				}
			}
		}
	}
	walk(goType)
	return out
}

// guarded reports whether the send (the innermost node of stack) runs only
// when a respondsToSelector: test of sel succeeded: it lies in the body of
// an `if` whose condition names sel and a RespondsToSelector call, or after
// an `if !…RespondsToSelector(…sel…) { return }` in an enclosing block.
func guarded(stack []ast.Node, sel string) bool {
	for i := len(stack) - 2; i >= 0; i-- {
		switch s := stack[i].(type) {
		case *ast.IfStmt:
			if stack[i+1] == s.Body && testsSelector(s.Cond, sel, false) {
				return true
			}
		case *ast.BlockStmt:
			for _, st := range s.List {
				if st == stack[i+1] {
					break
				}
				if is, ok := st.(*ast.IfStmt); ok && testsSelector(is.Cond, sel, true) && endsInReturn(is.Body) {
					return true
				}
			}
		}
	}
	return false
}

// testsSelector: cond calls something named *espondsToSelector* (or
// responds) with sel; negated wants `!call`.
func testsSelector(cond ast.Expr, sel string, negated bool) bool {
	if negated {
		u, ok := cond.(*ast.UnaryExpr)
		if !ok || u.Op != token.NOT {
			return false
		}
		cond = u.X
	}
	found := false
	ast.Inspect(cond, func(n ast.Node) bool {
		c, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		name := ""
		switch f := c.Fun.(type) {
		case *ast.SelectorExpr:
			name = f.Sel.Name
		case *ast.Ident:
			name = f.Name
		}
		if strings.Contains(strings.ToLower(name), "respond") {
			ast.Inspect(c, func(m ast.Node) bool {
				if s, ok := m.(ast.Expr); ok {
					if v, ok := stringLit(s); ok && v == sel {
						found = true
					}
				}
				return !found
			})
		}
		return !found
	})
	return found
}

func endsInReturn(b *ast.BlockStmt) bool {
	if len(b.List) == 0 {
		return false
	}
	_, ok := b.List[len(b.List)-1].(*ast.ReturnStmt)
	return ok
}

// sortedFindings returns the lint's findings in file order.
func (b *bindingLint) sortedFindings() []string {
	sort.Strings(b.findings)
	return b.findings
}
