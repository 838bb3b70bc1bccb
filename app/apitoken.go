package main

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"h3studio/engine/atomicfile"
)

// secretStore keeps named secrets of the user (the local API's token).
// fileSecrets is the store on every platform for now; the macOS Keychain
// store replaces it in newSecretStore alone.
type secretStore interface {
	Get(name string) (string, error) // fs.ErrNotExist when unset
	Set(name, value string) error
}

func newSecretStore() secretStore { return fileSecrets{dir: configDir()} }

// fileSecrets keeps each secret in a file readable by the user alone
// (0600, in a 0700 folder).
type fileSecrets struct{ dir string }

func (f fileSecrets) path(name string) string { return filepath.Join(f.dir, name) }

func (f fileSecrets) Get(name string) (string, error) {
	b, err := os.ReadFile(f.path(name))
	if err != nil {
		return "", err
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "", fs.ErrNotExist
	}
	return s, nil
}

func (f fileSecrets) Set(name, value string) error {
	if err := os.MkdirAll(f.dir, 0o700); err != nil {
		return err
	}
	// Not atomicfile.Commit: it gives new files 0644, and a secret must
	// never be readable by other users, not even for a moment.
	p := f.path(name)
	tmp, err := atomicfile.CreateTemp(p, ".tmp-*") // created 0600
	if err != nil {
		return err
	}
	_, err = tmp.WriteString(value + "\n")
	if err == nil {
		err = tmp.Chmod(0o600)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), p)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// apiTokenName is the API token's name in the secret store.
const apiTokenName = "api-token"

// apiToken is the local API's bearer token: H3_API_TOKEN, else the stored
// one, else a new random one stored for the next start (generated tells
// which, so the caller shows it once).
func apiToken(store secretStore) (token string, generated bool, err error) {
	if t := strings.TrimSpace(os.Getenv("H3_API_TOKEN")); t != "" {
		if len(t) < 16 {
			return "", false, errors.New("H3_API_TOKEN must be at least 16 characters")
		}
		return t, false, nil
	}
	t, err := store.Get(apiTokenName)
	if err == nil && len(t) >= 16 {
		return t, false, nil
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", false, fmt.Errorf("reading the API token: %w", err)
	}
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", false, err
	}
	t = "h3s-" + base64.RawURLEncoding.EncodeToString(b)
	if err := store.Set(apiTokenName, t); err != nil {
		return "", false, fmt.Errorf("storing the API token: %w", err)
	}
	return t, true, nil
}

// configDir is H3 Studio's configuration folder (~/Library/Application
// Support/H3 Studio on macOS).
func configDir() string {
	d, err := os.UserConfigDir()
	if err != nil {
		d = os.TempDir()
	}
	return filepath.Join(d, "H3 Studio")
}
