package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"h3studio/engine/media"
	"h3studio/engine/take"
)

// The outputs of a command never replace what the user did not ask to
// replace: an input of the run (compared by file identity, so a hard link,
// a symbolic link or another spelling of the same file counts), a take
// record or a folder of frames that H3 Studio did not write, or a read-only
// file. checkOutputSafety refuses such a request before anything is loaded.

// requestInputs lists the files the run reads: conditioning pictures,
// references and their sound tracks, and the prompt file.
func requestInputs(a generateArgs) []string {
	r := a.req
	in := []string{r.First, r.Last}
	for _, ref := range r.References {
		in = append(in, ref.Path, ref.Audio)
	}
	if a.promptFile != "" && a.promptFile != "-" {
		in = append(in, a.promptFile)
	}
	var out []string
	for _, p := range in {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

// isTakeRecord reports whether path holds a take record H3 Studio wrote,
// returning its frame count.
func isTakeRecord(path string) (frames int, ok bool) {
	if st, err := os.Stat(path); err != nil || st.Size() > 16<<20 {
		return 0, false
	}
	r, err := take.Read(path)
	if err != nil || r.App.Name != take.AppName {
		return 0, false
	}
	return r.Frames, true
}

// frameNumber returns n for a FrameName file name (frame-00007.png → 7).
func frameNumber(name string) (int, bool) {
	num, ok1 := strings.CutPrefix(name, "frame-")
	num, ok2 := strings.CutSuffix(num, ".png")
	if !ok1 || !ok2 {
		return 0, false
	}
	n, err := strconv.Atoi(num)
	if err != nil || n < 1 || media.FrameName(n-1) != name {
		return 0, false
	}
	return n, true
}

// framesFolder describes an existing --frames-dir folder.
type framesFolder struct {
	frames    []string // frame files in it (full paths)
	h3Take    bool     // its take.json is an H3 Studio take record
	takeCount int      // that record's frame count
}

func readFramesFolder(dir string) (framesFolder, error) {
	var ff framesFolder
	ents, err := os.ReadDir(dir)
	if err != nil {
		return ff, fmt.Errorf("--frames-dir %s: %w", dir, err)
	}
	for _, e := range ents {
		if _, ok := frameNumber(e.Name()); ok {
			ff.frames = append(ff.frames, filepath.Join(dir, e.Name()))
		}
	}
	ff.takeCount, ff.h3Take = isTakeRecord(filepath.Join(dir, take.File))
	return ff, nil
}

// errUnsafeOutput marks a refused output (exit status 2: nothing loaded).
var errUnsafeOutput = errors.New("invalid request")

func refuse(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errUnsafeOutput, fmt.Sprintf(format, args...))
}

// checkOutputSafety refuses, before the run, every output that would
// replace an input, a file or folder H3 Studio did not write, or a file
// that cannot be replaced, and every output whose folder cannot be made.
func checkOutputSafety(a generateArgs) error {
	if a.output == "" && a.wav == "" && a.framesDir == "" {
		return nil // nothing to write: refused later (errNoOutput)
	}
	type input struct {
		path string
		st   os.FileInfo
	}
	var inputs []input
	for _, p := range requestInputs(a) {
		if st, err := os.Stat(p); err == nil {
			inputs = append(inputs, input{p, st})
		}
	}
	// replaced lists every existing file the outputs would replace or
	// remove, with what asks for it.
	type target struct{ flag, path string }
	var replaced []target
	files := []target{{"-o", a.output}, {"--wav", a.wav}}
	if a.output != "" || a.framesDir == "" {
		files = append(files, target{"the take record", sidecarPath(a)})
	}
	for _, f := range files {
		if f.path == "" {
			continue
		}
		if err := checkCreatable(f.flag, f.path); err != nil {
			return err
		}
		st, err := os.Lstat(f.path)
		if err != nil {
			continue // a new file
		}
		if st.IsDir() {
			return refuse("%s %s is a folder", f.flag, f.path)
		}
		if f.flag == "the take record" {
			if _, ok := isTakeRecord(f.path); !ok {
				return refuse("%s exists and is not a take record of H3 Studio; it would be replaced by this take's record (%s): move it or choose another output name", f.path, f.flag)
			}
		}
		replaced = append(replaced, f)
	}
	if a.framesDir != "" {
		if err := checkCreatable("--frames-dir", filepath.Join(a.framesDir, take.File)); err != nil {
			return err
		}
		if st, err := os.Stat(a.framesDir); err == nil {
			if !st.IsDir() {
				return refuse("--frames-dir %s exists and is not a folder", a.framesDir)
			}
			ff, err := readFramesFolder(a.framesDir)
			if err != nil {
				return err
			}
			_, hasRecord := os.Stat(filepath.Join(a.framesDir, take.File))
			if (len(ff.frames) > 0 || hasRecord == nil) && !ff.h3Take {
				return refuse("--frames-dir %s holds frames or a take.json that H3 Studio did not write (%d frame files); they would be replaced: choose a new or empty folder", a.framesDir, len(ff.frames))
			}
			for _, p := range ff.frames {
				replaced = append(replaced, target{"--frames-dir", p})
			}
			if hasRecord == nil {
				replaced = append(replaced, target{"--frames-dir", filepath.Join(a.framesDir, take.File)})
			}
		}
	}
	for _, t := range replaced {
		st, err := os.Stat(t.path)
		if err != nil {
			continue // a dangling link: replacing it loses nothing
		}
		for _, in := range inputs {
			if os.SameFile(st, in.st) {
				return refuse("%s %s is an input of this take (%s): an output never replaces an input; choose another output", t.flag, t.path, in.path)
			}
		}
		if st.Mode().Perm()&0o222 == 0 {
			return refuse("%s %s is read-only: refusing to replace it", t.flag, t.path)
		}
	}
	return nil
}

// checkCreatable refuses an output whose folder cannot exist: the nearest
// existing ancestor of its folder must be a folder.
func checkCreatable(flag, path string) error {
	dir := filepath.Dir(path)
	for {
		st, err := os.Stat(dir)
		if err == nil {
			if !st.IsDir() {
				return refuse("%s %s cannot be created: %s is a file, not a folder", flag, path, dir)
			}
			return nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return refuse("%s %s cannot be created: %v", flag, path, err)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return nil
		}
		dir = parent
	}
}
