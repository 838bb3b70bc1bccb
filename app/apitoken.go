package main

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"strings"

	"h3studio/engine/credstore"
)

// The local API's token in the credential store (the Keychain on macOS,
// a 0600 file elsewhere), stored like the Hub token.
const (
	apiTokenService = "h3studio.api"
	apiTokenAccount = "default"
)

// apiToken is the local API's bearer token: H3_API_TOKEN, else the stored
// one, else a new random one stored for the next start (generated tells
// which, so the caller shows it once).
func apiToken(store credstore.Store) (token string, generated bool, err error) {
	if t := strings.TrimSpace(os.Getenv("H3_API_TOKEN")); t != "" {
		if len(t) < 16 {
			return "", false, errors.New("H3_API_TOKEN must be at least 16 characters")
		}
		return t, false, nil
	}
	t, err := store.Get(apiTokenService, apiTokenAccount)
	if err == nil && len(t) >= 16 {
		return t, false, nil
	}
	if err != nil && !errors.Is(err, credstore.ErrNotFound) {
		return "", false, fmt.Errorf("reading the API token: %w", err)
	}
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", false, err
	}
	t = "h3s-" + base64.RawURLEncoding.EncodeToString(b)
	if err := store.Set(apiTokenService, apiTokenAccount, t); err != nil {
		return "", false, fmt.Errorf("storing the API token: %w", err)
	}
	return t, true, nil
}
