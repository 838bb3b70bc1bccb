package compute

import (
	"fmt"
	"sort"
	"strings"
	"sync"
)

// Oracle names one slower reference path that a fast path can be switched
// back to for A/B diagnosis (house rule: every fast path keeps a named
// oracle). Packages register their oracles at init time.
type Oracle uint64

// Oracles is a set of selected oracle paths. The zero value selects every
// fast path.
type Oracles uint64

var (
	oracleMu    sync.Mutex
	oracleByKey = map[string]Oracle{}
	oracleDocs  = map[string]string{}
)

// RegisterOracle registers a named oracle and returns its bit. It panics on a
// duplicate name or when 64 oracles exist; call it from a package-level var.
func RegisterOracle(name, doc string) Oracle {
	oracleMu.Lock()
	defer oracleMu.Unlock()
	if _, dup := oracleByKey[name]; dup {
		panic("compute: oracle registered twice: " + name)
	}
	if len(oracleByKey) >= 64 {
		panic("compute: too many oracles")
	}
	o := Oracle(1) << len(oracleByKey)
	oracleByKey[name] = o
	oracleDocs[name] = doc
	return o
}

// Has reports whether o is selected.
func (s Oracles) Has(o Oracle) bool { return uint64(s)&uint64(o) != 0 }

// With returns s plus o.
func (s Oracles) With(o Oracle) Oracles { return Oracles(uint64(s) | uint64(o)) }

// ParseOracles parses a comma-separated list of oracle names ("" selects
// none). An unknown name is an error that lists the known ones.
func ParseOracles(s string) (Oracles, error) {
	oracleMu.Lock()
	defer oracleMu.Unlock()
	var set Oracles
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		o, ok := oracleByKey[f]
		if !ok {
			return 0, fmt.Errorf("compute: unknown oracle %q (known: %s)", f, strings.Join(knownOracles(), ", "))
		}
		set = set.With(o)
	}
	return set, nil
}

// OracleDocs returns every registered oracle name with its description, sorted.
func OracleDocs() [][2]string {
	oracleMu.Lock()
	defer oracleMu.Unlock()
	var out [][2]string
	for _, n := range knownOracles() {
		out = append(out, [2]string{n, oracleDocs[n]})
	}
	return out
}

func knownOracles() []string {
	names := make([]string, 0, len(oracleByKey))
	for n := range oracleByKey {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
