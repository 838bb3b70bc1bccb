package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOpenLibraryFallsBack: a library folder chosen in Settings… that can't
// be opened (its disk is not connected) does not stop the app; the default
// library is used for the run, with a notice naming the folder. A folder
// given on the command line is used or refused, never replaced.
func TestOpenLibraryFallsBack(t *testing.T) {
	dir := t.TempDir()
	def := filepath.Join(dir, "Movies", "H3 Studio")
	file := filepath.Join(dir, "note.txt")
	os.WriteFile(file, []byte("x"), 0o644)
	gone := filepath.Join(file, "Library") // under a file: can't be created

	lib, notice, err := openLibrary("", gone, def)
	if err != nil || lib.Dir != def {
		t.Fatalf("unopenable chosen library: %v, %+v", err, lib)
	}
	if !strings.Contains(notice, gone) || !strings.Contains(notice, def) || !strings.Contains(notice, "not a directory") {
		t.Errorf("notice %q", notice)
	}
	if _, _, err := openLibrary(gone, "", def); err == nil {
		t.Error("a command-line library that can't be opened was replaced silently")
	}
	chosen := filepath.Join(dir, "External", "Takes")
	if lib, notice, err := openLibrary("", chosen, def); err != nil || lib.Dir != chosen || notice != "" {
		t.Errorf("chosen library: %v, %q, %+v", err, notice, lib)
	}
	if missingModelNotice("") != "" || !strings.Contains(missingModelNotice("/Volumes/Models/MiniMax-H3"), "/Volumes/Models/MiniMax-H3") {
		t.Error("missing model notice")
	}
}
