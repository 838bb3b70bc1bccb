//go:build linux

package mslcpu

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// This file lowers preprocessed MSL to C++ that compiles against msl_shim.h.
// The rewrite is token-level and keeps every newline, so the preprocessor's
// line markers still point into the .metal files and the compiler's
// diagnostics and the runtime's error sites name .metal lines:
//   - every [[attribute]] is blanked; kernel parameters' attributes are kept
//     as roles (buffer index, threadgroup index, builtin) for the glue;
//   - `threadgroup T name[N];` storage inside function bodies becomes a
//     reference to a per-group arena slot;
//   - `template [[host_name("x")]] [[kernel]] decltype(f<T>) f<T>;`
//     instantiations are recorded as entry points and blanked (the glue calls
//     f<T> directly);
//   - the house style is enforced (see lint).

type tokKind int

const (
	tSpace tokKind = iota // whitespace, comments and preprocessor lines
	tIdent
	tNum
	tStr
	tPunct
)

type token struct {
	k    tokKind
	s    string
	file string // source position from the preprocessor's line markers
	line int
}

var lineMarker = regexp.MustCompile(`^#\s*(?:line\s+)?(\d+)\s+"([^"]*)"`)

// tokenize splits preprocessed source. Positions follow `# N "file"` markers.
func tokenize(src string) []token {
	var out []token
	file, line := "<source>", 1
	i := 0
	bol := true
	emit := func(k tokKind, s string) {
		out = append(out, token{k: k, s: s, file: file, line: line})
		line += strings.Count(s, "\n")
	}
	isIdent := func(c byte) bool {
		return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
	}
	for i < len(src) {
		c := src[i]
		switch {
		case c == '#' && bol:
			j := i
			for j < len(src) && !(src[j] == '\n' && src[j-1] != '\\') {
				j++
			}
			text := src[i:j]
			out = append(out, token{k: tSpace, s: text, file: file, line: line})
			if m := lineMarker.FindStringSubmatch(text); m != nil {
				n, _ := strconv.Atoi(m[1])
				file, line = m[2], n-1 // the newline ending the marker moves to n
			} else {
				line += strings.Count(text, "\n")
			}
			i = j
			continue
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			j := i
			for j < len(src) && strings.IndexByte(" \t\r\n", src[j]) >= 0 {
				if src[j] == '\n' {
					bol = true
				}
				j++
			}
			emit(tSpace, src[i:j])
			i = j
			continue
		case strings.HasPrefix(src[i:], "//"):
			j := strings.IndexByte(src[i:], '\n')
			if j < 0 {
				j = len(src) - i
			}
			emit(tSpace, src[i:i+j])
			i += j
		case strings.HasPrefix(src[i:], "/*"):
			j := strings.Index(src[i+2:], "*/")
			end := len(src)
			if j >= 0 {
				end = i + 2 + j + 2
			}
			emit(tSpace, src[i:end])
			i = end
		case c == '"' || c == '\'':
			j := i + 1
			for j < len(src) && src[j] != c && src[j] != '\n' {
				if src[j] == '\\' {
					j++
				}
				j++
			}
			if j < len(src) {
				j++
			}
			emit(tStr, src[i:j])
			i = j
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			j := i
			for j < len(src) && isIdent(src[j]) {
				j++
			}
			emit(tIdent, src[i:j])
			i = j
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(src) && src[i+1] >= '0' && src[i+1] <= '9':
			j := i + 1
			hex := strings.HasPrefix(src[i:], "0x") || strings.HasPrefix(src[i:], "0X")
			for j < len(src) {
				d := src[j]
				if d == '+' || d == '-' {
					p := src[j-1]
					if !hex && (p == 'e' || p == 'E') || hex && (p == 'p' || p == 'P') {
						j++
						continue
					}
					break
				}
				if d == '.' || isIdent(d) {
					j++
					continue
				}
				break
			}
			emit(tNum, src[i:j])
			i = j
		default:
			n := 1
			if i+1 < len(src) {
				switch src[i : i+2] {
				case "::", "->", "++", "--", "<=", ">=", "&&", "||", "<<", "==", "!=", "+=", "-=", "*=", "/=", "|=", "&=", "^=", "%=":
					n = 2
				}
			}
			emit(tPunct, src[i:i+n])
			i += n
		}
		bol = false
	}
	return out
}

// Role says how the glue passes a kernel parameter.
type Role int

// Parameter roles.
const (
	RoleBuffer      Role = iota // [[buffer(n)]]
	RoleThreadgroup             // [[threadgroup(n)]]
	RolePosition                // a 3-component builtin (positions, sizes)
	RoleIndex                   // a scalar builtin (indices, counts)
)

// Param is one kernel parameter.
type Param struct {
	Name    string
	Role    Role
	Index   int    // buffer or threadgroup index
	Builtin string // the builtin attribute, for RolePosition/RoleIndex
	Type    string // the declared type, e.g. "uint2" or "device const T*"
}

// Kernel is one entry point of a translated file.
type Kernel struct {
	Name   string // host-visible name
	Callee string // the C++ expression called by the glue: "f" or "f<float, float>"
	Params []Param
	File   string
	Line   int
}

// Translation is one translated file.
type Translation struct {
	Source  string   // rewritten source with the input's line structure
	Kernels []Kernel // entry points in source order
}

// Error is a translation error at a source position.
type Error struct {
	File string
	Line int
	Msg  string
}

func (e *Error) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

// ErrorList holds every error of a translation.
type ErrorList []*Error

func (l ErrorList) Error() string {
	var b strings.Builder
	for i, e := range l {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

var positionBuiltins = map[string]string{
	"thread_position_in_grid":          "thread_position_in_grid",
	"thread_position_in_threadgroup":   "thread_position_in_threadgroup",
	"threadgroup_position_in_grid":     "threadgroup_position_in_grid",
	"threads_per_threadgroup":          "threads_per_threadgroup",
	"dispatch_threads_per_threadgroup": "dispatch_threads_per_threadgroup",
	"threadgroups_per_grid":            "threadgroups_per_grid",
	"threads_per_grid":                 "threads_per_grid",
}

var indexBuiltins = map[string]string{
	"thread_index_in_threadgroup":    "thread_index_in_threadgroup",
	"simdgroup_index_in_threadgroup": "simdgroup_index_in_threadgroup",
	"thread_index_in_simdgroup":      "thread_index_in_simdgroup",
	"simdgroups_per_threadgroup":     "simdgroups_per_threadgroup",
	"threads_per_simdgroup":          "threads_per_simdgroup",
	"thread_execution_width":         "threads_per_simdgroup",
}

var (
	vecTypeRe = regexp.MustCompile(`^(char|uchar|short|ushort|int|uint|long|ulong|half|bfloat|float)[234]$`)
	hostRe    = regexp.MustCompile(`^host_name\s*\(\s*"([^"]*)"\s*\)$`)
	bufRe     = regexp.MustCompile(`^(buffer|threadgroup)\s*\(\s*(\d+)\s*\)$`)
)

type translator struct {
	toks    []token
	out     strings.Builder
	errs    ErrorList
	tr      Translation
	defs    map[string]*Kernel // template kernels by name
	slot    int                // next threadgroup arena slot
	tmplAt0 bool               // `template <` seen at file scope since the last ; or }
}

func (x *translator) errorf(t token, format string, args ...any) {
	x.errs = append(x.errs, &Error{File: t.file, Line: t.line, Msg: fmt.Sprintf(format, args...)})
}

func (x *translator) next(i int) int {
	for i < len(x.toks) && x.toks[i].k == tSpace {
		i++
	}
	return i
}

func (x *translator) prev(i int) int {
	i--
	for i >= 0 && x.toks[i].k == tSpace {
		i--
	}
	return i
}

func (x *translator) is(i int, s string) bool { return i >= 0 && i < len(x.toks) && x.toks[i].s == s }

// brackets pairs each bracket with its partner.
var brackets = map[string]string{"(": ")", "[": "]", "{": "}", "<": ">", ")": "(", "]": "[", "}": "{", ">": "<"}

// match returns the index of the token closing the bracket opened at i (the
// last token where none closes it).
func (x *translator) match(i int) int { return x.partner(i, 1, len(x.toks)-1) }

// matchBack returns the index of the token opening the bracket closed at i,
// looking back no further than floor (floor where none opens it).
func (x *translator) matchBack(i, floor int) int { return x.partner(i, -1, floor) }

// partner walks from the bracket at i in direction step (+1, -1) to its
// partner at the same depth, returning limit where it reaches limit first.
func (x *translator) partner(i, step, limit int) int {
	this, other := x.toks[i].s, brackets[x.toks[i].s]
	d := 0
	for j := i; (limit-j)*step > 0; j += step {
		switch x.toks[j].s {
		case this:
			d++
		case other:
			d--
			if d == 0 {
				return j
			}
		}
	}
	return limit
}

// attrAt reports whether an [[attribute]] starts at i and returns its end
// (the second ']') and its text.
func (x *translator) attrAt(i int) (int, string, bool) {
	if !x.is(i, "[") || !x.is(i+1, "[") {
		return 0, "", false
	}
	e := x.match(i)
	return e, join(x.toks[i+2 : e-1]), true
}

func join(ts []token) string {
	var b strings.Builder
	for _, t := range ts {
		if t.k == tSpace {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			continue
		}
		if b.Len() > 0 && t.k == tIdent {
			if c := b.String()[b.Len()-1]; c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
				b.WriteByte(' ')
			}
		}
		b.WriteString(t.s)
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// blank writes the newlines of toks[i..j] only.
func (x *translator) blank(i, j int) {
	n := 0
	for k := i; k <= j; k++ {
		n += strings.Count(x.toks[k].s, "\n")
	}
	x.out.WriteString(" " + strings.Repeat("\n", n))
}

// Translate lowers one preprocessed .metal file (see the file comment).
func Translate(src string) (*Translation, error) {
	x := &translator{toks: tokenize(src), defs: map[string]*Kernel{}}
	x.addressSpaceRules()
	x.run()
	if len(x.errs) > 0 {
		return nil, x.errs
	}
	return &x.tr, nil
}

func (x *translator) run() {
	depth := 0
	for i := 0; i < len(x.toks); i++ {
		t := x.toks[i]
		x.lint(i)
		switch t.s {
		case "{":
			depth++
		case "}":
			depth--
			if depth == 0 {
				x.tmplAt0 = false
			}
		case ";":
			if depth == 0 {
				x.tmplAt0 = false
			}
		}
		if depth == 0 && t.s == "template" {
			n := x.next(i + 1)
			if x.is(n, "<") {
				x.tmplAt0 = true
			} else if e, txt, ok := x.attrAt(n); ok && hostRe.MatchString(txt) {
				if end, ok := x.instantiation(i, hostRe.FindStringSubmatch(txt)[1], e); ok {
					x.blank(i, end)
					i = end
					continue
				}
			}
		}
		if depth == 0 && (t.s == "kernel" || x.isKernelAttr(i)) {
			if end, ok := x.kernelDef(i); ok {
				i = end
				continue
			}
		}
		if e, _, ok := x.attrAt(i); ok {
			x.blank(i, e)
			i = e
			continue
		}
		if t.s == "threadgroup" && depth > 0 {
			if p := x.prev(i); p < 0 || x.is(p, ";") || x.is(p, "{") || x.is(p, "}") || x.is(p, ":") {
				if repl, end, ok := x.storage(i); ok {
					x.out.WriteString(repl)
					i = end
					continue
				}
			}
		}
		x.out.WriteString(t.s)
	}
	x.tr.Source = x.out.String()
}

func (x *translator) isKernelAttr(i int) bool {
	_, txt, ok := x.attrAt(i)
	return ok && txt == "kernel"
}

// kernelDef handles `kernel void name(params)` or `[[kernel]] void name(`
// at i: it records the entry point (or the template), writes the signature
// with attributes blanked and returns the index of the closing ')'.
func (x *translator) kernelDef(i int) (int, bool) {
	j := i
	if x.is(i, "[") {
		j, _, _ = x.attrAt(i)
	}
	v := x.next(j + 1)
	if !x.is(v, "void") {
		return 0, false
	}
	n := x.next(v + 1)
	if n >= len(x.toks) || x.toks[n].k != tIdent {
		return 0, false
	}
	lp := x.next(n + 1)
	if !x.is(lp, "(") {
		return 0, false
	}
	rp := x.match(lp)
	name := x.toks[n]
	k := &Kernel{Name: name.s, Callee: name.s, File: name.file, Line: name.line}
	k.Params = x.params(name.s, lp, rp)
	x.kernelRules(name, k)
	if x.tmplAt0 {
		x.defs[name.s] = k
	} else {
		x.tr.Kernels = append(x.tr.Kernels, *k)
	}
	// `kernel` and [[kernel]] vanish; the rest of the signature is written with attributes blanked.
	x.blank(i, j)
	for k := j + 1; k <= rp; k++ {
		if e, _, ok := x.attrAt(k); ok {
			x.blank(k, e)
			k = e
			continue
		}
		x.out.WriteString(x.toks[k].s)
	}
	return rp, true
}

// params parses the parameter list between lp and rp.
func (x *translator) params(kernel string, lp, rp int) []Param {
	var ps []Param
	start := lp + 1
	depth := 0
	flush := func(end int) {
		var attr string
		name := ""
		var at token
		nameAt := start
		for k := start; k < end; k++ {
			if e, txt, ok := x.attrAt(k); ok {
				attr = txt
				k = e
				continue
			}
			if x.toks[k].k == tIdent {
				name = x.toks[k].s
				at = x.toks[k]
				nameAt = k
			}
		}
		if name == "" {
			return
		}
		p := Param{Name: name, Type: join(x.toks[start:nameAt])}
		switch m := bufRe.FindStringSubmatch(attr); {
		case m != nil:
			p.Index, _ = strconv.Atoi(m[2])
			p.Role = RoleBuffer
			if m[1] == "threadgroup" {
				p.Role = RoleThreadgroup
			}
		case positionBuiltins[attr] != "":
			p.Role, p.Builtin = RolePosition, positionBuiltins[attr]
		case indexBuiltins[attr] != "":
			p.Role, p.Builtin = RoleIndex, indexBuiltins[attr]
		case attr == "":
			x.errorf(at, "kernel %s: parameter %s has no [[buffer(n)]] or builtin attribute (house style: explicit indices)", kernel, name)
		default:
			x.errorf(at, "kernel %s: parameter %s: unsupported attribute [[%s]]", kernel, name, attr)
		}
		ps = append(ps, p)
	}
	for k := lp + 1; k < rp; k++ {
		if e, _, ok := x.attrAt(k); ok {
			k = e
			continue
		}
		switch x.toks[k].s {
		case "(", "<", "[":
			depth++
		case ")", ">", "]":
			depth--
		case ",":
			if depth == 0 {
				flush(k)
				start = k + 1
			}
		}
	}
	flush(rp)
	return ps
}

// instantiation handles `template [[host_name("x")]] [[kernel]] decltype(f<A>) f<A>;`
// (or the full-signature form `... kernel void f<A>(...);`) starting at i.
func (x *translator) instantiation(i int, host string, attrEnd int) (int, bool) {
	end := attrEnd + 1
	for end < len(x.toks) && !x.is(end, ";") && !x.is(end, "{") {
		end++
	}
	if !x.is(end, ";") {
		x.errorf(x.toks[i], "host_name %q: instantiation does not end with ';'", host)
		return end, true
	}
	// The callee is the last `name<args>` before ';' or before a parameter list.
	stop := x.prev(end)
	if x.is(stop, ")") {
		lp := x.matchBack(stop, attrEnd)
		if p := x.prev(lp); !x.is(p, "decltype") {
			stop = x.prev(lp)
		}
	}
	if !x.is(stop, ">") {
		x.errorf(x.toks[i], "host_name %q: cannot find the instantiated template (want decltype(f<T>) f<T>;)", host)
		return end, true
	}
	base := x.prev(x.matchBack(stop, attrEnd))
	def, ok := x.defs[x.toks[base].s]
	if !ok {
		x.errorf(x.toks[i], "host_name %q: %s is not a kernel template defined above", host, x.toks[base].s)
		return end, true
	}
	k := Kernel{Name: host, Callee: join(x.toks[base : stop+1]), Params: def.Params, File: x.toks[i].file, Line: x.toks[i].line}
	x.tr.Kernels = append(x.tr.Kernels, k)
	return end, true
}

// storage rewrites `threadgroup T a[N], b[M];` (no pointers, references or
// initialisers) at i into arena references. ok is false for a pointer or
// reference declaration, which keeps `threadgroup` as an (erased)
// address-space qualifier; anything else is an error, never a silently
// thread-private array.
func (x *translator) storage(i int) (string, int, bool) {
	end := i
	brackets := 0
	pointer := false
	for ; end < len(x.toks) && !x.is(end, ";"); end++ {
		switch x.toks[end].s {
		case "[", "(":
			brackets++
		case "]", ")":
			brackets--
		case "*", "&":
			if brackets == 0 {
				pointer = true
			}
		case "=", "{":
			if brackets == 0 && !pointer {
				x.errorf(x.toks[i], "threadgroup variables cannot have initialisers")
				return "", end, false
			}
		}
	}
	if pointer {
		return "", 0, false
	}
	body := x.toks[i+1 : end]
	var decls [][]token
	depth, start := 0, 0
	for j, t := range body {
		switch t.s {
		case "[", "(":
			depth++
		case "]", ")":
			depth--
		case "<":
			if depth == 0 {
				depth += 1000 // template arguments of the type
			}
		case ">":
			if depth >= 1000 {
				depth -= 1000
			}
		case ",":
			if depth == 0 {
				decls = append(decls, body[start:j])
				start = j + 1
			}
		}
	}
	decls = append(decls, body[start:])
	first := decls[0]
	nameAt := -1
	for j, t := range first {
		if t.s == "[" {
			break
		}
		if t.k == tIdent {
			nameAt = j
		}
	}
	if nameAt <= 0 {
		x.errorf(x.toks[i], "cannot parse threadgroup declaration %q", join(x.toks[i:end]))
		return "", end, false
	}
	typ := join(first[:nameAt])
	var b strings.Builder
	for d, decl := range decls {
		if d == 0 {
			decl = first[nameAt:]
		}
		n := 0
		for n < len(decl) && decl[n].k == tSpace {
			n++
		}
		if n >= len(decl) || decl[n].k != tIdent {
			x.errorf(x.toks[i], "cannot parse threadgroup declaration %q", join(x.toks[i:end]))
			return "", end, false
		}
		fmt.Fprintf(&b, "auto& %s = *::msl::tg<%s%s>(%d); ", decl[n].s, typ, join(decl[n+1:]), x.slot)
		x.slot++
	}
	nl := 0
	for k := i; k <= end; k++ {
		nl += strings.Count(x.toks[k].s, "\n")
	}
	b.WriteString(strings.Repeat("\n", nl))
	return b.String(), end, true
}

// lint enforces the house style the harness depends on:
//   - floating literals carry a suffix (1.0f, 0.5h): an unsuffixed literal is
//     a double in C++;
//   - no C-style casts to vector types, `(float4)x`: clang bit-casts where
//     Metal converts; write float4(x);
//   - no double, textures, samplers or function constants.
func (x *translator) lint(i int) {
	t := x.toks[i]
	if strings.HasPrefix(t.file, "<") || strings.HasSuffix(t.file, ".h") && strings.Contains(t.file, "/usr/") {
		return
	}
	switch t.k {
	case tNum:
		s := strings.ToLower(t.s)
		if strings.HasPrefix(s, "0x") {
			if strings.Contains(s, "p") && !strings.HasSuffix(s, "f") && !strings.HasSuffix(s, "h") {
				x.errorf(t, "floating literal %s needs a suffix (f or h)", t.s)
			}
			return
		}
		if strings.ContainsAny(s, ".e") && !strings.HasSuffix(s, "f") && !strings.HasSuffix(s, "h") {
			x.errorf(t, "floating literal %s needs a suffix (f or h): unsuffixed literals are double in C++", t.s)
		}
	case tIdent:
		switch {
		case t.s == "double":
			x.errorf(t, "double is not part of MSL")
		case strings.HasPrefix(t.s, "texture") || t.s == "sampler" || t.s == "function_constant":
			x.errorf(t, "%s is not supported by the CPU harness", t.s)
		case vecTypeRe.MatchString(t.s):
			if x.is(x.prev(i), "(") && x.is(x.next(i+1), ")") {
				if p := x.prev(x.prev(i)); p < 0 || x.toks[p].k != tIdent || x.toks[p].s == "return" {
					x.errorf(t, "C-style cast to %s: write %s(x) (clang would bit-cast, Metal converts)", t.s, t.s)
				}
			}
		}
	}
}

// Glue returns C++ registering one trampoline per entry point.
func (tr *Translation) Glue() string {
	var b strings.Builder
	for n, k := range tr.Kernels {
		args := make([]string, len(k.Params))
		for i, p := range k.Params {
			switch p.Role {
			case RoleBuffer:
				args[i] = fmt.Sprintf("::mslrt::BufArg{%d}", p.Index)
			case RoleThreadgroup:
				args[i] = fmt.Sprintf("::mslrt::TgArg{%d}", p.Index)
			case RolePosition:
				args[i] = "::mslrt::BiArg{t->" + p.Builtin + "}"
			case RoleIndex:
				args[i] = "::mslrt::BiIdx{t->" + p.Builtin + "}"
			}
		}
		fmt.Fprintf(&b, "static void msl_tramp_%d(::mslrt::ThreadCtx* t) {\n  (void)t;\n  %s(%s);\n}\n", n, k.Callee, strings.Join(args, ", "))
		fmt.Fprintf(&b, "static ::mslrt::Reg msl_reg_%d(%q, msl_tramp_%d);\n", n, k.Name, n)
	}
	return b.String()
}
