package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSequenceExportErrors: usage, a bad field and a missing clip are
// named, and nothing is written.
func TestSequenceExportErrors(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "film.mp4")
	var so, se bytes.Buffer
	if st := run([]string{"sequence"}, &so, &se); st != 2 || !strings.Contains(se.String(), "usage") {
		t.Errorf("no subcommand: exit %d, %q", st, se.String())
	}
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"version": 1, "clips": [{"source": "a.mp4", "in": 2, "out": 1}]}`), 0o644)
	se.Reset()
	if st := run([]string{"sequence", "export", bad, "-o", out}, &so, &se); st != 1 || !strings.Contains(se.String(), "clips[0].out") {
		t.Errorf("bad out point: exit %d, %q", st, se.String())
	}
	miss := filepath.Join(dir, "seq.json")
	os.WriteFile(miss, []byte(`{"version": 1, "clips": [{"source": "take9/missing.mp4", "in": 0, "out": 1}]}`), 0o644)
	se.Reset()
	if st := run([]string{"sequence", "export", "-o", out, miss}, &so, &se); st != 1 || !strings.Contains(se.String(), "take9/missing.mp4") {
		t.Errorf("missing clip: exit %d, %q", st, se.String())
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a failed export wrote the MP4")
	}
}
