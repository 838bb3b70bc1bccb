package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"h3studio/engine/atomicfile"
	"math"
	"os"
	"path/filepath"
	"sort"
	"time"

	"h3studio/engine/snapshot"
)

// Measured throughputs kept between runs (Options.RatesFile). A session's
// time estimates come only from what it measured; without this, every new
// process — each `h3studio generate`, each app launch — starts with an
// unknown estimate until its first denoising step. The file holds, per
// device and model, the seconds per unit of work of each phase as the last
// session left them; a new session starts from them and keeps measuring.

// ratesFileVersion is the file format's version; another version is ignored.
const ratesFileVersion = 1

// maxRatesEntries bounds the file: the most recently used device/model
// pairs are kept.
const maxRatesEntries = 16

type ratesFile struct {
	Version int                    `json:"version"`
	Entries map[string]ratesRecord `json:"entries"`
}

// ratesRecord is one device/model pair's measured throughputs.
type ratesRecord struct {
	Device   string            `json:"device"`
	Model    string            `json:"model"`
	Updated  time.Time         `json:"updated"`
	PerPhase map[Phase]float64 `json:"seconds_per_unit"`
	FlopWall float64           `json:"flop_wall_seconds"`
	FlopWork float64           `json:"flop_work"`
}

// ratesKey identifies what the measured rates depend on: the backend and
// its device, and the transformer's configuration (its shapes set the
// kernels' efficiency; the weights' values do not matter).
func (s *Session) ratesKey() (key, device, model string) {
	d := s.opts.Backend.Device()
	device = d.Backend + ": " + d.Name
	h := sha256.New()
	for _, part := range []snapshot.Partition{snapshot.FL2VA, snapshot.Ref2VA} {
		if c := s.snap.Find(part, snapshot.Transformer); c != nil {
			if b, err := os.ReadFile(filepath.Join(c.ConfigDir, "config.json")); err == nil {
				h.Write(b)
			}
			break
		}
	}
	model = s.name
	key = device + " | " + model + " | " + hex.EncodeToString(h.Sum(nil))[:16]
	return key, device, model
}

// loadRates starts the session's rates from the file, when it has an entry
// for this device and model. A missing, unreadable or malformed file only
// means no head start; it is logged, never an error.
func (s *Session) loadRates() {
	path := s.opts.RatesFile
	if path == "" {
		return
	}
	f, err := readRatesFile(path)
	if err != nil {
		if !os.IsNotExist(err) {
			s.log.Warn("measured rates not used", "file", path, "err", err)
		}
		return
	}
	key, _, _ := s.ratesKey()
	rec, ok := f.Entries[key]
	if !ok {
		return
	}
	s.est.mu.Lock()
	defer s.est.mu.Unlock()
	for ph, v := range rec.PerPhase {
		if plausibleRate(v) {
			s.est.perPhase[ph] = v
		}
	}
	if plausibleRate(rec.FlopWall) && plausibleRate(rec.FlopWork) {
		s.est.flopWall, s.est.flopWork = rec.FlopWall, rec.FlopWork
	}
}

// saveRates writes the session's rates into the file (atomically, keeping
// the other entries). Failures are logged: a generation never fails for it.
func (s *Session) saveRates() {
	path := s.opts.RatesFile
	if path == "" {
		return
	}
	f, err := readRatesFile(path)
	if err != nil {
		f = &ratesFile{}
	}
	if f.Entries == nil {
		f.Entries = map[string]ratesRecord{}
	}
	f.Version = ratesFileVersion
	key, device, model := s.ratesKey()
	rec := ratesRecord{Device: device, Model: model, Updated: time.Now().UTC(), PerPhase: map[Phase]float64{}}
	s.est.mu.Lock()
	for ph, v := range s.est.perPhase {
		rec.PerPhase[ph] = v
	}
	rec.FlopWall, rec.FlopWork = s.est.flopWall, s.est.flopWork
	s.est.mu.Unlock()
	if len(rec.PerPhase) == 0 {
		return
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
	if err := writeRatesFile(path, f); err != nil {
		s.log.Warn("measured rates not saved", "file", path, "err", err)
	}
}

func plausibleRate(v float64) bool { return v > 0 && !math.IsInf(v, 0) && !math.IsNaN(v) }

func readRatesFile(path string) (*ratesFile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f ratesFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if f.Version != ratesFileVersion {
		return nil, fmt.Errorf("%s: version %d, want %d", path, f.Version, ratesFileVersion)
	}
	return &f, nil
}

func writeRatesFile(path string, f *ratesFile) error {
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if err := atomicfile.WriteFile(path, append(b, '\n')); err != nil {
		return fmt.Errorf("engine: %w", err)
	}
	return nil
}
