package main

import (
	"os"
	"path/filepath"
	"testing"

	"h3studio/engine/credstore"
)

func TestAPIToken(t *testing.T) {
	t.Setenv("H3_API_TOKEN", "")
	store := &credstore.FileStore{Path: filepath.Join(t.TempDir(), "cfg", "credentials.json")}
	tok, gen, err := apiToken(store)
	if err != nil || !gen || len(tok) < 32 {
		t.Fatalf("first start: %q %v %v", tok, gen, err)
	}
	if st, err := os.Stat(store.Path); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("the token file: %v %v", st, err)
	}
	again, gen, err := apiToken(store)
	if err != nil || gen || again != tok {
		t.Fatalf("second start: %q %v %v (want the stored token)", again, gen, err)
	}
	t.Setenv("H3_API_TOKEN", "env-token-0123456789")
	if env, gen, err := apiToken(store); err != nil || gen || env != "env-token-0123456789" {
		t.Fatalf("H3_API_TOKEN: %q %v %v", env, gen, err)
	}
	t.Setenv("H3_API_TOKEN", "short")
	if _, _, err := apiToken(store); err == nil {
		t.Fatal("a short H3_API_TOKEN was accepted")
	}
}
