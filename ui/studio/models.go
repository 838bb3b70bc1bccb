package studio

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"h3studio/engine/hfhub"
	"h3studio/engine/snapshot"
)

// TokenStore keeps the Hugging Face token (engine/credstore satisfies it:
// the Keychain on macOS, a 0600 file elsewhere).
type TokenStore interface {
	Get(service, account string) (string, error)
	Set(service, account, secret string) error
	Delete(service, account string) error
}

// ModelsOptions configure the model manager. Zero fields take the defaults described.
type ModelsOptions struct {
	Env     hfhub.Env      // the HF environment (HF_HOME, HF_HUB_CACHE, HF_ENDPOINT, HF_TOKEN)
	Tokens  TokenStore     // where a token typed in the window is kept (nil: not kept)
	Records *hfhub.Records // verified snapshots and folders opened before (nil: none)
	// Folders lists folders to look in besides the HF cache (the model
	// folder chosen before, the usual places).
	Folders func() []string
	// Go runs background work (default: a goroutine).
	Go func(func())
	// OpenURL opens a web page in the browser (the licence page, the token page).
	OpenURL func(url string)
	// Trash moves a path to the Trash.
	Trash func(path string) error
	// UseModel switches the studio to a snapshot folder.
	UseModel func(dir string)
	// Parallel is how many files download at once (default 3).
	Parallel int
	// FreeSpace overrides the free-space probe (tests).
	FreeSpace func(path string) (int64, error)
	// KeepAwake holds off idle sleep while downloading (default hfhub.KeepAwake).
	KeepAwake func() (release func())
}

// DownloadPhase is where a download stands.
type DownloadPhase string

// The phases of a download.
const (
	DownloadIdle      DownloadPhase = ""
	DownloadPlanning  DownloadPhase = "planning"
	DownloadRunning   DownloadPhase = "downloading"
	DownloadPaused    DownloadPhase = "paused"
	DownloadDone      DownloadPhase = "done"
	DownloadFailed    DownloadPhase = "failed"
	DownloadCancelled DownloadPhase = "cancelled"
)

// DownloadState is the download shown in the Models window.
type DownloadState struct {
	Tasks    []snapshot.Task
	Dir      string // "" for the HF cache
	Phase    DownloadPhase
	Progress hfhub.ProgressSnapshot
	Root     string // the snapshot folder, once planned
	Err      string
	// Gated is set when the Hub refused for want of a token or a licence:
	// the window asks for a token and links to the model page.
	Gated bool
}

// TaskChoice is one download the window offers, sized from the Hub's tree.
type TaskChoice struct {
	Label string
	Tasks []snapshot.Task
	Total int64 // bytes of the whole set
	Need  int64 // bytes still to download into the HF cache
}

// ModelsSnapshot is the model manager's state at one moment.
type ModelsSnapshot struct {
	Installed []hfhub.Installed
	Scanning  bool
	Scanned   bool // a scan has completed
	Choices   []TaskChoice
	ChoiceErr string // why the sizes could not be fetched
	HubCache  string
	Free      int64 // bytes free on the HF cache's volume (-1 unknown)
	Download  DownloadState
	// Token says where the token in use comes from ("" none); never the token.
	Token    hfhub.TokenSource
	Verifies map[string]string // path -> "verifying…" or the result
	Message  string
}

// Models is the model manager behind the Models window: discovery, task
// choices with sizes, one background download with pause/resume/cancel,
// verification, removal and the Hub token. Safe for concurrent use; every
// method returns at once and background work runs through Options.Go.
type Models struct {
	o     ModelsOptions
	mu    sync.Mutex
	snap  ModelsSnapshot
	subs  map[int]func()
	next  int
	stop  context.CancelFunc
	cause DownloadPhase // why the running download was stopped
}

// NewModels returns a model manager.
func NewModels(o ModelsOptions) *Models {
	if o.Go == nil {
		o.Go = func(f func()) { go f() }
	}
	if o.OpenURL == nil {
		o.OpenURL = func(string) {}
	}
	if o.Folders == nil {
		o.Folders = func() []string { return nil }
	}
	if o.KeepAwake == nil {
		o.KeepAwake = hfhub.KeepAwake
	}
	if o.FreeSpace == nil {
		o.FreeSpace = hfhub.FreeSpace
	}
	m := &Models{o: o, subs: map[int]func(){}}
	m.snap.HubCache = o.Env.HubCache
	m.snap.Free = -1
	m.snap.Verifies = map[string]string{}
	_, m.snap.Token = o.Env.Token(o.Tokens)
	return m
}

// Subscribe calls f (from any goroutine) after every change; the returned
// function unsubscribes.
func (m *Models) Subscribe(f func()) func() {
	m.mu.Lock()
	defer m.mu.Unlock()
	id := m.next
	m.next++
	m.subs[id] = f
	return func() { m.mu.Lock(); delete(m.subs, id); m.mu.Unlock() }
}

func (m *Models) changedLocked() []func() {
	fs := make([]func(), 0, len(m.subs))
	for _, f := range m.subs {
		fs = append(fs, f)
	}
	return fs
}

// update changes the state under the lock and tells the subscribers.
func (m *Models) update(f func(s *ModelsSnapshot)) {
	m.mu.Lock()
	f(&m.snap)
	fs := m.changedLocked()
	m.mu.Unlock()
	for _, f := range fs {
		f()
	}
}

// Snapshot returns a copy of the state.
func (m *Models) Snapshot() ModelsSnapshot {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.snap
	s.Installed = append([]hfhub.Installed(nil), s.Installed...)
	s.Choices = append([]TaskChoice(nil), s.Choices...)
	s.Verifies = make(map[string]string, len(m.snap.Verifies))
	for k, v := range m.snap.Verifies {
		s.Verifies[k] = v
	}
	return s
}

// NeedsSetup reports whether the last scan found no real (non-demo) snapshot
// that can run a task: the window is shown at start then.
func (m *Models) NeedsSetup() bool {
	s := m.Snapshot()
	for _, in := range s.Installed {
		if !in.Demo && in.Complete() {
			return false
		}
	}
	return true
}

// Best is the real snapshot that can run the most tasks ("" when none).
func (m *Models) Best() string {
	for _, in := range m.Snapshot().Installed {
		if !in.Demo && in.Complete() {
			return in.Path
		}
	}
	return ""
}

// Refresh scans the disk again (the HF cache and the folders), without the network.
func (m *Models) Refresh() {
	m.update(func(s *ModelsSnapshot) { s.Scanning = true })
	m.o.Go(m.ScanNow)
}

// ScanNow scans on the caller's goroutine (app start uses it off the UI thread).
func (m *Models) ScanNow() {
	var folders []string
	folders = append(folders, m.o.Folders()...)
	if m.o.Records != nil {
		folders = append(folders, m.o.Records.Folders...)
	}
	found := hfhub.Discover(m.o.Env, folders, m.o.Records)
	free, err := m.o.FreeSpace(m.o.Env.HubCache)
	if err != nil {
		free = -1
	}
	m.update(func(s *ModelsSnapshot) {
		s.Installed, s.Scanning, s.Scanned, s.Free = found, false, true, free
	})
}

// client returns a Hub client with the current token.
func (m *Models) client() *hfhub.Client {
	tok, _ := m.o.Env.Token(m.o.Tokens)
	return hfhub.NewClient(m.o.Env.Endpoint, tok)
}

// choiceSets are the downloads offered: the FL2VA partition, and with Ref2VA.
var choiceSets = []TaskChoice{
	{Label: "Text and first/last frame to video (T2VA, FL2VA)", Tasks: []snapshot.Task{snapshot.T2VA, snapshot.FL2VAT}},
	{Label: "All tasks, with reference video (adds Ref2VA)", Tasks: []snapshot.Task{snapshot.T2VA, snapshot.FL2VAT, snapshot.Ref2VAT}},
}

// LoadChoices asks the Hub for the sizes of the downloads offered.
func (m *Models) LoadChoices() {
	m.o.Go(func() {
		ctx := context.Background()
		var out []TaskChoice
		var firstErr error
		for _, c := range choiceSets {
			p, err := hfhub.PlanDownload(ctx, m.client(), &hfhub.Request{Tasks: c.Tasks, HubCache: m.o.Env.HubCache})
			if err != nil {
				firstErr = err
				break
			}
			c.Total, c.Need = p.Total, p.Need
			out = append(out, c)
		}
		m.update(func(s *ModelsSnapshot) {
			s.Choices = out
			s.ChoiceErr = ""
			if firstErr != nil {
				s.ChoiceErr = firstErr.Error()
				s.Download.Gated = s.Download.Gated || hfhub.Gated(firstErr)
			}
		})
	})
}

// Start downloads what tasks need (into dir, or the HF cache when ""), in
// the background; partial files from an earlier run are resumed.
func (m *Models) Start(tasks []snapshot.Task, dir string) error {
	if len(tasks) == 0 {
		return fmt.Errorf("choose at least one task")
	}
	m.mu.Lock()
	if m.stop != nil {
		m.mu.Unlock()
		return errors.New("a download is already running")
	}
	ctx, cancel := context.WithCancel(context.Background())
	m.stop, m.cause = cancel, DownloadCancelled
	prog := &hfhub.Progress{}
	m.snap.Download = DownloadState{Tasks: tasks, Dir: dir, Phase: DownloadPlanning}
	m.snap.Message = ""
	fs := m.changedLocked()
	m.mu.Unlock()
	for _, f := range fs {
		f()
	}
	m.o.Go(func() { m.run(ctx, prog, tasks, dir) })
	return nil
}

func (m *Models) run(ctx context.Context, prog *hfhub.Progress, tasks []snapshot.Task, dir string) {
	release := m.o.KeepAwake()
	defer release()
	c := m.client()
	req := &hfhub.Request{Tasks: tasks, Dir: dir, HubCache: m.o.Env.HubCache, Parallel: m.o.Parallel, Progress: prog, FreeSpace: m.o.FreeSpace}
	plan, err := hfhub.PlanDownload(ctx, c, req)
	var res *hfhub.Result
	if err == nil {
		m.update(func(s *ModelsSnapshot) {
			s.Download.Phase, s.Download.Root = DownloadRunning, plan.Root()
			s.Download.Progress = prog.Snapshot()
		})
		done := make(chan struct{})
		go func() {
			for {
				select {
				case <-done:
					return
				case <-ctx.Done():
					return
				case <-tick():
				}
				snap := prog.Snapshot()
				m.update(func(s *ModelsSnapshot) { s.Download.Progress = snap })
			}
		}()
		res, err = plan.Run(ctx, c, req)
		close(done)
	}
	m.mu.Lock()
	cause := m.cause
	m.stop = nil
	m.mu.Unlock()
	if err != nil && errors.Is(err, context.Canceled) && cause == DownloadCancelled && plan != nil {
		plan.DiscardPartials()
	}
	final := prog.Snapshot()
	m.update(func(s *ModelsSnapshot) {
		d := &s.Download
		d.Progress = final
		switch {
		case err == nil:
			d.Phase, d.Err, d.Gated = DownloadDone, "", false
			s.Message = "MiniMax-H3 is ready: every file was verified."
		case errors.Is(err, context.Canceled):
			d.Phase = cause
		default:
			d.Phase, d.Err = DownloadFailed, err.Error()
			d.Gated = hfhub.Gated(err)
		}
	})
	if err == nil {
		if m.o.Records != nil {
			if res.Held == 0 {
				m.o.Records.MarkVerified(res.Root, res.Commit)
			}
			if dir != "" {
				m.o.Records.AddFolder(res.Root)
			}
		}
		if m.o.UseModel != nil {
			m.o.UseModel(res.Root)
		}
	}
	if err != nil && hfhub.Gated(err) {
		m.o.OpenURL(hfhub.PageURL(hfhub.Repo)) // the licence is accepted there
	}
	m.ScanNow()
}

// Pause stops the download, keeping its partial files for Resume (or the next start).
func (m *Models) Pause() { m.halt(DownloadPaused) }

// Cancel stops the download and deletes its partial files.
func (m *Models) Cancel() { m.halt(DownloadCancelled) }

func (m *Models) halt(cause DownloadPhase) {
	m.mu.Lock()
	stop := m.stop
	m.cause = cause
	m.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// Resume restarts a paused or failed download where its files stopped.
func (m *Models) Resume() error {
	d := m.Snapshot().Download
	if d.Phase != DownloadPaused && d.Phase != DownloadFailed {
		return fmt.Errorf("nothing to resume")
	}
	return m.Start(d.Tasks, d.Dir)
}

// Verify re-hashes the snapshot at path in the background.
func (m *Models) Verify(path string) {
	m.update(func(s *ModelsSnapshot) { s.Verifies[path] = "verifying…" })
	m.o.Go(func() {
		rep, err := hfhub.Verify(context.Background(), path, nil, 4)
		var msg string
		switch {
		case err != nil:
			msg = "could not verify: " + err.Error()
		case !rep.OK():
			var parts []string
			for _, b := range rep.Bad {
				parts = append(parts, "wrong bytes in "+b.Path)
			}
			for _, p := range rep.Missing {
				parts = append(parts, "missing "+p)
			}
			parts = append(parts, rep.Problems...)
			msg = fmt.Sprintf("%d problems: %s", len(parts), strings.Join(parts, "; "))
		default:
			msg = fmt.Sprintf("verified: %d files, %s", rep.Checked, snapshot.HumanBytes(rep.Bytes))
			if m.o.Records != nil {
				m.o.Records.MarkVerified(rep.Root, rep.Commit)
			}
		}
		m.update(func(s *ModelsSnapshot) { s.Verifies[path] = msg })
		m.ScanNow()
	})
}

// Remove moves a snapshot to the Trash: a --local-dir folder whole; in the
// HF cache the snapshot and the blobs no other snapshot uses (the whole repo
// folder when it was the only snapshot).
func (m *Models) Remove(path string) error {
	if m.o.Trash == nil {
		return errors.New("this build cannot move files to the Trash")
	}
	var in *hfhub.Installed
	for _, x := range m.Snapshot().Installed {
		if x.Path == path {
			in = &x
			break
		}
	}
	if in == nil {
		return fmt.Errorf("%s is not listed", path)
	}
	targets, err := hfhub.RemovalSet(in.Path, in.Source == "hf-cache")
	if err != nil {
		return err
	}
	for _, t := range targets {
		if err := m.o.Trash(t); err != nil {
			return fmt.Errorf("move %s to the Trash: %w", t, err)
		}
	}
	if m.o.Records != nil {
		m.o.Records.Forget(path)
	}
	m.update(func(s *ModelsSnapshot) { s.Message = "Moved to the Trash: " + filepath.Base(path) })
	m.Refresh()
	return nil
}

// Use switches the studio to the snapshot at path.
func (m *Models) Use(path string) {
	if m.o.UseModel != nil {
		m.o.UseModel(path)
	}
}

// SetToken keeps a token typed by the user (HF_TOKEN, when set, still wins).
func (m *Models) SetToken(tok string) error {
	tok = strings.TrimSpace(tok)
	if tok == "" || strings.ContainsAny(tok, " \t\r\n") {
		return errors.New("paste one Hugging Face token (it starts with hf_)")
	}
	if m.o.Tokens == nil {
		return errors.New("this build has nowhere to keep a token; set HF_TOKEN instead")
	}
	if err := m.o.Tokens.Set(hfhub.TokenService, hfhub.TokenAccount, tok); err != nil {
		return err
	}
	_, src := m.o.Env.Token(m.o.Tokens)
	m.update(func(s *ModelsSnapshot) {
		s.Token = src
		s.Download.Gated = false
		if src == hfhub.TokenFromEnv {
			s.Message = "Token saved; HF_TOKEN is set in the environment and is used first."
		} else {
			s.Message = "Token saved."
		}
	})
	return nil
}

// ForgetToken deletes the stored token.
func (m *Models) ForgetToken() error {
	if m.o.Tokens == nil {
		return nil
	}
	if _, err := m.o.Tokens.Get(hfhub.TokenService, hfhub.TokenAccount); err == nil {
		if err := m.o.Tokens.Delete(hfhub.TokenService, hfhub.TokenAccount); err != nil {
			return err
		}
	}
	_, src := m.o.Env.Token(m.o.Tokens)
	m.update(func(s *ModelsSnapshot) { s.Token = src })
	return nil
}

// OpenModelPage opens the model's page, where its licence is accepted.
func (m *Models) OpenModelPage() { m.o.OpenURL(hfhub.PageURL(hfhub.Repo)) }

// OpenTokenPage opens the page where a read token is created.
func (m *Models) OpenTokenPage() { m.o.OpenURL(hfhub.TokenPageURL) }

// tick paces progress updates of the Models window.
func tick() <-chan time.Time { return time.After(250 * time.Millisecond) }
