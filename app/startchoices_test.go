package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"h3studio/ui/studio"
)

func TestVolumeOf(t *testing.T) {
	for dir, want := range map[string]string{
		"/Volumes/Archive/Takes":         "/Volumes/Archive",
		"/Volumes/Archive":               "/Volumes/Archive",
		"/Volumes":                       "",
		"/media/ann/USB/H3":              "/media/ann/USB",
		"/run/media/ann/USB/H3/":         "/run/media/ann/USB",
		"/mnt/nas/takes":                 "/mnt/nas",
		"/Users/ann/Movies/H3 Studio":    "",
		"/home/ann/Volumes/Archive/Take": "",
	} {
		if got := volumeOf(dir); got != want {
			t.Errorf("volumeOf(%q) = %q, want %q", dir, got, want)
		}
	}
	if !isMountPoint("/") {
		t.Error("/ is not a mount point")
	}
	sub := filepath.Join(t.TempDir(), "sub")
	os.Mkdir(sub, 0o755)
	if isMountPoint(sub) {
		t.Error("a plain folder is a mount point")
	}
}

// TestMissingDiskIsNeverWritten: a remembered library on a disk that is not
// connected, whose mount point is left as an empty folder (or one holding
// a stale folder of that name), is reported and never written into; the
// default library is used meanwhile.
func TestMissingDiskIsNeverWritten(t *testing.T) {
	dir := t.TempDir()
	saved := volumeParents
	volumeParents = []string{filepath.Join(dir, "Volumes")}
	t.Cleanup(func() { volumeParents = saved })
	def := filepath.Join(dir, "Movies", "H3 Studio")
	mount := filepath.Join(dir, "Volumes", "Archive")
	chosen := filepath.Join(mount, "Takes")
	for _, stale := range []bool{false, true} {
		os.RemoveAll(mount)
		os.MkdirAll(mount, 0o755) // the empty mount point: on the startup disk
		if stale {
			os.Mkdir(chosen, 0o755)
		}
		lib, notice, err := openLibrary("", chosen, def)
		if err != nil || lib.Dir != def {
			t.Fatalf("stale %v: %v, %+v", stale, err, lib)
		}
		if !strings.Contains(notice, chosen) || !strings.Contains(notice, "not connected") || !strings.Contains(notice, mount) {
			t.Errorf("stale %v: notice %q", stale, notice)
		}
		if err := checkRememberedLibrary(chosen); !errors.Is(err, errDiskMissing) {
			t.Errorf("stale %v: check %v", stale, err)
		}
		var found []string
		filepath.Walk(mount, func(p string, _ os.FileInfo, _ error) error { found = append(found, p); return nil })
		if want := 1 + map[bool]int{true: 1}[stale]; len(found) != want {
			t.Errorf("stale %v: written on the missing disk's mount point: %q", stale, found)
		}
		// The studio asks: choose, use the default (it is in use), retry.
		p := libraryChoice(notice, chosen, def, lib.Dir, nil)
		if p.Dir != chosen || p.Default != def || p.Check == nil || p.Text != notice {
			t.Errorf("choice %+v", p)
		}
	}
	// Not even the default: the question is about the default, with no
	// default to fall back to.
	p := libraryChoice("no default", "", def, filepath.Join(dir, "tmp"), nil)
	if p.Dir != def || p.Default != "" || p.Check(def) != nil {
		t.Errorf("default choice %+v", p)
	}
	if p := libraryChoice("no library", chosen, def, filepath.Join(dir, "tmp"), nil); p.Default != "" {
		t.Errorf("a default that could not be made is offered: %+v", p)
	}
}

// TestDamagedSettingsChoices: a damaged settings.json is kept under a name
// that replaces no earlier copy, and the notice's choices do what they
// say: keep the copy, move it to the Trash, show it (the notice stays).
func TestDamagedSettingsChoices(t *testing.T) {
	cfg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfg)
	t.Setenv("HOME", t.TempDir())
	path := loadPrefs().path
	os.MkdirAll(filepath.Dir(path), 0o755)
	var kept []string
	for _, body := range []string{`{"model_dir": `, `not json`} {
		os.WriteFile(path, []byte(body), 0o644)
		p := loadPrefs()
		if p.kept == "" || !strings.Contains(p.problem, p.kept) {
			t.Fatalf("kept %q, problem %q", p.kept, p.problem)
		}
		if b, err := os.ReadFile(p.kept); err != nil || string(b) != body {
			t.Errorf("the damaged file was not kept as %s: %v %q", p.kept, err, b)
		}
		kept = append(kept, p.kept)
	}
	if kept[0] == kept[1] {
		t.Fatalf("the second damaged file replaced the first copy: %q", kept)
	}
	var revealed, trashed, notes []string
	cs := settingsChoices(kept[1], func(p string) error { revealed = append(revealed, p); return nil },
		func(p string) error { trashed = append(trashed, p); return os.Remove(p) },
		func(_ studio.NoticeLevel, s string) { notes = append(notes, s) })
	var labels []string
	for _, c := range cs {
		labels = append(labels, c.Label)
	}
	if strings.Join(labels, ",") != "Keep a Copy and Reset,Reset Settings,Show File" || !cs[2].Stays || cs[0].Stays || cs[1].Stays {
		t.Fatalf("choices %q", labels)
	}
	cs[0].Do("")
	if _, err := os.Stat(kept[1]); err != nil || len(trashed) != 0 || !strings.Contains(notes[0], kept[1]) {
		t.Errorf("keep a copy: %v, trashed %q, said %q", err, trashed, notes)
	}
	cs[2].Do("")
	if len(revealed) != 1 || revealed[0] != kept[1] {
		t.Errorf("show file revealed %q", revealed)
	}
	cs[1].Do("")
	if _, err := os.Stat(kept[1]); err == nil || len(trashed) != 1 || !strings.Contains(notes[len(notes)-1], "Trash") {
		t.Errorf("reset: still there %v, trashed %q, said %q", err == nil, trashed, notes)
	}
	if _, err := os.Stat(kept[0]); err != nil {
		t.Errorf("the earlier copy went: %v", err)
	}
}

// TestLibraryFlagRefused: a --library that can't be a library folder (a
// file in the way, a disk that is not connected) is refused before
// anything opens, by the studio and by serve alike: exit 2 (an invalid
// request), one stderr line naming the path and what was expected, and
// nothing made.
func TestLibraryFlagRefused(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HOME", dir)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	t.Setenv("H3_API_TOKEN", "test-token-0123456789abcdef")
	saved := volumeParents
	volumeParents = []string{filepath.Join(dir, "Volumes")}
	t.Cleanup(func() { volumeParents = saved })
	file := filepath.Join(dir, "notes.txt")
	os.WriteFile(file, []byte("mine"), 0o644)
	os.MkdirAll(filepath.Join(dir, "Volumes", "Archive"), 0o755) // an empty mount point
	for _, c := range []struct{ name, lib, cause string }{
		{"a file", file, "a file is in the way"},
		{"under a file", filepath.Join(file, "Library"), "a file is in the way"},
		{"a disk not connected", filepath.Join(dir, "Volumes", "Archive", "Takes"), "not connected"},
	} {
		for _, cmd := range []string{"h3studio", "h3studio serve"} {
			t.Run(c.name+"/"+cmd, func(t *testing.T) {
				var stderr strings.Builder
				var st int
				if cmd == "h3studio" {
					st = run([]string{"--library", c.lib}, &strings.Builder{}, &stderr)
				} else {
					st = serve(t.Context(), serveOptions{libDir: c.lib, addr: "127.0.0.1:0"}, nil, &stderr)
				}
				lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
				if st != 2 || len(lines) != 1 || !strings.Contains(lines[0], c.lib) || !strings.Contains(lines[0], c.cause) || !strings.Contains(lines[0], "expected a folder") {
					t.Errorf("exit %d, stderr %q", st, stderr.String())
				}
			})
		}
	}
	if b, _ := os.ReadFile(file); string(b) != "mine" {
		t.Error("the file in the way was changed")
	}
	if ents, _ := os.ReadDir(filepath.Join(dir, "Volumes", "Archive")); len(ents) != 0 {
		t.Errorf("written on the missing disk's mount point: %v", ents)
	}
}
