package metal

import (
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"h3studio/engine/compute"
	"h3studio/shaders"
)

// cField is one field of a kargs.h struct with its C layout.
type cField struct {
	Name   string
	Type   string // uint int float ulong long
	Count  int    // array length; 1 for a scalar
	Offset int
	Size   int
}

type cStruct struct {
	Name   string
	Fields []cField
	Size   int
}

var cTypes = map[string]struct {
	size int
	kind reflect.Kind
}{
	"uint": {4, reflect.Uint32}, "int": {4, reflect.Int32}, "float": {4, reflect.Float32},
	"ulong": {8, reflect.Uint64}, "long": {8, reflect.Int64},
}

var (
	defineRe = regexp.MustCompile(`(?m)^#define\s+(\w+)\s+(\d+)u?\s*$`)
	structRe = regexp.MustCompile(`(?s)struct\s+(\w+)\s*\{(.*?)\};`)
	fieldRe  = regexp.MustCompile(`^(\w+)\s+(\w+)(?:\[(\w+)\])?$`)
)

// parseKargs reads kargs.h: its #define constants and its structs, laid out
// with natural alignment (what the Metal compiler and clang do).
func parseKargs(src string) (map[string]int, []cStruct, error) {
	src = regexp.MustCompile(`//[^\n]*`).ReplaceAllString(src, "")
	defs := map[string]int{}
	for _, m := range defineRe.FindAllStringSubmatch(src, -1) {
		v, _ := strconv.Atoi(m[2])
		defs[m[1]] = v
	}
	var out []cStruct
	for _, m := range structRe.FindAllStringSubmatch(src, -1) {
		s := cStruct{Name: m[1]}
		off, align := 0, 1
		for _, decl := range strings.Split(m[2], ";") {
			decl = strings.Join(strings.Fields(decl), " ")
			if decl == "" {
				continue
			}
			f := fieldRe.FindStringSubmatch(strings.ReplaceAll(decl, " [", "["))
			if f == nil {
				return nil, nil, fmt.Errorf("kargs.h: struct %s: cannot parse %q", s.Name, decl)
			}
			t, ok := cTypes[f[1]]
			if !ok {
				return nil, nil, fmt.Errorf("kargs.h: struct %s: field %s has type %s (use uint, int, float, ulong or long)", s.Name, f[2], f[1])
			}
			count := 1
			if f[3] != "" {
				if v, err := strconv.Atoi(f[3]); err == nil {
					count = v
				} else if v, ok := defs[f[3]]; ok {
					count = v
				} else {
					return nil, nil, fmt.Errorf("kargs.h: struct %s: unknown array length %s", s.Name, f[3])
				}
			}
			off = (off + t.size - 1) / t.size * t.size
			s.Fields = append(s.Fields, cField{Name: f[2], Type: f[1], Count: count, Offset: off, Size: t.size * count})
			off += t.size * count
			align = max(align, t.size)
		}
		s.Size = (off + align - 1) / align * align
		out = append(out, s)
	}
	return defs, out, nil
}

// goName maps a C name to the Go one: kargs_rms_norm → KargsRmsNorm.
func goName(c string) string {
	parts := strings.Split(c, "_")
	for i, p := range parts {
		if p != "" {
			parts[i] = strings.ToUpper(p[:1]) + p[1:]
		}
	}
	return strings.Join(parts, "")
}

// TestKargsMirror fails when a kargs.h struct and its Go mirror disagree.
func TestKargsMirror(t *testing.T) {
	src, err := shaders.Files().(interface{ ReadFile(string) ([]byte, error) }).ReadFile("kargs.h")
	if err != nil {
		t.Fatal(err)
	}
	defs, structs, err := parseKargs(string(src))
	if err != nil {
		t.Fatal(err)
	}
	if len(structs) == 0 {
		t.Fatal("kargs.h: no structs found")
	}
	goTypes := map[string]reflect.Type{}
	for _, v := range Kargs() {
		goTypes[reflect.TypeOf(v).Name()] = reflect.TypeOf(v)
	}
	for _, s := range structs {
		gt, ok := goTypes[goName(s.Name)]
		if !ok {
			t.Errorf("kargs.h struct %s has no Go mirror %s in Kargs()", s.Name, goName(s.Name))
			continue
		}
		delete(goTypes, goName(s.Name))
		for _, e := range checkMirror(s, gt) {
			t.Error(e)
		}
	}
	for n := range goTypes {
		t.Errorf("Go kernel-argument struct %s has no struct in kargs.h", n)
	}

	// The codes kargs.h shares with package compute.
	for name, want := range map[string]int{
		"DT_F32": int(compute.F32), "DT_F16": int(compute.F16), "DT_BF16": int(compute.BF16), "DT_F64": int(compute.F64),
		"DT_I64": int(compute.I64), "DT_I32": int(compute.I32), "DT_U8": int(compute.U8), "DT_I8": int(compute.I8),
		"DT_BOOL": int(compute.Bool), "PAD_ZEROS": int(compute.PadZeros), "PAD_REFLECT": int(compute.PadReflect),
		"PAD_REPLICATE": int(compute.PadReplicate), "MAX_RANK": MaxRank,
		"QKV_INTERLEAVED": int(compute.QKVInterleaved), "QKV_PLANAR": int(compute.QKVPlanar),
	} {
		if got, ok := defs[name]; !ok || got != want {
			t.Errorf("kargs.h %s = %d (defined %v), compute says %d", name, got, ok, want)
		}
	}
	for op := compute.Identity; op <= compute.Abs; op++ {
		name := "OP_" + strings.ToUpper(op.String())
		if got, ok := defs[name]; !ok || got != int(op) {
			t.Errorf("kargs.h %s = %d (defined %v), compute.%v = %d", name, got, ok, op, int(op))
		}
	}
}

// checkMirror compares one C struct with its Go mirror.
func checkMirror(s cStruct, gt reflect.Type) []string {
	var errs []string
	if int(gt.Size()) != s.Size {
		errs = append(errs, fmt.Sprintf("%s: Go size %d, MSL size %d", s.Name, gt.Size(), s.Size))
	}
	if gt.NumField() != len(s.Fields) {
		errs = append(errs, fmt.Sprintf("%s: Go has %d fields, MSL %d", s.Name, gt.NumField(), len(s.Fields)))
	}
	for i, f := range s.Fields {
		if i >= gt.NumField() {
			break
		}
		gf := gt.Field(i)
		if gf.Name != goName(f.Name) {
			errs = append(errs, fmt.Sprintf("%s field %d: Go %s, MSL %s (want Go name %s)", s.Name, i, gf.Name, f.Name, goName(f.Name)))
		}
		if int(gf.Offset) != f.Offset || int(gf.Type.Size()) != f.Size {
			errs = append(errs, fmt.Sprintf("%s.%s: Go offset %d size %d, MSL offset %d size %d", s.Name, f.Name, gf.Offset, gf.Type.Size(), f.Offset, f.Size))
		}
		ft := gf.Type
		count := 1
		if ft.Kind() == reflect.Array {
			count = ft.Len()
			ft = ft.Elem()
		}
		if ft.Kind() != cTypes[f.Type].kind || count != f.Count {
			errs = append(errs, fmt.Sprintf("%s.%s: Go %v, MSL %s[%d]", s.Name, f.Name, gf.Type, f.Type, f.Count))
		}
	}
	return errs
}

// TestKargsParserCatchesDrift makes sure the comparison can fail.
func TestKargsParserCatchesDrift(t *testing.T) {
	_, ss, err := parseKargs("struct kargs_x {\n ulong n;\n uint a; // c\n float b[3];\n};\n")
	if err != nil {
		t.Fatal(err)
	}
	want := cStruct{Name: "kargs_x", Size: 24, Fields: []cField{{"n", "ulong", 1, 0, 8}, {"a", "uint", 1, 8, 4}, {"b", "float", 3, 12, 12}}}
	if !reflect.DeepEqual(ss, []cStruct{want}) {
		t.Fatalf("parsed %+v, want %+v", ss, want)
	}
	if _, _, err := parseKargs("struct kargs_y { half h; };"); err == nil {
		t.Fatal("a half field was accepted")
	}
	type KargsX struct { // fields swapped: a float where MSL has a uint
		N uint64
		B [3]float32
		A uint32
	}
	if errs := checkMirror(want, reflect.TypeOf(KargsX{})); len(errs) < 2 {
		t.Fatalf("a drifted mirror gave %v", errs)
	}
	type KargsX2 struct {
		N uint64
		A int32
		B [3]float32
	}
	if errs := checkMirror(want, reflect.TypeOf(KargsX2{})); len(errs) != 1 || !strings.Contains(errs[0], "MSL uint") {
		t.Fatalf("int32 for uint gave %v", errs)
	}
}
