package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestMain keeps the package's tests out of the user's cache folder: the
// demo checkpoint, conditionings and measured rates that generate and the
// studio write there go to a temporary folder instead (Go's build cache
// stays where it is).
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "h3studio-app-test-cache-")
	if err != nil {
		panic(err)
	}
	// Go's build cache defaults to the user cache folder too: keep the one
	// in use, or every `go build` a test runs (the Xvfb test's) starts cold.
	if os.Getenv("GOCACHE") == "" {
		if c, err := os.UserCacheDir(); err == nil {
			os.Setenv("GOCACHE", filepath.Join(c, "go-build"))
		}
	}
	os.Setenv("XDG_CACHE_HOME", dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
