package testkit

import (
	"encoding/json"
	"os"
	"testing"
)

// ReadFile is the content of the file path; an unreadable file fails the
// test.
func ReadFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// ReadJSON decodes the JSON file path into v; an unreadable file or
// invalid JSON fails the test, naming the file.
func ReadJSON(t testing.TB, path string, v any) {
	t.Helper()
	if err := json.Unmarshal(ReadFile(t, path), v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
