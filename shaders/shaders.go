package shaders

import (
	"embed"
	"fmt"
	"io/fs"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

//go:embed *.metal *.h
var files embed.FS

// Files returns the shader sources: the *.metal files and the headers they
// include (common.h, kargs.h).
func Files() fs.FS { return files }

// Headers lists the shared headers in the order Source places them.
var Headers = []string{"kargs.h", "common.h", "gemm.h"}

// MetalFiles lists the *.metal files in lexical order.
func MetalFiles() []string {
	names, err := fs.Glob(files, "*.metal")
	if err != nil {
		panic(err)
	}
	sort.Strings(names)
	return names
}

func read(name string) string {
	b, err := files.ReadFile(name)
	if err != nil {
		panic(err)
	}
	return string(b)
}

var quoteInclude = regexp.MustCompile(`(?m)^[ \t]*#[ \t]*include[ \t]*"[^"]*"[ \t]*$`)

// Prelude opens Source: the standard library comes before any header (kargs.h
// already uses its types).
const Prelude = "#include <metal_stdlib>\nusing namespace metal;\n"

// Source returns the whole library as one Metal source, as the Metal
// compiler receives it (it cannot open include files): Prelude, the headers, then
// every .metal file in lexical order, each introduced by a #line directive so
// that compiler diagnostics name the file and line; `#include "…"` lines are
// blanked (the headers are already in).
func Source() string {
	var b strings.Builder
	b.WriteString(Prelude)
	for _, name := range append(append([]string{}, Headers...), MetalFiles()...) {
		fmt.Fprintf(&b, "#line 1 \"%s\"\n", name)
		b.WriteString(quoteInclude.ReplaceAllString(read(name), ""))
		b.WriteString("\n")
	}
	return b.String()
}

// EntryPoint is one kernel function the library exports.
type EntryPoint struct {
	Name string
	File string
	Line int
}

var (
	hostNameRe  = regexp.MustCompile(`host_name\(\s*"([^"]+)"\s*\)`)
	kernelDefRe = regexp.MustCompile(`(?:\bkernel|\[\[\s*kernel\s*\]\])\s+void\s+([A-Za-z_]\w*)\s*\(`)
	commentRe   = regexp.MustCompile(`(?s)/\*.*?\*/|//[^\n]*`)
)

// stripComments blanks comments, keeping newlines.
func stripComments(s string) string {
	return commentRe.ReplaceAllStringFunc(s, func(c string) string {
		return strings.Repeat("\n", strings.Count(c, "\n"))
	})
}

// EntryPoints lists the kernels of every .metal file: each plain
// `kernel void name(` definition that is not a template, and each
// `[[host_name("name")]]` instantiation of a template kernel.
func EntryPoints() []EntryPoint {
	var eps []EntryPoint
	for _, f := range MetalFiles() {
		s := stripComments(read(f))
		lineAt := func(off int) int { return 1 + strings.Count(s[:off], "\n") }
		seen := map[string]bool{}
		for _, m := range hostNameRe.FindAllStringSubmatchIndex(s, -1) {
			name := s[m[2]:m[3]]
			if !seen[name] {
				seen[name] = true
				eps = append(eps, EntryPoint{Name: name, File: f, Line: lineAt(m[0])})
			}
		}
		for _, m := range kernelDefRe.FindAllStringSubmatchIndex(s, -1) {
			if isTemplate(s, m[0]) {
				continue
			}
			name := s[m[2]:m[3]]
			if !seen[name] {
				seen[name] = true
				eps = append(eps, EntryPoint{Name: name, File: f, Line: lineAt(m[0])})
			}
		}
	}
	sort.Slice(eps, func(i, j int) bool { return eps[i].Name < eps[j].Name })
	return eps
}

// isTemplate reports whether the definition at off is preceded, since the
// end of the previous declaration, by `template <`.
func isTemplate(s string, off int) bool {
	start := strings.LastIndexAny(s[:off], ";}") + 1
	return regexp.MustCompile(`\btemplate\s*<`).MatchString(s[start:off])
}

// Diagnostic is one message of the Metal compiler.
type Diagnostic struct {
	File     string // e.g. "norm.metal"
	Line     int
	Column   int
	Severity string // "error", "warning", "note"
	Message  string
	Kernel   string // the kernel whose source holds the line, if any
}

func (d Diagnostic) String() string {
	k := ""
	if d.Kernel != "" {
		k = " (in " + d.Kernel + ")"
	}
	return fmt.Sprintf("%s:%d:%d: %s: %s%s", d.File, d.Line, d.Column, d.Severity, d.Message, k)
}

var diagRe = regexp.MustCompile(`(?m)^([^\s:]+):(\d+):(\d+): (error|warning|note): (.*)$`)

// ParseDiagnostics extracts the file:line:column messages of a compiler log
// (the Metal compiler's NSError text or clang's output) and names the kernel
// around each line.
func ParseDiagnostics(log string) []Diagnostic {
	var ds []Diagnostic
	for _, m := range diagRe.FindAllStringSubmatch(log, -1) {
		line, _ := strconv.Atoi(m[2])
		col, _ := strconv.Atoi(m[3])
		d := Diagnostic{File: m[1], Line: line, Column: col, Severity: m[4], Message: m[5]}
		d.Kernel = KernelAt(d.File, d.Line)
		ds = append(ds, d)
	}
	return ds
}

// KernelAt returns the kernel (or template kernel) whose definition spans
// line of file, or "".
func KernelAt(file string, line int) string {
	b, err := files.ReadFile(file)
	if err != nil {
		return ""
	}
	s := stripComments(string(b))
	lines := strings.SplitAfter(s, "\n")
	if line < 1 || line > len(lines) {
		return ""
	}
	off := 0
	for _, l := range lines[:line-1] {
		off += len(l)
	}
	var name string
	var start int
	for _, m := range kernelDefRe.FindAllStringSubmatchIndex(s, -1) {
		if m[0] > off+len(lines[line-1]) {
			break
		}
		name, start = s[m[2]:m[3]], m[0]
	}
	if name == "" {
		return ""
	}
	// The definition ends at the brace closing its body.
	depth, opened := 0, false
	for i := start; i < len(s); i++ {
		switch s[i] {
		case '{':
			depth++
			opened = true
		case '}':
			depth--
			if opened && depth == 0 {
				if off > i {
					return ""
				}
				return name
			}
		}
	}
	return name
}
