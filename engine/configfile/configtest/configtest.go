// Package configtest checks config readers built on configfile in tests:
// each rule as a change to a valid file and the *configfile.Error it must
// give (field and wording), and a fuzz target that wants every error to be
// such an error naming the file.
package configtest

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"h3studio/engine/configfile"
)

// Parser reads one kind of config from a parsed object.
type Parser struct {
	Name, File string // File is a valid example, the base every Rule changes
	Parse      func(o *configfile.Object) (any, error)
}

// ParseBytes parses b as p's file.
func (p Parser) ParseBytes(b []byte) (any, error) {
	o, err := configfile.Parse(p.File, b)
	if err != nil {
		return nil, err
	}
	return p.Parse(o)
}

// Load reads p's example file as a JSON map.
func (p Parser) Load(t testing.TB) map[string]any {
	t.Helper()
	return ReadJSON(t, p.File)
}

// ReadJSON reads a JSON object file as a map.
func ReadJSON(t testing.TB, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// Rule is one reader rule: Mutate breaks a valid file, and the reader must
// report Field with a rule containing Rule.
type Rule struct {
	Parser string
	Mutate func(map[string]any)
	Field  string
	Rule   string
}

// Set sets key to v.
func Set(k string, v any) func(map[string]any) { return func(m map[string]any) { m[k] = v } }

// Del deletes key.
func Del(k string) func(map[string]any) { return func(m map[string]any) { delete(m, k) } }

// Nested sets k to v inside the object outer.
func Nested(outer, k string, v any) func(map[string]any) {
	return func(m map[string]any) { m[outer].(map[string]any)[k] = v }
}

// MustJSON marshals v.
func MustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// Find returns the parser named name.
func Find(t testing.TB, parsers []Parser, name string) Parser {
	for _, p := range parsers {
		if p.Name == name {
			return p
		}
	}
	t.Fatalf("no parser %s", name)
	return Parser{}
}

// CheckValid wants every parser to accept its example file.
func CheckValid(t *testing.T, parsers []Parser) {
	for _, p := range parsers {
		b, err := os.ReadFile(p.File)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.ParseBytes(b); err != nil {
			t.Errorf("%s: %v", p.Name, err)
		}
	}
}

// CheckRules applies each rule to its parser's example file and wants a
// *configfile.Error with the rule's field and wording that names the file.
func CheckRules(t *testing.T, parsers []Parser, rules []Rule) {
	for _, c := range rules {
		p := Find(t, parsers, c.Parser)
		m := p.Load(t)
		c.Mutate(m)
		_, err := p.ParseBytes(MustJSON(m))
		var ce *configfile.Error
		if !errors.As(err, &ce) {
			t.Errorf("%s %s: got %v, want a configfile.Error about %q", c.Parser, c.Field, err, c.Rule)
			continue
		}
		if ce.Field != c.Field || !strings.Contains(ce.Rule, c.Rule) {
			t.Errorf("%s: error %q, want field %q and rule %q", c.Parser, err, c.Field, c.Rule)
		}
		if !strings.Contains(err.Error(), ".json") {
			t.Errorf("%s: error %q does not name the file", c.Parser, err)
		}
	}
}

// Fuzz feeds arbitrary bytes to every parser (the first byte picks it):
// never a panic, and an error is always a *configfile.Error naming the file.
func Fuzz(f *testing.F, parsers []Parser, seeds ...[]byte) {
	for i, p := range parsers {
		b, err := os.ReadFile(p.File)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(append([]byte{byte(i)}, b...))
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) == 0 {
			return
		}
		p, b := parsers[int(in[0])%len(parsers)], in[1:]
		if _, err := p.ParseBytes(b); err != nil {
			var ce *configfile.Error
			if !errors.As(err, &ce) || ce.Path != p.File {
				t.Fatalf("%s: error %v is not a configfile.Error naming the file", p.Name, err)
			}
		}
	})
}
