package plan

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"time"

	"h3studio/engine/atomicfile"
)

// The rates file keeps measured throughputs between runs. A session's time
// estimates come only from what it measured; without it, every new process
// — each `h3studio generate`, each app launch — starts with an unknown
// estimate until its first denoising step. The file holds, per device and
// model (a key the caller makes), the seconds per unit of work of each
// phase as the last session left them; a new session starts from them and
// keeps measuring.

// ratesFileVersion is the file format's version; another version is ignored.
const ratesFileVersion = 1

// maxRatesEntries bounds the file: the most recently used device/model
// pairs are kept.
const maxRatesEntries = 16

type ratesFile[P ~string] struct {
	Version int                       `json:"version"`
	Entries map[string]ratesRecord[P] `json:"entries"`
}

// ratesRecord is one device/model pair's measured throughputs.
type ratesRecord[P ~string] struct {
	Device   string        `json:"device"`
	Model    string        `json:"model"`
	Updated  time.Time     `json:"updated"`
	PerPhase map[P]float64 `json:"seconds_per_unit"`
	FlopWall float64       `json:"flop_wall_seconds"`
	FlopWork float64       `json:"flop_work"`
}

// Load starts r from the rates file's entry for key, when it has one. A
// missing file's error satisfies os.IsNotExist; any error only means no
// head start.
func (r *Rates[P]) Load(path, key string) error {
	f, err := readRatesFile[P](path)
	if err != nil {
		return err
	}
	rec, ok := f.Entries[key]
	if !ok {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for ph, v := range rec.PerPhase {
		if plausibleRate(v) {
			r.perPhase[ph] = v
		}
	}
	if plausibleRate(rec.FlopWall) && plausibleRate(rec.FlopWork) {
		r.flopWall, r.flopWork = rec.FlopWall, rec.FlopWork
	}
	return nil
}

// Save writes r into the rates file under key (atomically, keeping the
// other entries, the most recent maxRatesEntries of them). Nothing
// measured writes nothing.
func (r *Rates[P]) Save(path, key, device, model string) error {
	f, err := readRatesFile[P](path)
	if err != nil {
		f = &ratesFile[P]{}
	}
	if f.Entries == nil {
		f.Entries = map[string]ratesRecord[P]{}
	}
	f.Version = ratesFileVersion
	rec := ratesRecord[P]{Device: device, Model: model, Updated: time.Now().UTC(), PerPhase: map[P]float64{}}
	r.mu.Lock()
	for ph, v := range r.perPhase {
		rec.PerPhase[ph] = v
	}
	rec.FlopWall, rec.FlopWork = r.flopWall, r.flopWork
	r.mu.Unlock()
	if len(rec.PerPhase) == 0 {
		return nil
	}
	f.Entries[key] = rec
	if len(f.Entries) > maxRatesEntries {
		keys := make([]string, 0, len(f.Entries))
		for k := range f.Entries {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { return f.Entries[keys[i]].Updated.After(f.Entries[keys[j]].Updated) })
		for _, k := range keys[maxRatesEntries:] {
			delete(f.Entries, k)
		}
	}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if err := atomicfile.WriteFile(path, append(b, '\n')); err != nil {
		return fmt.Errorf("plan: %w", err)
	}
	return nil
}

func plausibleRate(v float64) bool { return v > 0 && !math.IsInf(v, 0) && !math.IsNaN(v) }

func readRatesFile[P ~string](path string) (*ratesFile[P], error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f ratesFile[P]
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if f.Version != ratesFileVersion {
		return nil, fmt.Errorf("%s: version %d, want %d", path, f.Version, ratesFileVersion)
	}
	return &f, nil
}
