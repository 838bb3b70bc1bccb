// Command checklayers enforces H3 Studio's layering rules on the module's
// import graph, for both linux and darwin builds:
//
//  1. Only darwin/... imports darwinkit or uses cgo (import "C").
//  2. Nothing under engine/... imports Fyne.
//  3. ui/... imports no engine/... package except the engine façade,
//     engine/media, engine/snapshot (value types) and engine/take (the
//     take record).
//  4. Model packages never import a concrete backend (engine/compute/cpu,
//     engine/compute/metal); only app/, tools/, tests and the backends'
//     own test suites may.
//  5. The UI state (ui/studio/...) imports neither Fyne nor the Fyne
//     packages ui and ui/widgets: it stays testable without a display.
//
// Usage: go run ./tools/checklayers ./...
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
)

// Package is the subset of `go list -json` output the rules need.
type Package struct {
	ImportPath string
	Imports    []string
	CgoFiles   []string
	Module     *struct{ Path string }
}

func main() {
	patterns := os.Args[1:]
	if len(patterns) == 0 {
		patterns = []string{"./..."}
	}
	var violations []string
	for _, goos := range []string{"linux", "darwin"} {
		pkgs, err := list(goos, patterns)
		if err != nil {
			fmt.Fprintln(os.Stderr, "checklayers:", err)
			os.Exit(2)
		}
		for _, v := range Check(pkgs) {
			violations = append(violations, goos+": "+v)
		}
	}
	sort.Strings(violations)
	violations = dedupe(violations)
	for _, v := range violations {
		fmt.Println(v)
	}
	if len(violations) > 0 {
		fmt.Printf("checklayers: %d violation(s)\n", len(violations))
		os.Exit(1)
	}
	fmt.Println("checklayers: layering rules hold (linux and darwin import graphs)")
}

func dedupe(s []string) []string {
	var out []string
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

func list(goos string, patterns []string) ([]Package, error) {
	cmd := exec.Command("go", append([]string{"list", "-e", "-json"}, patterns...)...)
	cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH=arm64", "CGO_ENABLED=1")
	if goos == "linux" {
		cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH=amd64")
	}
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list (GOOS=%s): %w", goos, err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	var pkgs []Package
	for {
		var p Package
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return nil, err
		}
		pkgs = append(pkgs, p)
	}
	return pkgs, nil
}

// Check applies the rules to a module's packages and returns violations.
func Check(pkgs []Package) []string {
	var v []string
	for _, p := range pkgs {
		mod := modulePath(p)
		rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, mod), "/")
		under := func(dir string) bool { return rel == dir || strings.HasPrefix(rel, dir+"/") }
		inDarwin := under("darwin")
		if !inDarwin && len(p.CgoFiles) > 0 {
			v = append(v, fmt.Sprintf("%s uses cgo (%s): cgo belongs under darwin/ (rule 1)", p.ImportPath, strings.Join(p.CgoFiles, ", ")))
		}
		for _, imp := range p.Imports {
			switch {
			case strings.HasPrefix(imp, "github.com/progrium/darwinkit") && !inDarwin:
				v = append(v, fmt.Sprintf("%s imports %s: darwinkit belongs under darwin/ (rule 1)", p.ImportPath, imp))
			case strings.HasPrefix(imp, "fyne.io/") && under("engine"):
				v = append(v, fmt.Sprintf("%s imports %s: engine/ must not depend on Fyne (rule 2)", p.ImportPath, imp))
			case under("ui/studio") && (strings.HasPrefix(imp, "fyne.io/") || imp == mod+"/ui" || strings.HasPrefix(imp, mod+"/ui/widgets")):
				v = append(v, fmt.Sprintf("%s imports %s: the UI state (ui/studio) must stay Fyne-free, testable without a display (rule 5)", p.ImportPath, imp))
			}
			irel, internal := strings.CutPrefix(imp, mod+"/")
			if !internal {
				continue
			}
			if under("ui") && strings.HasPrefix(irel, "engine/") && !allowedForUI(irel) {
				v = append(v, fmt.Sprintf("%s imports %s: ui/ may use only engine, engine/media, engine/snapshot and engine/take (rule 3)", p.ImportPath, imp))
			}
			if isModelPackage(rel) && (irel == "engine/compute/cpu" || irel == "engine/compute/metal") {
				v = append(v, fmt.Sprintf("%s imports %s: model code must not know a concrete backend (rule 4)", p.ImportPath, imp))
			}
		}
	}
	return v
}

func allowedForUI(rel string) bool {
	return rel == "engine" || rel == "engine/media" || strings.HasPrefix(rel, "engine/media/") || rel == "engine/snapshot" || rel == "engine/take"
}

// isModelPackage reports whether a package is model code: everything under
// engine/ except the backends themselves and their test suites.
func isModelPackage(rel string) bool {
	if !strings.HasPrefix(rel, "engine/") {
		return false
	}
	if strings.HasPrefix(rel, "engine/compute/") {
		return false // backends and computetest
	}
	return true
}

func modulePath(p Package) string {
	if p.Module != nil {
		return p.Module.Path
	}
	if i := strings.Index(p.ImportPath, "/"); i > 0 {
		return p.ImportPath[:i]
	}
	return p.ImportPath
}
