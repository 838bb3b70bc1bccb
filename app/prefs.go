package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"h3studio/engine/atomicfile"
	"h3studio/ui/studio"
)

// prefs are the choices the studio remembers between runs, in
// settings.json in the user's configuration folder (~/Library/Application
// Support/H3 Studio on macOS).
type prefs struct {
	ModelDir   string           `json:"model_dir,omitempty"`
	LibraryDir string           `json:"library_dir,omitempty"`
	Settings   *studio.Settings `json:"settings,omitempty"`
	// Draft is Compose's prompt and files when the app last quit.
	Draft *studio.SavedDraft `json:"draft,omitempty"`
	// LocalAPI serves /v1/videos on 127.0.0.1 (Settings ▸ Local API; off
	// by default).
	LocalAPI bool `json:"local_api,omitempty"`
	// Run on server (Settings): the server, its kind (sglang, h3studio),
	// a shared folder LOCAL=REMOTE, and whether new takes go there.
	ServerURL  string `json:"server_url,omitempty"`
	ServerKind string `json:"server_kind,omitempty"`
	ServerMap  string `json:"server_map,omitempty"`
	ServerOn   bool   `json:"server_on,omitempty"`

	mu      sync.Mutex
	path    string
	existed bool
	// problem says what was wrong with settings.json at start ("" when
	// nothing), for a notice.
	problem string
	// kept is where the damaged settings.json was moved ("" when none).
	kept string
}

// freeName is path, or path-2, path-3… when that is taken: a name that
// replaces no file.
func freeName(path string) string {
	p := path
	for i := 2; ; i++ {
		if _, err := os.Lstat(p); errors.Is(err, os.ErrNotExist) {
			return p
		}
		p = fmt.Sprintf("%s-%d", path, i)
	}
}

func loadPrefs() *prefs {
	p := &prefs{}
	d, err := os.UserConfigDir()
	if err != nil {
		return p
	}
	p.path = filepath.Join(d, "H3 Studio", "settings.json")
	b, err := os.ReadFile(p.path)
	if err != nil {
		return p
	}
	p.existed = true
	if err := json.Unmarshal(b, p); err != nil {
		// A damaged file is kept aside under a name no earlier copy has,
		// never lost, and the user is told and asked (settingsChoices).
		aside := freeName(p.path + ".damaged")
		*p = prefs{path: p.path}
		if rerr := os.Rename(p.path, aside); rerr != nil {
			p.path = "" // never overwrite what could not be kept aside
			p.problem = fmt.Sprintf("The settings file %s is damaged (%v) and can't be moved aside (%v): the defaults are used, and nothing is saved over it this run.", filepath.Join(d, "H3 Studio", "settings.json"), err, errorCause(rerr))
		} else {
			p.kept = aside
			p.problem = fmt.Sprintf("The settings file was damaged (%v): it is kept as %s, and the defaults are used (the model, library and last draft are not remembered). Keep the copy, move it to the Trash, or show it to repair it (put it back as settings.json and restart).", err, aside)
		}
	}
	return p
}

func (p *prefs) SetModelDir(dir string) {
	p.mu.Lock()
	p.ModelDir = dir
	p.mu.Unlock()
	p.save()
}

func (p *prefs) SetLibraryDir(dir string) {
	p.mu.Lock()
	p.LibraryDir = dir
	p.mu.Unlock()
	p.save()
}

// save writes settings.json atomically (synced, then renamed), so a
// crash or kill at any moment leaves the old file or the new one.
func (p *prefs) save() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.path == "" {
		return
	}
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return
	}
	os.MkdirAll(filepath.Dir(p.path), 0o755)
	if atomicfile.WriteFile(p.path, b) == nil {
		p.existed = true
	}
}
