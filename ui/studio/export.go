package studio

import (
	"context"
	"errors"
	"fmt"
	"image"
	"os"
	"path/filepath"
)

// ExportMP4 copies a take's video to dst (in the background; a notice says
// how it went).
func (tk Takes) ExportMP4(id, dst string) {
	tk.exportFile(id, dst, VideoFile, "this take has no MP4: it was made by a build without an MP4 writer (the frames and the sound are in its folder)")
}

// ExportAudio copies a take's sound (WAV) to dst.
func (tk Takes) ExportAudio(id, dst string) {
	tk.exportFile(id, dst, AudioFile, "this take has no sound")
}

// exportFile copies a take's file name to dst; a take without it fails
// with the reason missing.
func (tk Takes) exportFile(id, dst, name, missing string) {
	tk.export(id, dst, func(t Take) (string, error) {
		if !t.Has(name) {
			removeEmpty(dst)
			return "", errors.New(missing)
		}
		if err := copyFileAtomic(filepath.Join(t.Dir, name), dst); err != nil {
			removeEmpty(dst)
			return "", err
		}
		return "Exported " + filepath.Base(dst) + ".", nil
	})
}

// ExportFrames writes a take's frames as frame-00001.png … into dir: decoded
// from its MP4 when the build can read MP4, otherwise from the viewer
// frames (at viewer resolution, as the notice says). An export that fails
// part-way (a full disk) removes the frames it wrote, so no partial set is
// left behind.
func (tk Takes) ExportFrames(id, dir string) {
	tk.export(id, dir, func(t Take) (msg string, err error) {
		if n := framesIn(dir); n > 0 {
			// Never replace frames the export did not write (and never
			// remove them when a later frame fails).
			files := "frame files"
			if n == 1 {
				files = "frame file"
			}
			return "", fmt.Errorf("%s already holds %d %s (frame-00001.png …): choose an empty folder; nothing was written", filepath.Base(dir), n, files)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", err
		}
		var written []string
		writePNG := func(path string, img image.Image) error {
			if err := writePNGAtomic(path, img); err != nil {
				return err
			}
			written = append(written, path)
			return nil
		}
		defer func() {
			if err != nil {
				for _, p := range written {
					os.Remove(p)
				}
			}
		}()
		// The MP4 decoded at full size when the build reads MP4.
		if tk.s.opts.Opener != nil && t.Has(VideoFile) {
			if src, err := tk.s.opts.Opener(filepath.Join(t.Dir, VideoFile)); err == nil {
				n := 0
				err = src.Frames(context.Background(), 0, func(i int, f *image.RGBA) error {
					n++
					return writePNG(filepath.Join(dir, fmt.Sprintf("frame-%05d.png", i+1)), f)
				})
				src.Close()
				if err == nil && n > 0 {
					return fmt.Sprintf("Exported %d frames to %s.", n, filepath.Base(dir)), nil
				}
				if errors.Is(err, ErrDiskFull) {
					return "", err
				}
			}
		}
		var frames []image.Image
		note := ""
		{
			c, err := tk.s.library().LoadClip(t)
			if err != nil {
				return "", err
			}
			for i := 0; i < c.Len(); i++ {
				frames = append(frames, c.Frame(i))
			}
			if len(frames) > 0 && frames[0] != nil && frames[0].Bounds().Dx() < t.Meta.Width {
				note = fmt.Sprintf(" at viewer size (%d×%d): this build can't decode the MP4", frames[0].Bounds().Dx(), frames[0].Bounds().Dy())
			}
		}
		for i, f := range frames {
			if f == nil {
				return "", fmt.Errorf("frame %d can't be decoded", i+1)
			}
			if err := writePNG(filepath.Join(dir, fmt.Sprintf("frame-%05d.png", i+1)), f); err != nil {
				return "", err
			}
		}
		return fmt.Sprintf("Exported %d frames to %s%s.", len(frames), filepath.Base(dir), note), nil
	})
}

// removeEmpty removes an empty file at a failed export's destination: the
// save dialog creates the file it names before the export starts (Fyne's
// dialog opens a writer), and an empty file must not pass for an export.
// The copy itself is atomic, so a non-empty file there is never a partial
// export and is left alone.
func removeEmpty(path string) {
	if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() && st.Size() == 0 {
		os.Remove(path)
	}
}

func (tk Takes) export(id, dst string, fn func(Take) (string, error)) {
	t, ok := tk.s.take(id)
	if !ok {
		tk.s.Notify(Warn, "Choose a take in the library first.")
		return
	}
	tk.s.opts.Go(func() {
		if tk.s.takeGone(t) {
			removeEmpty(dst)
			return
		}
		msg, err := fn(t)
		if err != nil {
			if errors.Is(err, ErrDiskFull) {
				tk.s.Notify(Fail, "The export failed: the disk is full. Nothing partial was left behind.")
				return
			}
			tk.s.Notify(Fail, "The export of “"+t.Meta.Title+"” failed: "+err.Error())
			return
		}
		tk.s.Notify(Info, msg)
	})
}

// framesIn counts the frame-NNNNN.png files in dir.
func framesIn(dir string) int {
	m, _ := filepath.Glob(filepath.Join(dir, "frame-[0-9][0-9][0-9][0-9][0-9].png"))
	return len(m)
}
