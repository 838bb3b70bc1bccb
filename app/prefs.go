package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sync"

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
	if json.Unmarshal(b, p) != nil {
		// A damaged file is kept aside, not lost.
		os.Rename(p.path, p.path+".damaged")
		*p = prefs{path: p.path}
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

// save writes settings.json atomically.
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
	tmp := p.path + ".tmp"
	if os.WriteFile(tmp, b, 0o644) == nil {
		os.Rename(tmp, p.path)
	}
	p.existed = true
}
