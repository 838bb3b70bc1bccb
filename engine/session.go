package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"h3studio/engine/compute"
	"h3studio/engine/media"
	"h3studio/engine/snapshot"
)

// Options configure a Session.
type Options struct {
	ModelDir string          // snapshot root (original or diffusers layout, or the demo checkpoint)
	Backend  compute.Backend // built by app/ (Metal on macOS when present, else CPU)
	Opener   media.Opener    // reference media decoder; nil: no references can be used
	Memory   MemoryMode      // default memory mode for requests that leave it empty
	Oracles  compute.Oracles // slower reference paths for A/B diagnosis
	Logger   *slog.Logger    // diagnostics; nil discards them
	// CacheDir, when set, holds the on-disk conditioning cache.
	CacheDir string
}

// ErrBusy is returned by Generate while another generation runs.
var ErrBusy = errors.New("engine: a generation is already running")

// Session is an opened model folder. Components are loaded lazily by the
// first Generate that needs them and stay resident between requests as the
// memory mode allows. Plan is safe for concurrent use; one Generate runs at
// a time.
type Session struct {
	opts  Options
	snap  *snapshot.Snapshot
	facts ModelFacts
	name  string
	log   *slog.Logger

	mu   sync.Mutex // guards busy and the prepared components
	busy bool
}

// Open validates the model folder's layout and configs. It maps no weights.
func Open(o Options) (*Session, error) {
	if o.Backend == nil {
		return nil, errors.New("engine: Options.Backend is nil")
	}
	snap, err := snapshot.Open(o.ModelDir)
	if err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	s := &Session{opts: o, snap: snap, log: o.Logger}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if err := s.readFacts(); err != nil {
		return nil, err
	}
	return s, nil
}

// readFacts reads what Plan needs from configs.
func (s *Session) readFacts() error {
	f := &s.facts
	if c := s.snap.Find(snapshot.FL2VA, snapshot.Transformer); c != nil {
		f.HasFL2VA = true
		n, err := transformerBlocks(c.ConfigDir)
		if err != nil {
			return err
		}
		f.Blocks = n
	}
	if c := s.snap.Find(snapshot.Ref2VA, snapshot.Transformer); c != nil {
		f.HasRef2VA = true
		if f.Blocks == 0 {
			n, err := transformerBlocks(c.ConfigDir)
			if err != nil {
				return err
			}
			f.Blocks = n
		}
	}
	s.name = "MiniMax-H3"
	for _, dir := range []string{s.snap.Root, filepath.Join(s.snap.Root, "FL2VA")} {
		var mi struct {
			H3Studio struct {
				Demo bool   `json:"demo"`
				Name string `json:"name"`
			} `json:"_h3studio"`
		}
		b, err := os.ReadFile(filepath.Join(dir, "model_index.json"))
		if err != nil {
			continue
		}
		if err := json.Unmarshal(b, &mi); err != nil {
			return fmt.Errorf("engine: %s: %w", filepath.Join(dir, "model_index.json"), err)
		}
		if mi.H3Studio.Demo {
			f.Demo = true
			s.name = "MiniMax-H3 demo model (tiny random weights)"
			if mi.H3Studio.Name != "" {
				s.name = mi.H3Studio.Name
			}
		}
		break
	}
	return nil
}

func transformerBlocks(dir string) (int, error) {
	p := filepath.Join(dir, "config.json")
	b, err := os.ReadFile(p)
	if err != nil {
		return 0, fmt.Errorf("engine: transformer config: %w", err)
	}
	var c struct {
		NumLayers int `json:"num_layers"`
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return 0, fmt.Errorf("engine: %s: %w", p, err)
	}
	if c.NumLayers <= 0 {
		return 0, fmt.Errorf("engine: %s: num_layers must be positive", p)
	}
	return c.NumLayers, nil
}

// Model describes the opened model ("MiniMax-H3", or the demo model).
func (s *Session) Model() string { return s.name }

// Facts returns what the session knows about the model from its configs.
func (s *Session) Facts() ModelFacts { return s.facts }

// Snapshot is the discovered model folder.
func (s *Session) Snapshot() *snapshot.Snapshot { return s.snap }

// Plan validates r and resolves every default, without loading anything.
// Errors that reject the request are *RequestError values naming the rule.
func (s *Session) Plan(r Request) (Plan, error) {
	if r.Memory == "" {
		r.Memory = s.opts.Memory
	}
	p, err := resolve(r, s.facts, probeWith(s.opts.Opener))
	if err != nil {
		return p, err
	}
	return p, nil
}

// Generate runs one request, writing frames and audio to out in
// presentation order. progress runs on the calling goroutine and must not
// block. Cancelling ctx stops the run at the next step/block/tile boundary;
// out is then aborted, leaving nothing partial.
func (s *Session) Generate(ctx context.Context, r Request, out media.Sink, progress func(Event)) (Result, error) {
	s.mu.Lock()
	if s.busy {
		s.mu.Unlock()
		return Result{}, ErrBusy
	}
	s.busy = true
	s.mu.Unlock()
	defer func() { s.mu.Lock(); s.busy = false; s.mu.Unlock() }()

	p, err := s.Plan(r)
	if err != nil {
		return Result{}, err
	}
	res, err := s.run(ctx, p, out, progress)
	if err != nil {
		if abortErr := out.Abort(); abortErr != nil {
			s.log.Warn("abort output", "err", abortErr)
		}
		return res, err
	}
	return res, nil
}

// Close releases every loaded component.
func (s *Session) Close() error { return nil }
