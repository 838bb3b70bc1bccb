// Package studio holds H3 Studio's user-visible state, free of any GUI
// toolkit so it is tested without a display: the draft (prompt, keyframe
// slots, ordered references, settings) and its rule checks, the prompt
// builder for MiniMax-H3's official prompt format, the engine's plan for
// the draft, a job queue run one job at a time, progress per phase, the
// library of takes on disk, the viewer's clip, and fsnotify watching of
// the model folder and the input files.
//
// What the UI does goes through a few nouns, small handles on the one
// Studio that share its state and its lock: Compose (the draft), Queue
// (the jobs), Model (the model generating them), Takes (the library's
// takes and the viewer), and the Timeline (NewTimeline). The Studio itself
// keeps what they share: Subscribe, Snapshot, the notices, the library
// folder and Close.
//
// It talks to the engine only through Generator (Plan and Generate) and
// Engine (inspecting and opening model folders); app/ supplies the real
// ones, tests and the -fake-engine developer flag a fake.
//
// Concurrency: every exported method is safe for concurrent use and returns
// quickly; nothing a UI calls waits for the engine, the disk or the network.
// Background work (plans, jobs, probing files, loading clips) runs as tasks
// through Options.Go, one job at a time. Subscribers are told that something
// changed and read an immutable Snapshot.
package studio

import (
	"context"
	"errors"
	"fmt"
	"image"
	"math/rand/v2"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"h3studio/engine"
	"h3studio/engine/media"
)

// Generator is what studio needs from the engine; the engine's session
// satisfies it.
type Generator interface {
	Plan(engine.Request) (engine.Plan, error)
	Generate(ctx context.Context, r engine.Request, out media.Sink, progress func(engine.Event)) (engine.Result, error)
}

// ModelInfo describes a model folder, as `h3studio info` reports it,
// without loading any weight.
type ModelInfo struct {
	Dir     string
	Name    string        // "MiniMax-H3 FL2VA + Ref2VA", "MiniMax-H3 demo checkpoint"
	Report  string        // the `h3studio info` report
	Tasks   []engine.Task // tasks the folder can run
	Usable  bool          // Open may be called
	Problem string        // why it is not usable (or what is missing), in plain words
	Demo    bool          // the generated demo checkpoint (random weights)
	Engine  string        // "" for the real engine; "development fake engine" otherwise
}

// Engine turns model folders into generators; app/ implements it.
type Engine interface {
	Inspect(dir string) ModelInfo
	Open(dir string) (Generator, error)
	// Demo returns the demo checkpoint's folder, writing it first if needed.
	Demo() (string, error)
}

// Options configure a Studio. Zero fields take the defaults described.
type Options struct {
	Engine  Engine
	Library *Library
	// Opener decodes reference videos and compressed sound (the build's
	// media layer); nil: pictures and WAV only.
	Opener media.Opener
	// VideoSink creates a take's MP4 writer; nil: takes have no video.mp4.
	VideoSink func(path string) (media.Sink, error)
	// Device describes the machine for the status bar ("CPU · 24 GB");
	// MemoryBytes is its memory, for the "will it fit" warning (0: unknown).
	Device      string
	MemoryBytes int64
	AppVersion  string
	// Go runs background work; default starts a goroutine. Tests pass an
	// executor they drain on their own goroutine.
	Go func(func())
	// Watch follows input files and the model folder with fsnotify
	// (debounced by WatchDelay, default 500 ms).
	Watch      bool
	WatchDelay time.Duration
	Now        func() time.Time
	Rand       func() uint64 // dice; default math/rand/v2
	// Sample is shown in the viewer when the library is empty (the first
	// start's sample take).
	Sample func() *Clip
	// InfoNoticeLife is how long an Info notice without an action stays
	// (default 8 s; negative: until dismissed). Warnings, failures and
	// notices offering Undo stay until dismissed.
	InfoNoticeLife time.Duration
}

// Studio is the app's state. Create it with New.
type Studio struct {
	opts    Options
	builder *Builder
	lib     *Library
	ctx     context.Context
	stop    context.CancelFunc

	mu      sync.Mutex
	version uint64
	subs    map[int]func()
	nextSub int
	pending bool // a notification task is queued

	draft     Draft
	hist      history
	draftVer  uint64
	nextRefID int

	model    ModelState
	gen      Generator
	modelSeq int

	// remote, when set, runs new takes on a server (Queue.SetRemote).
	remote Generator

	plan      *engine.Plan
	planErr   error
	planVer   uint64
	planBusy  bool
	estimates map[engine.Preset]time.Duration

	jobs    []*job
	nextJob JobID
	running *job

	takes      []Take
	libLoaded  bool
	viewer     Viewer
	viewerSeq  int
	notices    []Notice
	nextNotice int

	probing     map[string]int // path → probe generation queued or in flight
	probeQueue  []string       // paths waiting for a probe slot
	probeActive int            // probes running (at most maxProbes)
	watch       *watcher
	libWatch    *libWatcher // nil when not watching
	closed      bool

	sampleWanted bool // RenderSampleTake: queue the sample take when the demo is ready
}

// ModelState is the model as the status bar shows it.
type ModelState struct {
	Info    ModelInfo
	Loading bool   // inspecting or opening
	Ready   bool   // a generator is open
	Err     string // opening failed
}

// Viewer is what the viewer shows.
type Viewer struct {
	TakeID  string // the library take shown ("" for none or the sample)
	Title   string
	Clip    *Clip // nil while loading or when empty
	Sample  bool  // the bundled sample clip, not a take
	Loading bool
	Err     string
	// Live is the running job's latest preview frame; the viewer shows it
	// instead of Clip while Follow is set.
	Live   *image.RGBA
	Follow bool
}

// NoticeLevel grades notices.
type NoticeLevel uint8

// Notice levels.
const (
	Info NoticeLevel = iota
	Warn
	Fail
)

// Notice is a transient message in the window's notice area (never a modal
// dialog). Action, when set, is offered as a button; so is each of
// Choices (see Offer).
type Notice struct {
	ID      int
	Level   NoticeLevel
	Text    string
	Action  string // "Undo"
	Choices []Choice
	Time    time.Time
}

const maxNotices = 5

// New creates a Studio with an empty draft. It starts reading the library
// in the background.
func New(o Options) (*Studio, error) {
	if o.Go == nil {
		o.Go = func(f func()) { go f() }
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Rand == nil {
		o.Rand = func() uint64 { return rand.Uint64N(1 << 31) }
	}
	if o.InfoNoticeLife == 0 {
		o.InfoNoticeLife = 8 * time.Second
	}
	if o.WatchDelay == 0 {
		o.WatchDelay = 500 * time.Millisecond
	}
	if o.Library == nil {
		return nil, errors.New("studio: no library")
	}
	b, err := NewBuilder()
	if err != nil {
		return nil, err
	}
	s := &Studio{opts: o, builder: b, lib: o.Library, subs: map[int]func(){}, draft: NewDraft(), probing: map[string]int{}, estimates: map[engine.Preset]time.Duration{}}
	s.ctx, s.stop = context.WithCancel(context.Background())
	if o.Watch {
		w, err := newWatcher(o.WatchDelay, s.fileChanged, s.modelChanged)
		if err != nil {
			return nil, err
		}
		s.watch = w
		if lw, err := newLibWatcher(o.WatchDelay, s.Takes().Refresh); err == nil {
			s.libWatch = lw
			lw.follow(o.Library.Dir)
		}
	}
	s.opts.Go(s.loadLibrary)
	return s, nil
}

// Builder returns the prompt builder (templates and examples).
func (s *Studio) Builder() *Builder { return s.builder }

// Library returns the library.
func (s *Studio) Library() *Library { return s.library() }

func (s *Studio) library() *Library {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lib
}

// Subscribe registers fn to be called after every change. fn runs on a
// background goroutine (never the caller's), must not block, and reads the
// state through Snapshot. The returned function unsubscribes.
func (s *Studio) Subscribe(fn func()) (cancel func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := s.nextSub
	s.nextSub++
	s.subs[id] = fn
	return func() {
		s.mu.Lock()
		delete(s.subs, id)
		s.mu.Unlock()
	}
}

// changedLocked records a change; the caller must call s.notify after
// unlocking (or use s.update).
func (s *Studio) changedLocked() { s.version++ }

// notify schedules one call of every subscriber (coalesced).
func (s *Studio) notify() {
	s.mu.Lock()
	if s.pending || len(s.subs) == 0 {
		s.mu.Unlock()
		return
	}
	s.pending = true
	s.mu.Unlock()
	s.opts.Go(func() {
		s.mu.Lock()
		s.pending = false
		fns := make([]func(), 0, len(s.subs))
		for _, f := range s.subs {
			fns = append(fns, f)
		}
		s.mu.Unlock()
		for _, f := range fns {
			f()
		}
	})
}

// update runs fn under the lock, counts a change and notifies.
func (s *Studio) update(fn func()) {
	s.mu.Lock()
	fn()
	s.changedLocked()
	s.mu.Unlock()
	s.notify()
}

// Snapshot is an immutable view of the whole state.
type Snapshot struct {
	Version  uint64
	Draft    Draft
	Task     engine.Task
	Labels   []string // reference labels in list order
	Problems []Problem
	// CanGenerate says whether Generate would queue a job; Why says why
	// not.
	CanGenerate bool
	Why         string
	CanUndo     bool
	CanRedo     bool
	// DraftEdits counts the draft's changes, undos and redos (it goes back
	// to 0 when the history is forgotten): a new value means the draft was
	// edited since the last snapshot.
	DraftEdits uint64

	Plan      *engine.Plan // the engine's plan for the draft; nil when none
	Estimates map[engine.Preset]time.Duration

	Model  ModelState
	Device string

	Jobs    []JobView // running first, then queued, then finished this session (newest first)
	Running *JobView
	Queued  int

	Takes         []Take // newest first
	LibraryLoaded bool
	LibraryDir    string
	Viewer        Viewer
	Notices       []Notice
}

// Snapshot returns the current state.
func (s *Studio) Snapshot() Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.opts.Now()
	d := s.draft.Clone()
	sn := Snapshot{
		Version: s.version, Draft: d, Task: d.Task(), Labels: Labels(d.References),
		CanUndo: len(s.hist.past) > 0, CanRedo: len(s.hist.future) > 0, DraftEdits: s.hist.edits,
		Model: s.model, Device: s.opts.Device,
		Takes: append([]Take(nil), s.takes...), LibraryLoaded: s.libLoaded, LibraryDir: s.lib.Dir,
		Viewer: s.viewer, Notices: append([]Notice(nil), s.notices...),
		Estimates: map[engine.Preset]time.Duration{},
	}
	for k, v := range s.estimates {
		sn.Estimates[k] = v
	}
	if s.plan != nil && s.planVer == s.draftVer {
		p := *s.plan
		sn.Plan = &p
	}
	sn.Problems = s.problemsLocked()
	sn.CanGenerate, sn.Why = s.canGenerateLocked(sn.Problems)
	for _, j := range s.jobs {
		v := j.view(now)
		sn.Jobs = append(sn.Jobs, v)
		switch j.state {
		case JobRunning:
			r := v
			sn.Running = &r
		case JobQueued:
			sn.Queued++
		}
	}
	if s.viewer.Follow && s.running != nil {
		sn.Viewer.Live = s.running.preview
	} else {
		sn.Viewer.Live = nil
	}
	return sn
}

// problemsLocked combines the pure checks with the model's and the plan's
// verdicts.
func (s *Studio) problemsLocked() []Problem {
	ps := Check(s.draft)
	task := s.draft.Task()
	if s.model.Ready && len(s.model.Info.Tasks) > 0 {
		has := false
		for _, t := range s.model.Info.Tasks {
			has = has || t == task
		}
		if !has {
			where, fix := AtModel, "Choose a model folder that has it (File ▸ Open Model Folder…)."
			if task == engine.TaskRef2VA {
				where = AtReferences
			}
			ps = append(ps, Problem{Where: where, Index: -1, Severity: Error,
				Message: "This model folder can't run " + taskName(task) + ".", Fix: fix})
		}
	}
	if p := s.plan; p != nil && s.planVer == s.draftVer && WouldSwap(p) {
		ps = append(ps, swapProblem(p, s.draft.Settings))
	} else if p != nil && s.planVer == s.draftVer && p.MemoryBudget == 0 && s.opts.MemoryBytes > 0 && p.PeakBytes > s.opts.MemoryBytes*9/10 {
		fix := "Choose Streaming under Memory, a smaller canvas, or a shorter length."
		if p.Memory == engine.MemoryStreaming {
			fix = "Choose a smaller canvas or a shorter length."
		}
		ps = append(ps, Problem{Where: AtSettings, Index: -1, Severity: Warning,
			Message: fmt.Sprintf("This take needs about %.1f GB at its peak in %s mode; this machine has %.0f GB.",
				float64(p.PeakBytes)/(1<<30), memoryWord(p.Memory), float64(s.opts.MemoryBytes)/(1<<30)),
			Fix: fix})
	}
	if s.planErr != nil && s.planVer == s.draftVer && !Blocking(ps) {
		ps = append(ps, Problem{Where: AtSettings, Index: -1, Severity: Error,
			Message: "The engine refuses this request: " + s.planErr.Error(), Fix: "Change the settings it names."})
	}
	return ps
}

func memoryWord(m engine.MemoryMode) string {
	if m == "" {
		return "automatic"
	}
	return string(m)
}

func taskName(t engine.Task) string {
	switch t {
	case engine.TaskRef2VA:
		return "reference requests (it has no Ref2VA transformer)"
	case engine.TaskFL2VA:
		return "first/last-frame requests"
	}
	return "text-only requests"
}

func (s *Studio) canGenerateLocked(ps []Problem) (bool, string) {
	switch {
	case s.closed:
		return false, "Closing."
	case s.gen == nil && s.model.Loading:
		return false, "The model is still being checked."
	case s.gen == nil && s.model.Info.Problem != "":
		return false, "No usable model: " + s.model.Info.Problem
	case s.gen == nil && s.model.Err != "":
		return false, "The model could not be opened: " + s.model.Err
	case s.gen == nil:
		return false, "No model is loaded. Choose one with File ▸ Open Model Folder…"
	}
	for _, p := range ps {
		if p.Severity == Error {
			return false, p.Message
		}
	}
	return true, ""
}

// Notify adds a notice (for the UI's own messages, such as a refused drop).
func (s *Studio) Notify(level NoticeLevel, text string) {
	s.update(func() { s.noticeLocked(level, text, "") })
}

// finishSentence makes a notice's text one finished sentence: many end
// with a cause that is an error's own text, which stops without a full
// stop.
func finishSentence(text string) string {
	text = strings.TrimSpace(text)
	body := strings.TrimRight(text, "”’)\"'")
	if r, _ := utf8.DecodeLastRuneInString(body); body == "" || strings.ContainsRune(".!?…", r) {
		return text
	}
	return text + "."
}

func (s *Studio) noticeLocked(level NoticeLevel, text, action string) {
	text = finishSentence(text)
	// The same message again replaces the one shown (moved to the end)
	// instead of stacking a duplicate.
	for i, n := range s.notices {
		if n.Level == level && n.Text == text && n.Action == action {
			s.notices = append(s.notices[:i:i], s.notices[i+1:]...)
			break
		}
	}
	s.nextNotice++
	s.notices = append(s.notices, Notice{ID: s.nextNotice, Level: level, Text: text, Action: action, Time: s.opts.Now()})
	if level == Info && action == "" && s.opts.InfoNoticeLife > 0 {
		id := s.nextNotice
		time.AfterFunc(s.opts.InfoNoticeLife, func() { s.Dismiss(id) })
	}
	// Past maxNotices the oldest go, but never one still offering a
	// choice: its question is still open.
	for i := 0; len(s.notices) > maxNotices && i < len(s.notices); {
		if len(s.notices[i].Choices) > 0 {
			i++
			continue
		}
		s.notices = append(s.notices[:i:i], s.notices[i+1:]...)
	}
}

// Dismiss removes a notice.
func (s *Studio) Dismiss(id int) {
	s.update(func() {
		for i, n := range s.notices {
			if n.ID == id {
				s.notices = append(s.notices[:i:i], s.notices[i+1:]...)
				return
			}
		}
	})
}

// Close stops background work: it cancels every job (the running one is
// aborted and leaves nothing in the library) and stops watching files.
func (s *Studio) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	for _, j := range s.jobs {
		if j.state == JobQueued {
			j.state = JobCancelled
			j.finished = s.opts.Now()
		}
	}
	if s.running != nil && s.running.cancel != nil {
		s.running.cancelAsked = true
		s.running.cancel()
	}
	w := s.watch
	s.mu.Unlock()
	s.stop()
	if w != nil {
		w.close()
	}
	if s.libWatch != nil {
		s.libWatch.close()
	}
	s.notify()
}
