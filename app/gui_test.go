package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"h3studio/ui/studio"
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
	os.MkdirAll(chosen, 0o755)
	if lib, notice, err := openLibrary("", chosen, def); err != nil || lib.Dir != chosen || notice != "" {
		t.Errorf("chosen library: %v, %q, %+v", err, notice, lib)
	}
	// A remembered library on a disk that is not connected is reported and
	// never made again (its path would be an empty mount point).
	unplugged := filepath.Join(dir, "Volumes", "Archive", "Takes")
	lib, notice, err = openLibrary("", unplugged, def)
	if err != nil || lib.Dir != def || !strings.Contains(notice, unplugged) || !strings.Contains(notice, "can't be found") {
		t.Errorf("missing chosen library: %v, %q", err, notice)
	}
	if _, err := os.Stat(filepath.Join(dir, "Volumes")); err == nil {
		t.Error("the missing library was made again")
	}
	// Not even the default can be made: the window still opens, on a
	// temporary library, and the notice says so.
	lib, notice, err = openLibrary("", "", filepath.Join(file, "Movies", "H3 Studio"))
	if err != nil || lib == nil || !strings.Contains(notice, "can't be made") || !strings.Contains(notice, lib.Dir) {
		t.Fatalf("unmakeable default: %v, %q", err, notice)
	}
	os.RemoveAll(lib.Dir)
	if missingModelNotice("") != "" || !strings.Contains(missingModelNotice("/Volumes/Models/MiniMax-H3"), "/Volumes/Models/MiniMax-H3") {
		t.Error("missing model notice")
	}
}

// TestPrefsKeepTheDraft: the prompt and files left in Compose are written
// to settings.json and read back at the next start.
func TestPrefsKeepTheDraft(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	p := loadPrefs()
	if p.existed || p.Draft != nil {
		t.Fatalf("fresh prefs %+v", p)
	}
	p.Draft = &studio.SavedDraft{Prompt: "A fox.", First: "/x/first.png", References: []studio.SavedReference{{Path: "/x/v.mp4", Silent: true}}}
	p.save()
	q := loadPrefs()
	if !q.existed || q.Draft == nil || q.Draft.Prompt != "A fox." || q.Draft.First != "/x/first.png" || len(q.Draft.References) != 1 || !q.Draft.References[0].Silent {
		t.Errorf("read back %+v", q.Draft)
	}
}

// TestDamagedSettingsAreReported: a settings.json that does not parse is
// kept aside and reported, never reset silently.
func TestDamagedSettingsAreReported(t *testing.T) {
	cfg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfg)
	t.Setenv("HOME", t.TempDir())
	p := loadPrefs()
	os.MkdirAll(filepath.Dir(p.path), 0o755)
	os.WriteFile(p.path, []byte(`{"model_dir": "/x", `), 0o644)
	q := loadPrefs()
	if q.problem == "" || !strings.Contains(q.problem, "settings.json.damaged") {
		t.Errorf("problem %q", q.problem)
	}
	if b, err := os.ReadFile(p.path + ".damaged"); err != nil || string(b) != `{"model_dir": "/x", ` {
		t.Errorf("the damaged file was not kept: %v", err)
	}
}
