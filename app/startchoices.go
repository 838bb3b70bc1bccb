package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"h3studio/ui/studio"
)

// volumeParents are the folders whose entries are mount points of
// removable and network disks: /Volumes/NAME on macOS, /media/USER/NAME,
// /run/media/USER/NAME and /mnt/NAME elsewhere. A path under one of them
// belongs to that disk.
var volumeParents = []string{"/Volumes", "/media/*", "/run/media/*", "/mnt"}

// volumeOf is the mount point of the disk a path names by its place
// (/Volumes/Archive for /Volumes/Archive/Takes), or "" for a path on no
// such disk.
func volumeOf(dir string) string {
	dir = filepath.Clean(dir)
	for _, parent := range volumeParents {
		depth := strings.Count(parent, "/")
		parts := strings.Split(dir, "/")
		if len(parts) <= depth+1 {
			continue
		}
		mount := strings.Join(parts[:depth+2], "/")
		if ok, _ := filepath.Match(parent+"/*", mount); ok {
			return mount
		}
	}
	return ""
}

// isMountPoint reports whether dir is the root of a mounted file system: it
// lies on another device than its parent.
func isMountPoint(dir string) bool {
	var st, up syscall.Stat_t
	if syscall.Stat(dir, &st) != nil || syscall.Stat(filepath.Dir(dir), &up) != nil {
		return false
	}
	return st.Dev != up.Dev || st.Ino == up.Ino
}

// errDiskMissing: a library's disk is not connected.
var errDiskMissing = errors.New("its disk is not connected")

// checkRememberedLibrary says whether a remembered library folder can be
// used as it is, creating nothing: it must exist, be a readable folder,
// and not lie under the empty mount point left by a disk that is not
// connected (a library made there would hide the real one, and fill the
// startup disk).
func checkRememberedLibrary(dir string) error {
	if v := volumeOf(dir); v != "" {
		if _, err := os.Stat(v); err != nil || !isMountPoint(v) {
			return fmt.Errorf("%s: %w", v, errDiskMissing)
		}
	}
	st, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return fmt.Errorf("%s is not a folder", dir)
	}
	_, err = os.ReadDir(dir)
	return err
}

// checkDefaultLibrary says whether the default library can be used, making
// it when it is not there yet (it is on the startup disk).
func checkDefaultLibrary(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	_, err := os.ReadDir(dir)
	return err
}

// libraryChoice is the studio's question when the library the user
// expects is not the one opened: the remembered folder (or the default,
// when not even it could be made) with a way out.
func libraryChoice(notice, chosen, def, opened string, remember func(string)) studio.LibraryProblem {
	p := studio.LibraryProblem{Dir: chosen, Text: notice, Check: checkRememberedLibrary, Remember: remember}
	if chosen == "" || chosen == def {
		p.Dir, p.Check = def, checkDefaultLibrary
	} else if opened == def {
		p.Default = def
	}
	return p
}

// settingsChoices are the ways out of a damaged settings.json that was
// kept as the copy kept (the defaults are already in use): keep the copy,
// move it to the Trash, or show it (to repair it by hand).
func settingsChoices(kept string, reveal func(string) error, trash func(string) error, notify func(studio.NoticeLevel, string)) []studio.Choice {
	return []studio.Choice{
		{Label: "Keep a Copy and Reset", Do: func(string) {
			notify(studio.Info, "The damaged settings are kept as "+kept+"; the settings start again from the defaults.")
		}},
		{Label: "Reset Settings", Do: func(string) {
			if err := trash(kept); err != nil {
				notify(studio.Warn, "The damaged settings file "+kept+" can't be moved to the Trash ("+errorCause(err)+"); it is kept.")
				return
			}
			notify(studio.Info, "The damaged settings file was moved to the Trash; the settings start again from the defaults.")
		}},
		{Label: "Show File", Stays: true, Do: func(string) {
			if err := reveal(kept); err != nil {
				notify(studio.Warn, "The damaged settings file "+kept+" can't be shown: "+errorCause(err))
			}
		}},
	}
}
