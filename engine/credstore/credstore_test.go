package credstore

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFileStoreRoundTrip(t *testing.T) {
	p := filepath.Join(t.TempDir(), "sub", "credentials.json")
	s := &FileStore{Path: p}
	if _, err := s.Get("svc", "acct"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get before Set: %v, want ErrNotFound", err)
	}
	if err := s.Set("svc", "acct", "hf_secret"); err != nil {
		t.Fatal(err)
	}
	if err := s.Set("svc", "other", "two"); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get("svc", "acct")
	if err != nil || got != "hf_secret" {
		t.Fatalf("Get = %q, %v", got, err)
	}
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, want 0600", st.Mode().Perm())
	}
	if err := s.Delete("svc", "acct"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get("svc", "acct"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get after Delete: %v", err)
	}
	if err := s.Delete("svc", "acct"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second Delete: %v", err)
	}
	if got, _ := s.Get("svc", "other"); got != "two" {
		t.Fatalf("the other secret was lost: %q", got)
	}
}

func TestFileStoreRejectsBadNamesAndFiles(t *testing.T) {
	p := filepath.Join(t.TempDir(), "credentials.json")
	s := &FileStore{Path: p}
	if err := s.Set("", "a", "x"); err == nil {
		t.Fatal("empty service accepted")
	}
	if err := os.WriteFile(p, []byte("[1,2"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := s.Get("svc", "a")
	if err == nil || !strings.Contains(err.Error(), p) {
		t.Fatalf("corrupt file: %v, want an error naming %s", err, p)
	}
}
