// Package configfile reads the JSON configuration files of a model snapshot
// (model_index.json, each component's config.json, scheduler and processor
// configs) into typed values: an Object reader that keeps the first problem
// as an *Error naming the file and the field, the on-disk layouts, and the
// rules every VAE's latent statistics follow. The snapshot's discovery and
// each component's config reader share it, so a rule is worded once.
package configfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math"
	"os"
	"slices"
	"strings"
)

// Error reports a bad configuration file: which file, which field (dotted
// for nested objects; "" for the file as a whole) and what is wrong.
type Error struct {
	Path  string
	Field string
	Rule  string
	Err   error
}

func (e *Error) Error() string {
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

func (e *Error) Unwrap() error { return e.Err }

// MaxConfigBytes bounds the JSON configuration files read here (the released
// ones are at most a few KB; tokenizer.json is only checked, not read).
const MaxConfigBytes = 16 << 20

// Object is a JSON object being read into a typed config. The first problem
// is kept; later accessors return zero values, so a reader is written top to
// bottom and checked once (Err).
type Object struct {
	Path   string // the file, as errors name it
	prefix string
	m      map[string]json.RawMessage
	err    *error
}

// Read reads and parses a file that must hold one JSON object.
func Read(path string) (*Object, error) {
	st, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &Error{Path: path, Rule: "file is missing"}
		}
		return nil, &Error{Path: path, Rule: "file is unreadable", Err: err}
	}
	if st.IsDir() {
		return nil, &Error{Path: path, Rule: "is a folder, not a file"}
	}
	if st.Size() > MaxConfigBytes {
		return nil, &Error{Path: path, Rule: fmt.Sprintf("is %d bytes, more than a configuration file can be (%d)", st.Size(), MaxConfigBytes)}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, &Error{Path: path, Rule: "file is unreadable", Err: err}
	}
	return Parse(path, b)
}

// Parse parses JSON bytes that must hold one object; path names them in errors.
func Parse(path string, b []byte) (*Object, error) {
	var m map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		return nil, &Error{Path: path, Rule: "not a valid JSON object", Err: err}
	}
	if m == nil {
		return nil, &Error{Path: path, Rule: "not a valid JSON object", Err: errors.New("null")}
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, &Error{Path: path, Rule: "not a valid JSON object", Err: errors.New("trailing data after the object")}
	}
	var e error
	return &Object{Path: path, m: m, err: &e}, nil
}

// Err returns the first problem met.
func (o *Object) Err() error { return *o.err }

// Fail records a problem with field (the first one is kept).
func (o *Object) Fail(field, format string, args ...any) {
	if *o.err == nil {
		*o.err = &Error{Path: o.Path, Field: o.prefix + field, Rule: fmt.Sprintf(format, args...)}
	}
}

// Has reports whether the object holds field with a non-null value.
func (o *Object) Has(field string) bool {
	v, ok := o.m[field]
	return ok && !bytes.Equal(bytes.TrimSpace(v), []byte("null"))
}

// First returns the first of the given keys the object has ("" when none).
func (o *Object) First(keys ...string) string {
	for _, k := range keys {
		if o.Has(k) {
			return k
		}
	}
	return ""
}

func (o *Object) raw(field string, required bool) (json.RawMessage, bool) {
	if *o.err != nil {
		return nil, false
	}
	if !o.Has(field) {
		if required {
			o.Fail(field, "is missing")
		}
		return nil, false
	}
	return o.m[field], true
}

// Decode decodes a required field into v; what names the expected value in
// the error ("a list of integers").
func (o *Object) Decode(field string, v any, what string) bool {
	raw, ok := o.raw(field, true)
	if !ok {
		return false
	}
	if !numbersUnquoted(v, raw) {
		o.Fail(field, "must be %s, got %s", what, Clip(raw))
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		o.Fail(field, "must be %s, got %s", what, Clip(raw))
		return false
	}
	return true
}

// Clip shortens a raw value for an error message.
func Clip(raw json.RawMessage) string {
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

// IntIn reads a required integer in [lo, hi].
func (o *Object) IntIn(field string, lo, hi int64) int {
	var n json.Number
	if !o.Decode(field, &n, "an integer") {
		return 0
	}
	i, ok := integer(n)
	if !ok {
		o.Fail(field, "must be an integer, got %s", n)
		return 0
	}
	if i < lo || i > hi {
		o.Fail(field, "must be in %d … %d, got %d", lo, hi, i)
		return 0
	}
	return int(i)
}

// PosInt reads a required integer ≥ 1.
func (o *Object) PosInt(field string) int { return o.IntIn(field, 1, 1<<40) }

// OptInt reads an optional integer in [lo, hi], def when absent.
func (o *Object) OptInt(field string, lo, hi int64, def int) int {
	if !o.Has(field) {
		return def
	}
	return o.IntIn(field, lo, hi)
}

// PosFloat reads a required finite number > 0.
func (o *Object) PosFloat(field string) float64 {
	f := o.float(field)
	if *o.err == nil && !(f > 0) {
		o.Fail(field, "must be positive, got %v", f)
	}
	return f
}

// float reads a required finite number.
func (o *Object) float(field string) float64 {
	var n json.Number
	if !o.Decode(field, &n, "a number") {
		return 0
	}
	f, err := n.Float64()
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		o.Fail(field, "must be a finite number, got %s", n)
		return 0
	}
	return f
}

// OptFloat reads an optional finite number, def when absent.
func (o *Object) OptFloat(field string, def float64) float64 {
	if !o.Has(field) {
		return def
	}
	return o.float(field)
}

// Str reads a required string.
func (o *Object) Str(field string) string {
	var s string
	o.Decode(field, &s, "a string")
	return s
}

// OptStr reads an optional string, def when absent.
func (o *Object) OptStr(field, def string) string {
	if !o.Has(field) {
		return def
	}
	return o.Str(field)
}

// OptBool reads an optional boolean (or 0/1, as some configs write flags).
func (o *Object) OptBool(field string, def bool) bool {
	if !o.Has(field) {
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
	o.Fail(field, "must be true or false, got %s", Clip(raw))
	return def
}

// Ints reads a required list of n integers ≥ lo (n < 0: any non-empty length).
func (o *Object) Ints(field string, n int, lo int64) []int {
	var ns []json.Number
	if !o.Decode(field, &ns, "a list of integers") {
		return nil
	}
	if n >= 0 && len(ns) != n || n < 0 && len(ns) == 0 {
		o.Fail(field, "must list %s integers, got %d", countWord(n), len(ns))
		return nil
	}
	out := make([]int, len(ns))
	for i, v := range ns {
		x, ok := integer(v)
		if !ok || x < lo || x > 1<<40 {
			o.Fail(field, "entry %d must be an integer ≥ %d, got %s", i, lo, v)
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

// Floats reads a required list of n finite numbers.
func (o *Object) Floats(field string, n int) []float64 {
	var ns []json.Number
	if !o.Decode(field, &ns, "a list of numbers") {
		return nil
	}
	if len(ns) != n {
		o.Fail(field, "must list %d numbers, got %d", n, len(ns))
		return nil
	}
	out := make([]float64, n)
	for i, v := range ns {
		f, err := v.Float64()
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			o.Fail(field, "entry %d must be a finite number, got %s", i, v)
			return nil
		}
		out[i] = f
	}
	return out
}

// Sub returns a nested object (required unless optional).
func (o *Object) Sub(field string, optional bool) *Object {
	if optional && !o.Has(field) {
		return nil
	}
	var m map[string]json.RawMessage
	if !o.Decode(field, &m, "an object") || m == nil {
		if *o.err == nil {
			o.Fail(field, "must be an object")
		}
		return &Object{Path: o.Path, prefix: o.prefix + field + ".", m: map[string]json.RawMessage{}, err: o.err}
	}
	return &Object{Path: o.Path, prefix: o.prefix + field + ".", m: m, err: o.err}
}

// ClassName checks "_class_name" against the accepted names when present.
func (o *Object) ClassName(accepted ...string) string {
	if !o.Has("_class_name") {
		return ""
	}
	c := o.Str("_class_name")
	for _, a := range accepted {
		if c == a {
			return c
		}
	}
	if *o.err == nil {
		o.Fail("_class_name", "is %q; this file must describe %s", c, strings.Join(accepted, " or "))
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

// FirstOr is First, or keys[0] when the object has none of them.
func (o *Object) FirstOr(keys ...string) string {
	if k := o.First(keys...); k != "" {
		return k
	}
	return keys[0]
}

// Class is the object's "_class_name" and whether it is a string; unlike
// ClassName it records no problem.
func (o *Object) Class() (string, bool) {
	var c string
	if !o.Has("_class_name") || json.Unmarshal(o.m["_class_name"], &c) != nil {
		return "", false
	}
	return c, true
}

// Keys lists the object's keys in sorted order.
func (o *Object) Keys() []string { return slices.Sorted(maps.Keys(o.m)) }

// Into decodes the whole object into v (a struct with JSON tags): for a
// reader that keeps a typed mirror of every key besides the fields it checks.
func (o *Object) Into(v any) error {
	b, err := json.Marshal(o.m)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// Value is field's raw JSON (nil when absent).
func (o *Object) Value(field string) json.RawMessage { return o.m[field] }

// ReadAs reads the object file at path and converts it with from, the
// typed reader of that kind of file.
func ReadAs[T any](path string, from func(*Object) (T, error)) (T, error) {
	o, err := Read(path)
	if err != nil {
		var zero T
		return zero, err
	}
	return from(o)
}

// ReadInto reads the object file at path and fills a value already read
// in part with fill: the second file of a component's config, the one its
// first file names.
func ReadInto(path string, fill func(*Object) error) error {
	o, err := Read(path)
	if err != nil {
		return err
	}
	return fill(o)
}
