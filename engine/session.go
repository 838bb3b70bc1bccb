// Package engine runs MiniMax-H3 text/image/video/audio-to-video+audio
// generation: the façade the GUI, the CLI and tests drive the same way.
// Phases mirror diffusers' modular pipeline: encode, prepare, denoise,
// decode. Its files, in the order a request meets them:
//
//   - session.go: Open, the Session, Generate and run (the phase list);
//   - request.go: the request, plan, event and result types, re-exported
//     from engine/request, which holds the named rules resolving a request;
//   - plan.go, memorymode.go: Plan — resolve, predict (engine/plan), choose
//     the memory mode;
//   - load.go (with lora.go, quantcache.go): load the components a phase
//     needs;
//   - conditions.go: prepare conditions (reference media, the processor,
//     the VAE encoders);
//   - text.go: encode text (tokenizer, Qwen3-VL, the conditioning cache);
//   - denoise.go: the DiT loop (engine/denoise) and its previews;
//   - decode.go: decode video and audio, export;
//   - events.go, faults.go, inputerr.go: progress and how failures read.
package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"h3studio/engine/compute"
	"h3studio/engine/condcache"
	"h3studio/engine/denoise"
	"h3studio/engine/dit"
	"h3studio/engine/layout"
	"h3studio/engine/media"
	"h3studio/engine/plan"
	"h3studio/engine/snapshot"
)

// Options configure a Session.
type Options struct {
	ModelDir string          // snapshot root (original or diffusers layout, or the demo checkpoint)
	Backend  compute.Backend // built by app/ (Metal on macOS when present, else CPU)
	Opener   media.Opener    // reference media decoder; nil: media.Open (the build's platform)
	Memory   MemoryMode      // default memory mode for requests that leave it empty
	// Quant, when set, fixes the DiT's block weights' format: the
	// automatic memory mode then chooses among that format's modes only,
	// and an explicit BF16 mode takes it (dit.Options.Quant).
	Quant compute.QuantFormat
	// Quality is the default quality floor of the automatic memory mode
	// for requests that leave it empty ("": balanced).
	Quality QualityFloor
	// StreamVideoDecoder binds the video decoder's blocks one at a time,
	// stage by stage across a window's tiles (videovae.Options.Residency).
	StreamVideoDecoder bool
	Oracles            compute.Oracles // slower reference paths for A/B diagnosis
	Logger             *slog.Logger    // diagnostics; nil discards them
	// CacheDir, when set, mirrors the conditioning cache to disk (it then
	// survives restarts).
	CacheDir string
	// CacheBytes bounds the conditioning cache in memory (0: 256 MiB).
	CacheBytes int64
	// CloseBackend makes Close close Backend too (the session owns it).
	CloseBackend bool
	// ProfileForwards measures every DiT forward (dispatches, device time,
	// peak storage) into Result.Forwards. Each profiled forward waits for
	// its device work, so it costs some overlap on the GPU; off by default.
	ProfileForwards bool
	// RatesFile, when set, keeps the measured throughputs (seconds per
	// unit of work of each phase, per device and model) between runs, so
	// that a new process estimates its first take's time from the start
	// instead of after its first denoising step.
	RatesFile string
}

// ErrBusy is returned by Generate while another generation runs.
var ErrBusy = errors.New("engine: a generation is already running")

// Session is an opened model folder. Components are loaded lazily by the
// first Generate that needs them and stay resident between requests as the
// memory mode allows, so a second seed of the same prompt skips loading and,
// through the conditioning cache, text encoding. Plan is safe for
// concurrent use; one Generate runs at a time (another returns ErrBusy).
type Session struct {
	opts  Options
	snap  *snapshot.Snapshot
	facts ModelFacts
	name  string
	log   *slog.Logger

	mu   sync.Mutex // guards busy
	busy bool
	// forwards collects the running generation's DiT forward profiles
	// (Options.ProfileForwards); written only by Generate's goroutine.
	forwards dit.ProfileSummary

	infoMu sync.Mutex
	infos  map[snapshot.Partition]*partInfo
	preds  plan.Cache[predictionKey, cachedPrediction]

	// Owned by the running Generate (or by Release/Close when idle).
	cur      *models
	cond     *condcache.Cache
	textID   map[string]string // text encoder folder → identity hash
	est      *plan.Rates[Phase]
	counters counters
}

// counters count the session's work (tests and the cache report).
type counters struct {
	Generations, Loads, TextEncodes, TextCacheHits, Steps, Forwards, FramesWritten, Previews atomic.Int64
}

// Counters is a snapshot of a session's work counters: tests prove cache
// hits and cancellation with them rather than with clocks.
type Counters struct {
	Generations   int64 // Generate calls that ran (including failed and cancelled ones)
	Loads         int64 // component loads (text encoder, transformer, video VAE, audio VAE)
	TextEncodes   int64 // text encoder runs
	TextCacheHits int64 // conditionings taken from the cache
	Steps         int64 // denoising steps finished
	Forwards      int64 // transformer evaluations
	FramesWritten int64 // frames handed to a sink
	Previews      int64 // denoising previews decoded
}

// Counters returns the session's work counters.
func (s *Session) Counters() Counters {
	c := &s.counters
	return Counters{Generations: c.Generations.Load(), Loads: c.Loads.Load(), TextEncodes: c.TextEncodes.Load(),
		TextCacheHits: c.TextCacheHits.Load(), Steps: c.Steps.Load(), Forwards: c.Forwards.Load(),
		FramesWritten: c.FramesWritten.Load(), Previews: c.Previews.Load()}
}

// Open validates the model folder's layout and configs. It maps no weights.
func Open(o Options) (*Session, error) {
	if o.Backend == nil {
		return nil, errors.New("engine: Options.Backend is nil")
	}
	if o.ModelDir == "" {
		return nil, errors.New("engine: no model folder given")
	}
	snap, err := snapshot.Open(o.ModelDir)
	if err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	s := &Session{opts: o, snap: snap, log: o.Logger, textID: map[string]string{}, est: plan.NewRates(phases), infos: map[snapshot.Partition]*partInfo{}}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if err := s.readFacts(); err != nil {
		return nil, err
	}
	cb := o.CacheBytes
	if cb == 0 {
		cb = 256 << 20
	}
	copts := condcache.Options{MemoryBytes: cb}
	if o.CacheDir != "" {
		copts.Dir = filepath.Join(o.CacheDir, "conditioning")
		if err := os.MkdirAll(copts.Dir, 0o755); err != nil {
			return nil, fmt.Errorf("engine: conditioning cache: %w", err)
		}
	}
	s.cond = condcache.New(copts)
	s.loadRates()
	return s, nil
}

// readFacts reads what Plan needs from configs.
func (s *Session) readFacts() error {
	f := &s.facts
	if c := s.snap.Find(snapshot.FL2VA, snapshot.Transformer); c != nil {
		f.HasFL2VA = true
		cfg, err := dit.ReadConfig(c.ConfigDir)
		if err != nil {
			return fmt.Errorf("engine: %w", err)
		}
		f.Blocks = cfg.NumLayers
	}
	if c := s.snap.Find(snapshot.Ref2VA, snapshot.Transformer); c != nil {
		f.HasRef2VA = true
		if f.Blocks == 0 {
			cfg, err := dit.ReadConfig(c.ConfigDir)
			if err != nil {
				return fmt.Errorf("engine: %w", err)
			}
			f.Blocks = cfg.NumLayers
		}
	}
	if !f.HasFL2VA && !f.HasRef2VA {
		return fmt.Errorf("engine: %s has no transformer (FL2VA/transformer or Ref2VA/transformer): nothing can be generated", s.snap.Root)
	}
	s.name = "MiniMax-H3"
	for _, dir := range []string{s.snap.Root, filepath.Join(s.snap.Root, "FL2VA"), filepath.Join(s.snap.Root, "Ref2VA")} {
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

// Model describes the opened model ("MiniMax-H3", or the demo model).
func (s *Session) Model() string { return s.name }

// Facts returns what the session knows about the model from its configs.
func (s *Session) Facts() ModelFacts { return s.facts }

// Snapshot is the discovered model folder.
func (s *Session) Snapshot() *snapshot.Snapshot { return s.snap }

// Generate runs one request, writing frames and audio to out in
// presentation order (Begin, every frame, the sound, Close). progress runs
// on the calling goroutine and must not block. Cancelling ctx stops the run
// at the next step, layer, tile or block boundary; out is then aborted,
// leaving nothing partial, and the error wraps ctx.Err(). On any failure
// out is aborted too.
func (s *Session) Generate(ctx context.Context, r Request, out media.Sink, progress func(Event)) (Result, error) {
	s.mu.Lock()
	if s.busy {
		s.mu.Unlock()
		return Result{}, ErrBusy
	}
	s.busy = true
	s.mu.Unlock()
	defer func() { s.mu.Lock(); s.busy = false; s.mu.Unlock() }()
	if out == nil {
		return Result{}, errors.New("engine: Generate needs an output sink")
	}
	p, err := s.Plan(r)
	if err != nil {
		out.Abort()
		return Result{}, err
	}
	s.counters.Generations.Add(1)
	s.forwards = dit.ProfileSummary{}
	t := newTracker(s.opts.Backend, progress, s.newEstimate(p))
	res, err := s.runCatchingFaults(ctx, p, out, t)
	if err == nil {
		if cerr := ctx.Err(); cerr != nil {
			err = cerr
		}
	}
	t.end()
	res.Timings, res.Profile, res.PeakBytes = t.timings(), t.profile, t.peak
	if s.opts.ProfileForwards {
		f := s.forwards
		res.Forwards = &f
		if f.PeakBytes > res.PeakBytes {
			res.PeakBytes = f.PeakBytes
		}
	}
	if err != nil {
		if abortErr := out.Abort(); abortErr != nil {
			s.log.Warn("abort output", "err", abortErr)
		}
		if ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
			err = fmt.Errorf("%w (%v)", ctx.Err(), err)
		}
		return res, err
	}
	t.finish()
	s.saveRates()
	return res, nil
}

// CacheReport describes what the session holds between requests.
type CacheReport struct {
	Memory MemoryMode // the mode of the resident components
	// Loaded lists the components whose weights are resident
	// ("FL2VA/transformer", …).
	Loaded []string
	// LiveBytes is the backend storage held now (weights and cached
	// tensors).
	LiveBytes int64
	// Conditionings is the number of cached text conditionings and
	// ConditioningBytes their size in memory; Hits and Misses count
	// lookups since the session opened.
	Conditionings     int
	ConditioningBytes int64
	Hits, Misses      int64
	CacheDir          string // the on-disk mirror ("" when none)
}

// CacheReport reports the resident components and the conditioning cache.
func (s *Session) CacheReport() CacheReport {
	rep := CacheReport{LiveBytes: s.opts.Backend.Stats().LiveBytes}
	if c := s.cur; c != nil {
		rep.Loaded = c.loaded()
		rep.Memory = c.loadedMode
	}
	st := s.cond.Stats()
	rep.Conditionings, rep.ConditioningBytes = st.Entries, st.MemoryBytes
	rep.Hits, rep.Misses = st.Hits+st.DiskHits, st.Misses
	if s.opts.CacheDir != "" {
		rep.CacheDir = filepath.Join(s.opts.CacheDir, "conditioning")
	}
	return rep
}

// Release drops every resident component (the next Generate loads again)
// and, when conditioning is true, the conditioning cache (the on-disk
// mirror too). It returns ErrBusy while a generation runs.
func (s *Session) Release(conditioning bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.busy {
		return ErrBusy
	}
	if s.cur != nil {
		s.cur.release()
	}
	if conditioning {
		return s.cond.Clear(true)
	}
	return nil
}

// Close releases every loaded component. The session must not be used
// afterwards.
func (s *Session) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur != nil {
		s.cur.release()
		s.cur = nil
	}
	if s.opts.CloseBackend {
		s.opts.CloseBackend = false
		return s.opts.Backend.Close()
	}
	return nil
}

// modelID identifies a partition's weights for the sidecar: the first 16
// hex digits of a hash of the transformer's config and shard index (the
// demo checkpoint also names its version).
func (s *Session) modelID(m *models) string {
	h := sha256.New()
	for _, name := range []string{"config.json", "model.safetensors.index.json", "diffusion_pytorch_model.safetensors.index.json"} {
		if b, err := os.ReadFile(filepath.Join(m.DiTDir, name)); err == nil {
			h.Write(b)
		}
	}
	id := string(m.Partition) + " " + hex.EncodeToString(h.Sum(nil))[:16]
	if s.facts.Demo {
		id = "demo " + id
	}
	return id
}

// generation is one running request: what its phases hand on to each
// other.
type generation struct {
	s    *Session
	ctx  context.Context
	p    Plan
	r    Request
	out  media.Sink
	t    *tracker
	res  Result
	m    *models
	mode MemoryMode
	// release makes each phase release its component before the next
	// loads (the plan's ModePlan.Kept false); textResidency and
	// videoResidency are its choices for the text encoder and the video
	// decoder.
	release                       bool
	textResidency, videoResidency compute.Residency

	cond   *conditions     // prepare conditions → text, denoise
	hidden *compute.Tensor // encode text → denoise
	tags   []int64
	target layout.Grid     // the latent video grid
	dres   *denoise.Result // denoise → decoders
	audio  media.Audio     // decode audio → export
}

// run executes a planned request, phase by phase: load (load.go) →
// references (conditions.go: media decoding, the Qwen processor, VAE
// encoding of the conditions) → text (text.go: tokenizer, presentation,
// Qwen3-VL; cached by content hash) → denoise (denoise.go: the DiT loop) →
// video decode (frames streamed into out), audio decode and export (out
// closed; decode.go). ctx is checked at every step, layer, tile and block
// boundary, and inside the kernels of an Interruptible backend (the CPU's:
// one convolution of a reference video's tile takes seconds there). On an
// error the caller aborts out.
func (s *Session) run(ctx context.Context, p Plan, out media.Sink, t *tracker) (res Result, err error) {
	g := &generation{s: s, ctx: ctx, p: p, r: p.Request, out: out, t: t}
	defer compute.Recover(&err)
	defer compute.WatchContext(s.opts.Backend, ctx)()
	defer func() {
		if g.hidden != nil {
			s.opts.Backend.Free(g.hidden)
		}
	}()
	for _, phase := range []func() error{g.load, g.prepareConditions, g.encodeText, g.denoise, g.decodeVideo, g.decodeAudio, g.export} {
		if err := phase(); err != nil {
			return g.res, err
		}
	}
	return g.res, nil
}
