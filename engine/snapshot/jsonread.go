package snapshot

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"strings"
)

// ConfigError reports a bad configuration file: which file, which field
// (dotted for nested objects; "" for the file as a whole) and what is wrong.
type ConfigError struct {
	Path  string
	Field string
	Rule  string
	Err   error
}

func (e *ConfigError) Error() string {
	var b strings.Builder
	b.WriteString("snapshot: ")
	b.WriteString(e.Path)
	if e.Field != "" {
		fmt.Fprintf(&b, ": field %q", e.Field)
	}
	b.WriteString(": ")
	b.WriteString(e.Rule)
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

func (e *ConfigError) Unwrap() error { return e.Err }

// MaxConfigBytes bounds the JSON configuration files read here (the released
// ones are at most a few KB; tokenizer.json is only checked, not read).
const MaxConfigBytes = 16 << 20

// object is a JSON object being read into a typed config. The first problem
// is kept in err; later accessors return zero values, so a reader is written
// top to bottom and checked once.
type object struct {
	path   string
	prefix string
	m      map[string]json.RawMessage
	err    *error
}

// readObject reads and parses a JSON object file.
func readObject(path string) (*object, error) {
	st, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &ConfigError{Path: path, Rule: "file is missing"}
		}
		return nil, &ConfigError{Path: path, Rule: "file is unreadable", Err: err}
	}
	if st.IsDir() {
		return nil, &ConfigError{Path: path, Rule: "is a folder, not a file"}
	}
	if st.Size() > MaxConfigBytes {
		return nil, &ConfigError{Path: path, Rule: fmt.Sprintf("is %d bytes, more than a configuration file can be (%d)", st.Size(), MaxConfigBytes)}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, &ConfigError{Path: path, Rule: "file is unreadable", Err: err}
	}
	return parseObject(path, b)
}

// parseObject parses JSON bytes that must hold one object.
func parseObject(path string, b []byte) (*object, error) {
	var m map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		return nil, &ConfigError{Path: path, Rule: "not a valid JSON object", Err: err}
	}
	if m == nil {
		return nil, &ConfigError{Path: path, Rule: "not a valid JSON object", Err: errors.New("null")}
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, &ConfigError{Path: path, Rule: "not a valid JSON object", Err: errors.New("trailing data after the object")}
	}
	var e error
	return &object{path: path, m: m, err: &e}, nil
}

// Err returns the first problem met.
func (o *object) Err() error { return *o.err }

func (o *object) fail(field, format string, args ...any) {
	if *o.err == nil {
		*o.err = &ConfigError{Path: o.path, Field: o.prefix + field, Rule: fmt.Sprintf(format, args...)}
	}
}

func (o *object) has(field string) bool {
	v, ok := o.m[field]
	return ok && !bytes.Equal(bytes.TrimSpace(v), []byte("null"))
}

// first returns the first of the given keys the object has ("" when none).
func (o *object) first(keys ...string) string {
	for _, k := range keys {
		if o.has(k) {
			return k
		}
	}
	return ""
}

func (o *object) raw(field string, required bool) (json.RawMessage, bool) {
	if *o.err != nil {
		return nil, false
	}
	if !o.has(field) {
		if required {
			o.fail(field, "is missing")
		}
		return nil, false
	}
	return o.m[field], true
}

func (o *object) decode(field string, v any, what string) bool {
	raw, ok := o.raw(field, true)
	if !ok {
		return false
	}
	if !numbersUnquoted(v, raw) {
		o.fail(field, "must be %s, got %s", what, clip(raw))
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		o.fail(field, "must be %s, got %s", what, clip(raw))
		return false
	}
	return true
}

func clip(raw json.RawMessage) string {
	s := strings.TrimSpace(string(raw))
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return s
}

// integer converts a JSON number that is an exact integer.
func integer(n json.Number) (int64, bool) {
	if i, err := n.Int64(); err == nil {
		return i, true
	}
	f, err := n.Float64()
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, false
	}
	return int64(f), true
}

// intIn reads a required integer in [lo, hi].
func (o *object) intIn(field string, lo, hi int64) int {
	var n json.Number
	if !o.decode(field, &n, "an integer") {
		return 0
	}
	i, ok := integer(n)
	if !ok {
		o.fail(field, "must be an integer, got %s", n)
		return 0
	}
	if i < lo || i > hi {
		o.fail(field, "must be in %d … %d, got %d", lo, hi, i)
		return 0
	}
	return int(i)
}

// posInt reads a required integer ≥ 1.
func (o *object) posInt(field string) int { return o.intIn(field, 1, 1<<40) }

// optInt reads an optional integer in [lo, hi], def when absent.
func (o *object) optInt(field string, lo, hi int64, def int) int {
	if !o.has(field) {
		return def
	}
	return o.intIn(field, lo, hi)
}

// posFloat reads a required finite number > 0.
func (o *object) posFloat(field string) float64 {
	f := o.float(field)
	if *o.err == nil && !(f > 0) {
		o.fail(field, "must be positive, got %v", f)
	}
	return f
}

// float reads a required finite number.
func (o *object) float(field string) float64 {
	var n json.Number
	if !o.decode(field, &n, "a number") {
		return 0
	}
	f, err := n.Float64()
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		o.fail(field, "must be a finite number, got %s", n)
		return 0
	}
	return f
}

// optFloat reads an optional finite number, def when absent.
func (o *object) optFloat(field string, def float64) float64 {
	if !o.has(field) {
		return def
	}
	return o.float(field)
}

// str reads a required string.
func (o *object) str(field string) string {
	var s string
	o.decode(field, &s, "a string")
	return s
}

// optStr reads an optional string, def when absent.
func (o *object) optStr(field, def string) string {
	if !o.has(field) {
		return def
	}
	return o.str(field)
}

// optBool reads an optional boolean (or 0/1, as some configs write flags).
func (o *object) optBool(field string, def bool) bool {
	if !o.has(field) {
		return def
	}
	raw, _ := o.raw(field, true)
	var b bool
	if err := json.Unmarshal(raw, &b); err == nil {
		return b
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err == nil {
		if i, ok := integer(n); ok && (i == 0 || i == 1) {
			return i == 1
		}
	}
	o.fail(field, "must be true or false, got %s", clip(raw))
	return def
}

// posInts reads a required list of n integers ≥ lo (n < 0: any non-empty length).
func (o *object) ints(field string, n int, lo int64) []int {
	var ns []json.Number
	if !o.decode(field, &ns, "a list of integers") {
		return nil
	}
	if n >= 0 && len(ns) != n || n < 0 && len(ns) == 0 {
		o.fail(field, "must list %s integers, got %d", countWord(n), len(ns))
		return nil
	}
	out := make([]int, len(ns))
	for i, v := range ns {
		x, ok := integer(v)
		if !ok || x < lo || x > 1<<40 {
			o.fail(field, "entry %d must be an integer ≥ %d, got %s", i, lo, v)
			return nil
		}
		out[i] = int(x)
	}
	return out
}

func countWord(n int) string {
	if n < 0 {
		return "one or more"
	}
	return fmt.Sprint(n)
}

// floats reads a required list of n finite numbers.
func (o *object) floats(field string, n int) []float64 {
	var ns []json.Number
	if !o.decode(field, &ns, "a list of numbers") {
		return nil
	}
	if len(ns) != n {
		o.fail(field, "must list %d numbers, got %d", n, len(ns))
		return nil
	}
	out := make([]float64, n)
	for i, v := range ns {
		f, err := v.Float64()
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			o.fail(field, "entry %d must be a finite number, got %s", i, v)
			return nil
		}
		out[i] = f
	}
	return out
}

// sub returns a nested object (required unless optional).
func (o *object) sub(field string, optional bool) *object {
	if optional && !o.has(field) {
		return nil
	}
	var m map[string]json.RawMessage
	if !o.decode(field, &m, "an object") || m == nil {
		if *o.err == nil {
			o.fail(field, "must be an object")
		}
		return &object{path: o.path, prefix: o.prefix + field + ".", m: map[string]json.RawMessage{}, err: o.err}
	}
	return &object{path: o.path, prefix: o.prefix + field + ".", m: m, err: o.err}
}

// className checks "_class_name" against the accepted names when present.
func (o *object) className(accepted ...string) string {
	if !o.has("_class_name") {
		return ""
	}
	c := o.str("_class_name")
	for _, a := range accepted {
		if c == a {
			return c
		}
	}
	if *o.err == nil {
		o.fail("_class_name", "is %q; this file must describe %s", c, strings.Join(accepted, " or "))
	}
	return c
}

// numbersUnquoted checks, for a json.Number or []json.Number target, that
// raw holds number literals: encoding/json would also accept quoted ones.
func numbersUnquoted(v any, raw json.RawMessage) bool {
	switch v.(type) {
	case *json.Number:
		return isJSONNumber(raw)
	case *[]json.Number:
		var elems []json.RawMessage
		if json.Unmarshal(raw, &elems) != nil {
			return true // the typed decode reports it
		}
		for _, e := range elems {
			if !isJSONNumber(e) {
				return false
			}
		}
	}
	return true
}

// isJSONNumber reports whether raw is a JSON number literal (json.Number
// would also accept a quoted one).
func isJSONNumber(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && (t[0] == '-' || t[0] >= '0' && t[0] <= '9')
}
