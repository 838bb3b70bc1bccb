//go:build linux

package mslcpu

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// Rules of the Metal Shading Language that the CPU harness would otherwise
// let pass (it erases attributes and address spaces), checked by Translate so
// that a shader Apple's compiler rejects fails on Linux too. One rejected
// kernel fails the whole library, and with it every kernel on the GPU.
//   - Grid attributes (thread_position_in_grid, threads_per_grid,
//     thread_position_in_threadgroup, threads_per_threadgroup,
//     threadgroup_position_in_grid, dispatch_threads_per_threadgroup,
//     threadgroups_per_grid) of one kernel agree in vector width (MSL spec,
//     kernel function attributes).
//   - [[buffer(n)]] indices of a kernel are unique and at most 30.
//   - Address spaces: a helper's pointer and reference parameters name their
//     address space (device, constant, threadgroup, thread), and a call
//     passes each such parameter a value of that address space.

// gridWidth is the component count of a grid attribute's type: 1 for a
// scalar, N for a vector typeN.
func gridWidth(typ string) int {
	f := strings.Fields(typ)
	if len(f) == 0 {
		return 0
	}
	last := f[len(f)-1]
	if m := vecTypeRe.FindStringSubmatch(last); m != nil {
		n, _ := strconv.Atoi(last[len(m[1]):])
		return n
	}
	return 1
}

// kernelRules checks one kernel signature's parameters.
func (x *translator) kernelRules(at token, k *Kernel) {
	var grid []Param
	width := map[int]bool{}
	bufs := map[int]string{}
	for _, p := range k.Params {
		switch p.Role {
		case RolePosition:
			grid = append(grid, p)
			width[gridWidth(p.Type)] = true
		case RoleBuffer:
			if other, dup := bufs[p.Index]; dup {
				x.errorf(at, "kernel %s: [[buffer(%d)]] bound twice (%s and %s)", k.Name, p.Index, other, p.Name)
			}
			bufs[p.Index] = p.Name
			if p.Index > 30 {
				x.errorf(at, "kernel %s: [[buffer(%d)]] of %s: Metal has buffer indices 0…30", k.Name, p.Index, p.Name)
			}
		}
	}
	if len(width) > 1 {
		var ds []string
		for _, p := range grid {
			ds = append(ds, p.Type+" "+p.Name+" [["+p.Builtin+"]]")
		}
		x.errorf(at, "kernel %s: grid attributes disagree in vector width (%s): MSL requires them all scalar or all vectors of one width, and one rejected kernel fails the whole library",
			k.Name, strings.Join(ds, ", "))
	}
}

var addressSpaces = map[string]bool{"device": true, "constant": true, "threadgroup": true, "thread": true}

// helperParam is a helper's parameter as far as address spaces go.
type helperParam struct {
	name  string
	space string // "" for a value parameter
}

// addressSpaceRules scans the preprocessed tokens of a file: helper
// definitions at file scope (their pointer and reference parameters must
// name an address space), then every call of a helper inside a function
// body, comparing the address space of each argument rooted at a pointer
// parameter or threadgroup array with the helper's parameter.
func (x *translator) addressSpaceRules() {
	helpers := map[string][][]helperParam{} // overloads
	depth := 0
	var vars map[string]string // address space of the current function's pointers and arrays
	var fn string
	for i := 0; i < len(x.toks); i++ {
		t := x.toks[i]
		if t.k == tSpace {
			continue
		}
		switch t.s {
		case "{":
			depth++
			continue
		case "}":
			depth--
			continue
		}
		own := !strings.HasPrefix(t.file, "<") && !(strings.HasSuffix(t.file, ".h") && strings.Contains(t.file, "/usr/"))
		if depth == 0 && t.k == tIdent && !cKeywords[t.s] {
			lp := x.next(i + 1)
			if x.is(lp, "<") && !x.is(x.prev(i), "template") {
				lp = x.next(x.match(lp) + 1)
			}
			if !x.is(lp, "(") {
				continue
			}
			rp := x.match(lp)
			if !x.is(x.next(rp+1), "{") {
				continue
			}
			fn = t.s
			params := x.signature(lp, rp)
			vars = map[string]string{}
			for _, p := range params {
				if p.space != "" {
					vars[p.name] = p.space
				}
			}
			if !x.isKernel(i) {
				for _, p := range params {
					if p.space == "?" && own {
						x.errorf(t, "helper %s: pointer or reference parameter %s names no address space (write device, constant, threadgroup or thread: an unqualified one is thread in MSL)", fn, p.name)
					}
				}
				helpers[fn] = append(helpers[fn], params)
			}
			i = rp
			continue
		}
		if depth == 0 || vars == nil {
			continue
		}
		// threadgroup storage and local pointers declared in the body
		if addressSpaces[t.s] {
			for j := x.next(i + 1); j < len(x.toks) && j < i+12; j = x.next(j + 1) {
				if x.toks[j].k == tIdent && !addressSpaces[x.toks[j].s] && (x.is(x.prev(j), "*") || x.is(x.prev(j), "&") || t.s == "threadgroup" && x.is(x.next(j+1), "[")) {
					vars[x.toks[j].s] = t.s
					break
				}
				if x.is(j, ";") || x.is(j, "=") || x.is(j, ")") {
					break
				}
			}
			continue
		}
		ovs, ok := helpers[t.s]
		if !ok || t.k != tIdent || x.is(x.prev(i), ".") {
			continue
		}
		lp := x.next(i + 1)
		if x.is(lp, "<") {
			lp = x.next(x.match(lp) + 1)
		}
		if !x.is(lp, "(") {
			continue
		}
		args := x.splitArgs(lp, x.match(lp))
		var bad string
		fits := false
		for _, ps := range ovs {
			if len(ps) != len(args) {
				continue
			}
			mismatch := ""
			for a, p := range ps {
				if p.space == "" || p.space == "?" {
					continue
				}
				if root, sp := x.argSpace(args[a], vars); sp != "" && sp != p.space {
					mismatch = join(args[a]) + " (" + sp + ", through " + root + ") to " + t.s + "'s " + p.space + " parameter " + p.name
					break
				}
			}
			if mismatch == "" {
				fits = true
				break
			}
			bad = mismatch
		}
		if !fits && bad != "" && own {
			x.errorf(t, "%s: address spaces disagree: passes %s (Metal rejects binding one address space to another)", fn, bad)
		}
	}
}

var cKeywords = map[string]bool{"if": true, "for": true, "while": true, "switch": true, "return": true, "sizeof": true,
	"decltype": true, "static_assert": true, "alignof": true}

// isKernel reports whether the function named at i is a kernel.
func (x *translator) isKernel(i int) bool {
	for j := x.prev(i); j >= 0 && j > i-8; j = x.prev(j) {
		s := x.toks[j].s
		if s == "kernel" {
			return true
		}
		if s == "]" && x.is(x.prev(j), "]") {
			if _, txt, ok := x.attrAt(x.prev(x.prev(x.prev(j)))); ok && txt == "kernel" {
				return true
			}
		}
		if s == ";" || s == "}" || s == "{" {
			return false
		}
	}
	return false
}

// signature reads a parameter list: each parameter's name and, for a pointer
// or reference, its address space ("?" when it names none).
func (x *translator) signature(lp, rp int) []helperParam {
	var out []helperParam
	for _, arg := range x.splitArgs(lp, rp) {
		p := helperParam{}
		indirect := false
		for j, t := range arg {
			if j+1 < len(arg) && t.s == "[" && arg[j+1].s == "[" {
				break // attributes follow the name
			}
			switch {
			case t.s == "*" || t.s == "&":
				indirect = true
			case addressSpaces[t.s]:
				p.space = t.s
			case t.k == tIdent:
				p.name = t.s
			}
		}
		if p.name == "" || p.name == "void" {
			continue
		}
		if !indirect {
			p.space = ""
		} else if p.space == "" {
			p.space = "?"
		}
		out = append(out, p)
	}
	return out
}

// splitArgs splits the tokens between lp and rp at top-level commas,
// dropping whitespace.
func (x *translator) splitArgs(lp, rp int) [][]token {
	var out [][]token
	var cur []token
	depth := 0
	for k := lp + 1; k < rp; k++ {
		t := x.toks[k]
		if t.k == tSpace {
			continue
		}
		switch t.s {
		case "(", "[", "{":
			depth++
		case ")", "]", "}":
			depth--
		case "<":
			if k > 0 && x.toks[x.prev(k)].k == tIdent && isTemplateName(x.toks[x.prev(k)].s) {
				depth++
			}
		case ">":
			if depth > 0 && x.opensTemplate(cur) {
				depth--
			}
		case ",":
			if depth == 0 {
				out = append(out, cur)
				cur = nil
				continue
			}
		}
		cur = append(cur, t)
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// isTemplateName: names that take <…> in the project's shaders.
func isTemplateName(s string) bool {
	return s == "st" || s == "round_to" || s == "as_type" || s == "static_cast" || s == "reinterpret_cast" ||
		strings.HasPrefix(s, "simdgroup_") || s == "vec" || s == "array"
}

func (x *translator) opensTemplate(cur []token) bool {
	d := 0
	for i, t := range cur {
		if t.s == "<" && i > 0 && cur[i-1].k == tIdent && isTemplateName(cur[i-1].s) {
			d++
		} else if t.s == ">" && d > 0 {
			d--
		}
	}
	return d > 0
}

// argSpace is the address space of an argument expression rooted at a
// known pointer or array (p, p[i], *p, p + i, p->f): its root name and
// space, or "" when the root is not one.
func (x *translator) argSpace(arg []token, vars map[string]string) (string, string) {
	k := 0
	for k < len(arg) && (arg[k].s == "*" || arg[k].s == "&" || arg[k].s == "(") {
		k++
	}
	if k >= len(arg) || arg[k].k != tIdent {
		return "", ""
	}
	root := arg[k].s
	sp, ok := vars[root]
	if !ok {
		return "", ""
	}
	// a member of a struct reached by value, or a call's result, is not in the root's space
	for j := k + 1; j < len(arg); j++ {
		if arg[j].s == "(" {
			return "", ""
		}
	}
	return root, sp
}

// CheckRules preprocesses and translates a whole library source (as the
// Metal backend hands it to the Metal compiler) without compiling it: the
// house style and the MSL rules above, every diagnostic naming the .metal
// file and line.
func (tc *Toolchain) CheckRules(source string) error {
	_, tmp, _, err := tc.libraryUnit(source)
	os.RemoveAll(tmp)
	return err
}

// CheckAddressSpaces compiles a whole library source as C++ for OpenCL
// (clang -x clcpp -cl-std=clc++2021): msl_shim.h maps device, constant,
// threadgroup and thread to __global, __constant, __local and __private
// (MSL_ADDRESS_SPACES), threadgroup storage comes from the arena as __local,
// and the glue is left out. The compiler then rejects what Metal's would: a
// device or threadgroup value bound to a thread reference or pointer, a
// pointer of one space assigned to another. Diagnostics name .metal lines.
func (tc *Toolchain) CheckAddressSpaces(source string) error {
	tu, tmp, cxxDir, err := tc.libraryUnit(source)
	defer os.RemoveAll(tmp)
	if err != nil {
		return err
	}
	if i := strings.Index(tu, "\n#line 1 \"<glue>\""); i >= 0 {
		tu = tu[:i+1]
	}
	args := []string{"-x", "clcpp", "-cl-std=clc++2021", "-cl-no-stdinc", "-fsyntax-only", "-w", "-DMSL_ADDRESS_SPACES", "-I", cxxDir}
	for _, d := range tc.cxxIncludes() {
		args = append(args, "-isystem", d)
	}
	return tc.checkSyntax(tu, tmp, "library.clcpp", "library (address spaces, C++ for OpenCL)", args...)
}

// cxxIncludes lists the C++ standard library's include folders, which the
// OpenCL mode does not search by itself (the shim includes <type_traits>).
func (tc *Toolchain) cxxIncludes() []string {
	cmd := exec.Command(tc.CXX, "-x", "c++", "-std=c++17", "-E", "-v", os.DevNull)
	out, _ := cmd.CombinedOutput()
	var dirs []string
	in := false
	for _, l := range strings.Split(string(out), "\n") {
		switch {
		case strings.HasPrefix(l, "#include <...> search starts here:"):
			in = true
		case strings.HasPrefix(l, "End of search list."):
			in = false
		case in:
			dirs = append(dirs, strings.TrimSpace(l))
		}
	}
	return dirs
}
