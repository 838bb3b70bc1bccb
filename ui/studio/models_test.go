package studio

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"h3studio/engine/hfhub"
	"h3studio/engine/hfhub/fakehub"
	"h3studio/engine/snapshot"
	"h3studio/engine/snapshot/snapshottest"
	"h3studio/engine/testkit"
	"h3studio/ui/internal/uitest"
)

const modelsTestCommit = "0123456789abcdef0123456789abcdef01234567"

func modelsRepo(t *testing.T) map[string][]byte {
	d := t.TempDir()
	if err := snapshottest.WriteReleasedMinimal(d, "FL2VA", "Ref2VA"); err != nil {
		t.Fatal(err)
	}
	files := uitest.Files(t, d)
	files["model_index.json"] = []byte(`{"_class_name": "MiniMaxH3Pipeline"}`)
	for p, b := range files {
		if strings.HasPrefix(p, "Ref2VA/transformer/") && strings.HasSuffix(p, ".safetensors") {
			c := append([]byte(nil), b...)
			c[len(c)-1] ^= 0x80
			files[p] = c
		}
	}
	return files
}

type memTokens struct {
	mu sync.Mutex
	m  map[string]string
}

func (s *memTokens) Get(a, b string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if v, ok := s.m[a+b]; ok {
		return v, nil
	}
	return "", os.ErrNotExist
}
func (s *memTokens) Set(a, b, v string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]string{}
	}
	s.m[a+b] = v
	return nil
}
func (s *memTokens) Delete(a, b string) error {
	s.mu.Lock()
	delete(s.m, a+b)
	s.mu.Unlock()
	return nil
}

type modelsFixture struct {
	hub     *fakehub.Hub
	m       *Models
	files   map[string][]byte
	used    chan string
	opened  []string
	trashed []string
	mu      sync.Mutex
	records string
}

func newModelsFixture(t *testing.T, token string) *modelsFixture {
	f := &modelsFixture{files: modelsRepo(t), used: make(chan string, 4)}
	f.hub = fakehub.New(hfhub.Repo, modelsTestCommit, f.files)
	f.hub.Token = token
	t.Cleanup(f.hub.Close)
	home := t.TempDir()
	env := hfhub.EnvFrom(func(k string) string {
		return map[string]string{"HF_HOME": home, "HF_ENDPOINT": f.hub.Endpoint()}[k]
	})
	f.records = filepath.Join(t.TempDir(), "models.json")
	f.m = NewModels(ModelsOptions{
		Env: env, Tokens: &memTokens{}, Records: hfhub.LoadRecords(f.records),
		OpenURL: func(u string) { f.mu.Lock(); f.opened = append(f.opened, u); f.mu.Unlock() },
		Trash: func(p string) error {
			f.mu.Lock()
			f.trashed = append(f.trashed, p)
			f.mu.Unlock()
			return os.RemoveAll(p)
		},
		UseModel:  func(dir string) { f.used <- dir },
		KeepAwake: func() func() { return func() {} },
	})
	return f
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testkit.Wait(t, what, nil, cond)
}

// fileHasBytes reports whether path exists and is not empty.
func fileHasBytes(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Size() > 0
}

func phase(m *Models) DownloadPhase { return m.Snapshot().Download.Phase }

// A fresh user: nothing found, the window offers the task sets with their
// sizes, the download runs in the background and the studio switches to it.
func TestModelsFreshUserReachesAVerifiedSnapshot(t *testing.T) {
	f := newModelsFixture(t, "")
	f.m.ScanNow()
	if !f.m.NeedsSetup() {
		t.Fatal("no model on disk, yet NeedsSetup is false")
	}
	f.m.LoadChoices()
	waitFor(t, "the choices", func() bool { return len(f.m.Snapshot().Choices) == 2 })
	ch := f.m.Snapshot().Choices
	if ch[0].Total <= 0 || ch[1].Total <= ch[0].Total || ch[0].Need != ch[0].Total {
		t.Fatalf("choices %+v", ch)
	}
	if err := f.m.Start(ch[0].Tasks, ""); err != nil {
		t.Fatal(err)
	}
	var root string
	select {
	case root = <-f.used:
	case <-time.After(30 * time.Second):
		t.Fatalf("the download did not finish: %+v", f.m.Snapshot().Download)
	}
	waitFor(t, "the rescan", func() bool { return !f.m.NeedsSetup() })
	s := f.m.Snapshot()
	if s.Download.Phase != DownloadDone || s.Download.Progress.Done != s.Download.Progress.Total {
		t.Fatalf("download %+v", s.Download)
	}
	if f.m.Best() != root || s.Installed[0].State != "complete" || !slices.Contains(s.Installed[0].Tasks, "fl2va") {
		t.Fatalf("installed %+v (best %q, used %q)", s.Installed, f.m.Best(), root)
	}
	// Ref2VA next: only what differs is fetched.
	f.m.LoadChoices()
	waitFor(t, "the new sizes", func() bool {
		c := f.m.Snapshot().Choices
		return len(c) == 2 && c[0].Need == 0
	})
	if c := f.m.Snapshot().Choices[1]; c.Need <= 0 || c.Need >= c.Total {
		t.Fatalf("ref2va choice after fl2va: %+v", c)
	}
}

// A gated answer opens the model page and asks for a token; with the token the download resumes.
func TestModelsGatedAsksForAToken(t *testing.T) {
	f := newModelsFixture(t, "hf_secret_token")
	f.m.Start([]snapshot.Task{snapshot.T2VA}, "")
	waitFor(t, "the refusal", func() bool { return phase(f.m) == DownloadFailed })
	s := f.m.Snapshot()
	if !s.Download.Gated || !strings.Contains(s.Download.Err, "licence") {
		t.Fatalf("download %+v", s.Download)
	}
	f.mu.Lock()
	opened := slices.Contains(f.opened, hfhub.PageURL(hfhub.Repo))
	f.mu.Unlock()
	if !opened {
		t.Fatalf("the model page was not opened: %v", f.opened)
	}
	if err := f.m.SetToken("hf_secret_token"); err != nil {
		t.Fatal(err)
	}
	if f.m.Snapshot().Token != hfhub.TokenFromKeychain {
		t.Fatalf("token source %q", f.m.Snapshot().Token)
	}
	if err := f.m.Resume(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-f.used:
	case <-time.After(30 * time.Second):
		t.Fatalf("no download with the token: %+v", f.m.Snapshot().Download)
	}
	if b, _ := os.ReadFile(f.records); strings.Contains(string(b), "hf_secret_token") {
		t.Fatal("the token was written to the records")
	}
}

// Pause keeps the partial file and Resume continues it with Range; Cancel deletes it.
func TestModelsPauseResumeCancel(t *testing.T) {
	f := newModelsFixture(t, "")
	big := ""
	for p, b := range f.files {
		if strings.HasPrefix(p, "FL2VA/") && (big == "" || len(b) > len(f.files[big])) {
			big = p
		}
	}
	f.hub.Stall = &fakehub.Fault{Path: big, At: int64(len(f.files[big]) / 2)}
	f.m.Start([]snapshot.Task{snapshot.T2VA}, "")
	select {
	case <-f.hub.Stalled:
	case <-time.After(30 * time.Second):
		t.Fatal("never reached the stall")
	}
	partial := filepath.Join(f.m.Snapshot().HubCache, hfhub.RepoFolderName(hfhub.Repo), ".h3studio-partial", f.hub.Etag(big)+".part")
	waitFor(t, "the bytes before the stall on disk", func() bool { return fileHasBytes(partial) })
	f.m.Pause()
	waitFor(t, "the pause", func() bool { return phase(f.m) == DownloadPaused })
	if st, err := os.Stat(partial); err != nil || st.Size() == 0 {
		t.Fatalf("paused without keeping the partial: %v", err)
	}
	if err := f.m.Resume(); err != nil {
		t.Fatal(err)
	}
	<-f.used
	resumed := false
	for _, r := range f.hub.Log() {
		resumed = resumed || (r.File == big && r.Status == 206 && r.Start > 0)
	}
	if !resumed {
		t.Fatal("Resume did not continue the partial file with Range")
	}
	// Cancel of another download deletes its partials.
	g := newModelsFixture(t, "")
	g.hub.Stall = &fakehub.Fault{Path: big, At: int64(len(g.files[big]) / 2)}
	g.m.Start([]snapshot.Task{snapshot.T2VA}, "")
	<-g.hub.Stalled
	gp := filepath.Join(g.m.Snapshot().HubCache, hfhub.RepoFolderName(hfhub.Repo), ".h3studio-partial", g.hub.Etag(big)+".part")
	waitFor(t, "the bytes before the stall on disk", func() bool { return fileHasBytes(gp) })
	g.m.Cancel()
	waitFor(t, "the cancel", func() bool { return phase(g.m) == DownloadCancelled })
	if _, err := os.Stat(gp); err == nil {
		t.Fatal("Cancel kept the partial file")
	}
}

// Verify names a damaged file; Remove moves the snapshot to the Trash.
func TestModelsVerifyAndRemove(t *testing.T) {
	f := newModelsFixture(t, "")
	dir := filepath.Join(t.TempDir(), "MiniMax-H3")
	f.m.Start([]snapshot.Task{snapshot.T2VA}, dir)
	<-f.used
	waitFor(t, "the listing", func() bool { return len(f.m.Snapshot().Installed) == 1 })
	p := filepath.Join(dir, "FL2VA", "transformer", "config.json")
	b, _ := os.ReadFile(p)
	b[0] ^= 1
	os.WriteFile(p, b, 0o644)
	f.m.Verify(dir)
	waitFor(t, "the verification", func() bool { return !strings.HasSuffix(f.m.Snapshot().Verifies[dir], "…") })
	if msg := f.m.Snapshot().Verifies[dir]; !strings.Contains(msg, "FL2VA/transformer/config.json") {
		t.Fatalf("verify said %q", msg)
	}
	f.m.Repair(dir)
	<-f.used
	if got, _ := os.ReadFile(p); string(got) != string(f.files["FL2VA/transformer/config.json"]) {
		t.Fatal("Repair did not restore the damaged file")
	}
	if err := f.m.Remove(dir); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(f.trashed, []string{dir}) {
		t.Fatalf("trashed %v", f.trashed)
	}
	waitFor(t, "the rescan", func() bool { return len(f.m.Snapshot().Installed) == 0 && !f.m.Snapshot().Scanning })
}
