package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"h3studio/engine/credstore"
	"h3studio/engine/videoapi"
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

// TestServeRefusesOpenAddresses: a non-loopback address needs --lan.
func TestServeRefusesOpenAddresses(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:8420", "192.168.1.5:8420", ":8420"} {
		var out, errb strings.Builder
		if st := run([]string{"serve", "--addr", addr}, &out, &errb); st != 2 || !strings.Contains(errb.String(), "--lan") {
			t.Errorf("%s: exit %d %q", addr, st, errb.String())
		}
	}
	for addr, want := range map[string]bool{"127.0.0.1:1": true, "[::1]:1": true, "localhost:1": true, "0.0.0.0:1": false, ":1": false} {
		if videoapi.IsLoopback(addr) != want {
			t.Errorf("IsLoopback(%s) != %v", addr, want)
		}
	}
}
