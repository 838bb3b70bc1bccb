// Command darwincheck type-checks the module as if it were built for macOS
// on Apple Silicon (GOOS=darwin GOARCH=arm64), on any host, without a macOS
// SDK or a C compiler. It catches type errors in darwin-only files (Metal
// and AVFoundation code behind //go:build darwin, *_darwin.go) that a Linux
// `go build`/`go vet` never compiles.
//
// Usage:
//
//	go run ./tools/darwincheck [-goarch arm64] [-tags t] [-test=false] [-v] [packages]
//
// How: see Check. What it cannot check: anything on the C side of cgo
// (function arity, Objective-C in preambles), objc selector strings and
// message argument types, linking, go:embed patterns and assembly. It exits
// 1 when it finds type errors, 2 when it cannot run.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("darwincheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o Options
	fs.StringVar(&o.GOOS, "goos", "darwin", "target GOOS")
	fs.StringVar(&o.GOARCH, "goarch", "arm64", "target GOARCH")
	fs.StringVar(&o.Tags, "tags", "", "comma-separated build tags")
	fs.StringVar(&o.Dir, "C", ".", "run in this `directory` (module root or below)")
	fs.BoolVar(&o.Tests, "test", true, "also type-check _test.go files")
	fs.BoolVar(&o.DepErrors, "deperrors", false, "also report type errors in dependencies")
	fs.BoolVar(&o.DepBodies, "depbodies", false, "also type-check dependencies' function bodies")
	fs.BoolVar(&o.Bindings, "bindings", false, "also lint darwinkit use: WrapAsProtocol wrappers, raw objc.Call selectors and arguments")
	fs.StringVar(&o.SelectorTable, "selectors", "", "the selector `table` for -bindings (class, selector, ObjC argument types, macOS)")
	fs.StringVar(&o.Plist, "plist", "", "the `Info.plist` whose LSMinimumSystemVersion -bindings assumes")
	verbose := fs.Bool("v", false, "print counts and timing")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	o.Patterns = fs.Args()
	res, err := Check(o)
	if err != nil {
		fmt.Fprintln(stderr, "darwincheck:", err)
		return 2
	}
	for _, e := range res.Errors {
		fmt.Fprintln(stderr, e)
	}
	if *verbose || len(res.Errors) == 0 {
		fmt.Fprintf(stdout, "darwincheck: %s/%s: %d module packages, %d files (%d only in this target), %d packages from source, %d std from export data, %d cgo artefacts ignored, %v\n",
			o.GOOS, o.GOARCH, res.Module, res.Files, res.OnlyTarget, res.Packages, res.StdPkgs, res.Suppressed, res.Elapsed.Round(1e6))
	}
	if o.Bindings {
		fmt.Fprintf(stdout, "darwincheck: binding lint: %d raw objc.Call sends checked\n", res.Sends)
	}
	if len(res.Errors) > 0 {
		fmt.Fprintf(stderr, "%v: %d in the %s/%s build\n", ErrTypeErrors, len(res.Errors), o.GOOS, o.GOARCH)
		return 1
	}
	return 0
}
