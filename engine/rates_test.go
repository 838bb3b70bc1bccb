package engine_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"h3studio/engine"
	"h3studio/engine/compute/cpu"
	"h3studio/engine/media"
)

// TestRatesFile: a session with a rates file leaves the throughputs it
// measured there, and a new session (a new process) on the same device and
// model estimates its first take's time from them before running anything;
// without the file, or with an unusable one, the estimate stays unknown
// (zero) and the file is rewritten after the next take.
func TestRatesFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cache", "rates.json")
	open := func() *engine.Session {
		t.Helper()
		s, err := engine.Open(engine.Options{ModelDir: demoModel(t), Backend: cpu.New(cpu.Options{}), RatesFile: path})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	r := base("A kettle on a stove, steam rising.", 3)
	estimate := func(s *engine.Session) engine.Plan {
		t.Helper()
		p, err := s.Plan(r)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	take := func(s *engine.Session) {
		t.Helper()
		if _, err := s.Generate(context.Background(), r, &media.MemorySink{}, nil); err != nil {
			t.Fatal(err)
		}
	}

	s1 := open()
	if p := estimate(s1); p.Estimate != 0 {
		t.Fatalf("a session that measured nothing estimates %v", p.Estimate)
	}
	take(s1)
	var f struct {
		Version int                        `json:"version"`
		Entries map[string]json.RawMessage `json:"entries"`
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no rates file after a take: %v", err)
	}
	if err := json.Unmarshal(b, &f); err != nil || f.Version != 1 || len(f.Entries) != 1 {
		t.Fatalf("rates file %s: %v", b, err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o644 {
		t.Errorf("rates file mode %v", st.Mode().Perm())
	}

	// A new session starts from the file: its first plan has an estimate.
	if p := estimate(open()); p.Estimate <= 0 {
		t.Errorf("a new session on the same device and model estimates %v, want the measured time", p.Estimate)
	}

	// An entry for another model (its key changed) is not used.
	other := strings.Replace(string(b), "MiniMax-H3", "Another-Model", 1)
	if err := os.WriteFile(path, []byte(other), 0o644); err != nil {
		t.Fatal(err)
	}
	if p := estimate(open()); p.Estimate != 0 {
		t.Errorf("rates of another model gave the estimate %v", p.Estimate)
	}

	// A damaged file gives no head start and no error; the next take
	// rewrites it.
	if err := os.WriteFile(path, []byte("{\"version\": 1, \"entries\": {"), 0o644); err != nil {
		t.Fatal(err)
	}
	s4 := open()
	if p := estimate(s4); p.Estimate != 0 {
		t.Errorf("a damaged rates file gave the estimate %v", p.Estimate)
	}
	take(s4)
	if p := estimate(open()); p.Estimate <= 0 {
		t.Errorf("after the damaged file was rewritten: estimate %v", p.Estimate)
	}
	// Implausible values (negative, zero) are not a head start either.
	var raw map[string]any
	b, _ = os.ReadFile(path)
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	for _, e := range raw["entries"].(map[string]any) {
		rec := e.(map[string]any)
		for ph := range rec["seconds_per_unit"].(map[string]any) {
			rec["seconds_per_unit"].(map[string]any)[ph] = -1.0
		}
		rec["flop_wall_seconds"] = 0.0
	}
	b, _ = json.Marshal(raw)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if p := estimate(open()); p.Estimate != 0 {
		t.Errorf("negative rates gave the estimate %v", p.Estimate)
	}
}
