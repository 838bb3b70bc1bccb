package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Options configure a check.
type Options struct {
	Dir      string   // run go list here (module root or below)
	Patterns []string // package patterns, default ./...
	GOOS     string   // default darwin
	GOARCH   string   // default arm64
	Tags     string   // extra build tags, comma-separated
	Tests    bool     // also type-check _test.go files
	// DepErrors also reports type errors found in dependencies (their
	// function bodies are skipped unless DepBodies).
	DepErrors, DepBodies bool
	// Bindings also runs the binding lint (bindings.go) over the module's
	// packages, with the selector table at SelectorTable and the minimum
	// macOS read from the Info.plist at Plist.
	Bindings             bool
	SelectorTable, Plist string
}

// Result is what a check found.
type Result struct {
	Errors     []string // "file:line:col: message", sorted
	Packages   int      // packages type-checked from source (module and deps)
	Module     int      // of which the patterns' own packages
	Files      int      // files of the patterns' own packages
	OnlyTarget int      // of which files a host build does not see (e.g. *_darwin.go)
	Suppressed int      // follow-on errors of cgo's fake C types, ignored
	StdPkgs    int      // standard packages imported from export data
	Sends      int      // raw objc.Call sends the binding lint checked
	Elapsed    time.Duration
}

type listPkg struct {
	ImportPath string
	Dir        string
	Standard   bool
	DepOnly    bool
	ForTest    string
	GoFiles    []string
	CgoFiles   []string
	ImportMap  map[string]string
	Export     string
	Module     *struct{ GoVersion string }
	Error      *struct{ Err string }
}

// goList runs `go list -e -json=… args` with the given environment.
func goList(dir string, env []string, args ...string) ([]*listPkg, error) {
	cmd := exec.Command("go", append([]string{"list", "-e", "-json=ImportPath,Dir,Standard,DepOnly,ForTest,GoFiles,CgoFiles,ImportMap,Export,Module,Error"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	var pkgs []*listPkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		p := new(listPkg)
		if err := dec.Decode(p); err == io.EOF {
			break
		} else if err != nil {
			return nil, err
		}
		pkgs = append(pkgs, p)
	}
	return pkgs, nil
}

// importerFor resolves one package's imports: its ImportMap (test variants,
// vendoring), then the packages checked from source, then std export data.
type importerFor struct {
	importMap map[string]string
	checked   map[string]*types.Package
	std       types.Importer
}

func (im importerFor) Import(path string) (*types.Package, error) {
	if p, ok := im.importMap[path]; ok {
		path = p
	}
	if path == "unsafe" {
		return types.Unsafe, nil
	}
	if p := im.checked[path]; p != nil {
		return p, nil
	}
	return im.std.Import(path)
}

// Check type-checks the patterns' packages (and, API only, their
// dependencies) for the target platform. File selection and the import graph
// come from `go list -deps` run for the target with CGO_ENABLED=1 (go list
// never runs cgo, so no C compiler or SDK is needed); the standard library
// comes from gc export data of a pure-Go cross build (`go list -export`,
// CGO_ENABLED=0); every other package is type-checked from source with
// go/types and FakeImportC, so `import "C"` files are accepted and their C
// references left unchecked.
func Check(o Options) (*Result, error) {
	start := time.Now()
	if o.GOOS == "" {
		o.GOOS = "darwin"
	}
	if o.GOARCH == "" {
		o.GOARCH = "arm64"
	}
	if len(o.Patterns) == 0 {
		o.Patterns = []string{"./..."}
	}
	if o.Dir == "" {
		o.Dir = "."
	}
	target := []string{"GOOS=" + o.GOOS, "GOARCH=" + o.GOARCH}
	args := []string{"-deps"}
	if o.Tests {
		args = append(args, "-test")
	}
	if o.Tags != "" {
		args = append(args, "-tags="+o.Tags)
	}
	pkgs, err := goList(o.Dir, append(target, "CGO_ENABLED=1"), append(args, o.Patterns...)...)
	if err != nil {
		return nil, err
	}
	// Which files a host build sees, to count the target-only ones.
	hostArgs := []string{}
	if o.Tests {
		hostArgs = append(hostArgs, "-test")
	}
	if o.Tags != "" {
		hostArgs = append(hostArgs, "-tags="+o.Tags)
	}
	hostFiles := map[string]bool{}
	if host, err := goList(o.Dir, nil, append(hostArgs, o.Patterns...)...); err == nil {
		for _, p := range host {
			for _, f := range append(append([]string{}, p.GoFiles...), p.CgoFiles...) {
				hostFiles[filepath.Join(p.Dir, f)] = true
			}
		}
	}

	res := &Result{}
	var stdPaths []string
	for _, p := range pkgs {
		if p.Standard && p.ImportPath != "unsafe" && p.ImportPath != "C" {
			stdPaths = append(stdPaths, p.ImportPath)
		}
	}
	exports := map[string]string{}
	if len(stdPaths) > 0 {
		std, err := goList(o.Dir, append(target, "CGO_ENABLED=0"), append([]string{"-export"}, stdPaths...)...)
		if err != nil {
			return nil, err
		}
		for _, p := range std {
			if p.Export != "" {
				exports[p.ImportPath] = p.Export
			}
		}
	}
	res.StdPkgs = len(stdPaths)
	fset := token.NewFileSet()
	stdImp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		f := exports[path]
		if f == "" {
			return nil, fmt.Errorf("no export data for %q (GOOS=%s GOARCH=%s)", path, o.GOOS, o.GOARCH)
		}
		return os.Open(f)
	})

	checked := map[string]*types.Package{}
	sizes := types.SizesFor("gc", o.GOARCH)
	seenErr := map[string]bool{}
	report := func(msg string) {
		if !seenErr[msg] { // test variants re-check the same files
			seenErr[msg] = true
			res.Errors = append(res.Errors, msg)
		}
	}
	counted := map[string]bool{}
	var lint *bindingLint
	if o.Bindings {
		lint = &bindingLint{ix: newDarwinkitIndex(), checked: checked, sizes: sizes, fset: fset, sends: map[token.Pos]bool{}}
		if o.SelectorTable != "" {
			if lint.table, err = readSelectorTable(o.SelectorTable); err != nil {
				return nil, err
			}
		}
		if o.Plist != "" {
			if lint.minOS, err = readMinOS(o.Plist); err != nil {
				return nil, err
			}
		}
	}
	for _, p := range pkgs { // go list -deps lists dependencies before dependents
		if p.Standard || strings.HasSuffix(p.ImportPath, ".test") {
			continue // std from export data; generated test mains
		}
		own := !p.DepOnly
		if p.Error != nil {
			if own || o.DepErrors {
				report(fmt.Sprintf("%s: %s", p.ImportPath, strings.TrimSpace(p.Error.Err)))
			}
			continue
		}
		var files []*ast.File
		for _, name := range append(append([]string{}, p.GoFiles...), p.CgoFiles...) {
			path := filepath.Join(p.Dir, name)
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution|parser.ParseComments)
			if err != nil {
				report(err.Error())
				continue
			}
			files = append(files, f)
			if own && !counted[path] {
				counted[path] = true
				res.Files++
				if !hostFiles[path] {
					res.OnlyTarget++
				}
			}
		}
		conf := types.Config{
			FakeImportC:      true,
			Importer:         importerFor{p.ImportMap, checked, stdImp},
			Sizes:            sizes,
			IgnoreFuncBodies: !own && !o.DepBodies,
			Error: func(err error) {
				// FakeImportC gives every C.xxx an invalid type; errors that
				// only follow from it (unsafe.Pointer(x) with x a *C.T …) are
				// cgo artefacts, not mistakes in Go code.
				if strings.Contains(err.Error(), "invalid type") {
					res.Suppressed++
					return
				}
				if own || o.DepErrors {
					report(err.Error())
				}
			},
		}
		if p.Module != nil && p.Module.GoVersion != "" {
			conf.GoVersion = "go" + p.Module.GoVersion
		}
		var info *types.Info
		if lint != nil && own {
			info = &types.Info{Types: map[ast.Expr]types.TypeAndValue{}, Uses: map[*ast.Ident]types.Object{}}
		}
		pkg, _ := conf.Check(p.ImportPath, fset, files, info)
		checked[p.ImportPath] = pkg
		if lint != nil {
			if strings.HasPrefix(p.ImportPath, darwinkitPath+"/") {
				lint.ix.add(p.ImportPath, files)
			} else if own {
				for _, f := range files {
					lint.checkFile(f, info)
				}
			}
		}
		res.Packages++
		if own && p.ForTest == "" {
			res.Module++
		}
	}
	if lint != nil {
		seen := map[string]bool{}
		for _, f := range lint.sortedFindings() {
			if !seen[f] { // test variants re-check the same files
				seen[f] = true
				res.Errors = append(res.Errors, f)
			}
		}
		res.Sends = len(lint.sends)
	}
	sort.Strings(res.Errors)
	res.Elapsed = time.Since(start)
	return res, nil
}

// ErrTypeErrors is returned by run when the check found errors.
var ErrTypeErrors = errors.New("darwincheck: type errors")
