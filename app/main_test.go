package main

import (
	"os"
	"testing"
)

// TestMain keeps the package's tests out of the user's cache folder: the
// demo checkpoint, conditionings and measured rates that generate and the
// studio write there go to a temporary folder instead.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "h3studio-app-test-cache-")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_CACHE_HOME", dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
