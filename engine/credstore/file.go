package credstore

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"h3studio/engine/atomicfile"
)

// FileStore keeps secrets in one JSON file readable only by its owner (mode
// 0600, its folder 0700). It is the store on systems without a Keychain.
type FileStore struct {
	// Path is the file; it is created on the first Set.
	Path string
	mu   sync.Mutex
}

// DefaultFilePath is where the file store lives: credentials.json in H3 Studio's configuration folder
// (beside settings.json, under os.UserConfigDir), or credentials.json in the current folder when no config folder is known.
func DefaultFilePath() string {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "credentials.json"
	}
	return filepath.Join(dir, "H3 Studio", "credentials.json")
}

func key(service, account string) string { return service + "\n" + account }

func (f *FileStore) load() (map[string]string, error) {
	b, err := os.ReadFile(f.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("credstore: %w", err)
	}
	var m map[string]string
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("credstore: %s is not a JSON object of strings: %w", f.Path, err)
	}
	if m == nil {
		m = map[string]string{}
	}
	return m, nil
}

func (f *FileStore) save(m map[string]string) error {
	if err := os.MkdirAll(filepath.Dir(f.Path), 0o700); err != nil {
		return fmt.Errorf("credstore: %w", err)
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("credstore: %w", err)
	}
	// atomicfile keeps the mode of the file it replaces: make sure there is
	// a private one first, so the secret is never readable by others.
	if pf, err := os.OpenFile(f.Path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600); err == nil {
		pf.Close()
	}
	if err := os.Chmod(f.Path, 0o600); err != nil {
		return fmt.Errorf("credstore: %w", err)
	}
	if err := atomicfile.WriteFile(f.Path, b); err != nil {
		return fmt.Errorf("credstore: %w", err)
	}
	return nil
}

// Get implements Store.
func (f *FileStore) Get(service, account string) (string, error) {
	if err := checkName(service, account); err != nil {
		return "", err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	m, err := f.load()
	if err != nil {
		return "", err
	}
	s, ok := m[key(service, account)]
	if !ok {
		return "", ErrNotFound
	}
	return s, nil
}

// Set implements Store.
func (f *FileStore) Set(service, account, secret string) error {
	return f.update(service, account, func(m map[string]string, k string) error {
		m[k] = secret
		return nil
	})
}

// Delete implements Store.
func (f *FileStore) Delete(service, account string) error {
	return f.update(service, account, func(m map[string]string, k string) error {
		if _, ok := m[k]; !ok {
			return ErrNotFound
		}
		delete(m, k)
		return nil
	})
}

// update checks the names, then under the lock loads the file, applies
// change to its map at the entry's key and saves the result; an error from
// change leaves the file as it was.
func (f *FileStore) update(service, account string, change func(m map[string]string, k string) error) error {
	if err := checkName(service, account); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	m, err := f.load()
	if err != nil {
		return err
	}
	if err := change(m, key(service, account)); err != nil {
		return err
	}
	return f.save(m)
}
