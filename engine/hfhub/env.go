// Package hfhub talks to the Hugging Face Hub the way huggingface_hub does and
// keeps its files where the ecosystem expects them: it lists a repository's
// tree, downloads the files a set of tasks needs into the HF cache layout or
// a plain folder (resumable across processes, verified while streaming,
// identical files stored once), re-verifies what is on disk, and discovers
// the snapshots already present.
package hfhub

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"h3studio/engine/credstore"
)

// Repo is the model repository H3 Studio downloads.
const Repo = "MiniMaxAI/MiniMax-H3"

// DefaultEndpoint is the Hub's address when HF_ENDPOINT is unset.
const DefaultEndpoint = "https://huggingface.co"

// TokenService and TokenAccount name the Hub token in credstore.
const (
	TokenService = "h3studio.huggingface"
	TokenAccount = "default"
)

// Env is the part of the environment huggingface_hub reads, resolved.
type Env struct {
	Endpoint string // HF_ENDPOINT, without a trailing slash
	Home     string // HF_HOME
	HubCache string // HF_HUB_CACHE (or HUGGINGFACE_HUB_CACHE), default $HF_HOME/hub
	// TokenPath is HF_TOKEN_PATH, default $HF_HOME/token (what `hf auth login` writes).
	TokenPath string
	// EnvToken is HF_TOKEN (or HUGGING_FACE_HUB_TOKEN); it wins over every stored token.
	EnvToken string
	Offline  bool // HF_HUB_OFFLINE
}

// EnvFrom resolves the environment through getenv (os.Getenv in the app).
func EnvFrom(getenv func(string) string) Env {
	var e Env
	e.Endpoint = strings.TrimRight(getenv("HF_ENDPOINT"), "/")
	if e.Endpoint == "" {
		e.Endpoint = DefaultEndpoint
	}
	e.Home = getenv("HF_HOME")
	if e.Home == "" {
		base := getenv("XDG_CACHE_HOME")
		if base == "" {
			home := getenv("HOME")
			if home == "" {
				home, _ = os.UserHomeDir()
			}
			base = filepath.Join(home, ".cache")
		}
		e.Home = filepath.Join(base, "huggingface")
	}
	e.HubCache = getenv("HF_HUB_CACHE")
	if e.HubCache == "" {
		e.HubCache = getenv("HUGGINGFACE_HUB_CACHE")
	}
	if e.HubCache == "" {
		e.HubCache = filepath.Join(e.Home, "hub")
	}
	e.TokenPath = getenv("HF_TOKEN_PATH")
	if e.TokenPath == "" {
		e.TokenPath = filepath.Join(e.Home, "token")
	}
	e.EnvToken = strings.TrimSpace(getenv("HF_TOKEN"))
	if e.EnvToken == "" {
		e.EnvToken = strings.TrimSpace(getenv("HUGGING_FACE_HUB_TOKEN"))
	}
	switch strings.ToLower(getenv("HF_HUB_OFFLINE")) {
	case "1", "true", "yes", "on":
		e.Offline = true
	}
	return e
}

// TokenSource says where a token came from (never the token itself).
type TokenSource string

// Where a token can come from, in the order they are tried.
const (
	TokenFromEnv      TokenSource = "HF_TOKEN"
	TokenFromKeychain TokenSource = "H3 Studio's stored token"
	TokenFromFile     TokenSource = "the token file of `hf auth login`"
	NoToken           TokenSource = ""
)

// Token returns the token to send to the Hub and where it came from:
// HF_TOKEN when set, else the one H3 Studio stored (store may be nil), else
// the token file. An empty token means anonymous requests.
func (e Env) Token(store credstore.Store) (string, TokenSource) {
	if e.EnvToken != "" {
		return e.EnvToken, TokenFromEnv
	}
	if store != nil {
		if t, err := store.Get(TokenService, TokenAccount); err == nil && strings.TrimSpace(t) != "" {
			return strings.TrimSpace(t), TokenFromKeychain
		}
	}
	if b, err := os.ReadFile(e.TokenPath); err == nil {
		if t := strings.TrimSpace(string(b)); t != "" {
			return t, TokenFromFile
		}
	}
	return "", NoToken
}

// ErrOffline is returned when HF_HUB_OFFLINE forbids a request.
var ErrOffline = errors.New("hfhub: HF_HUB_OFFLINE is set; not contacting the Hub")
