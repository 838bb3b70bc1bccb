package studio_test

import (
	"bytes"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"h3studio/ui/studio"
	"h3studio/ui/studio/fakeengine"
)

// TestExports drives File ▸ Export MP4…, Export Frames… and Export Audio…
// on a take of a build without an MP4 writer: the sound is copied byte for
// byte, the frames are written from the viewer frames (saying so), the
// missing MP4 is explained, and a full disk part-way through the frames
// leaves none of them behind.
func TestExports(t *testing.T) {
	e := newEnv(t, fakeengine.Options{}, false)
	e.tiny()
	e.s.Generate()
	sn := e.settle(func(sn studio.Snapshot) bool { return len(sn.Takes) == 1 })
	take := sn.Takes[0]
	out := t.TempDir()
	lastNotice := func() studio.Notice {
		t.Helper()
		var n studio.Notice
		e.settle(func(sn studio.Snapshot) bool {
			if len(sn.Notices) == 0 {
				return false
			}
			n = sn.Notices[len(sn.Notices)-1]
			return true
		})
		for _, x := range e.s.Snapshot().Notices {
			e.s.Dismiss(x.ID)
		}
		return n
	}
	for _, x := range sn.Notices {
		e.s.Dismiss(x.ID)
	}

	// Audio: the take's WAV, unchanged.
	wav := filepath.Join(out, "fox.wav")
	e.s.ExportAudio(take.ID, wav)
	if n := lastNotice(); n.Level != studio.Info || !strings.Contains(n.Text, "Exported fox.wav") {
		t.Errorf("audio export notice %+v", n)
	}
	got, err1 := os.ReadFile(wav)
	want, err2 := os.ReadFile(filepath.Join(take.Dir, studio.AudioFile))
	if err1 != nil || err2 != nil || !bytes.Equal(got, want) {
		t.Errorf("exported sound differs from the take's (%v, %v)", err1, err2)
	}

	// MP4: this take has none; the notice says why, and no file is left
	// (not even the empty one the save dialog creates).
	mp4 := filepath.Join(out, "fox.mp4")
	os.WriteFile(mp4, nil, 0o644)
	e.s.ExportMP4(take.ID, mp4)
	if n := lastNotice(); n.Level != studio.Fail || !strings.Contains(n.Text, "has no MP4") {
		t.Errorf("MP4 export notice %+v", n)
	}
	if _, err := os.Stat(mp4); err == nil {
		t.Error("an MP4 was written for a take without one")
	}

	// Frames: every frame as a PNG.
	frames := filepath.Join(out, "frames")
	e.s.ExportFrames(take.ID, frames)
	if n := lastNotice(); n.Level != studio.Info || !strings.Contains(n.Text, "Exported 22 frames") {
		t.Errorf("frames export notice %+v", n)
	}
	ents, _ := os.ReadDir(frames)
	if len(ents) != 22 || ents[0].Name() != "frame-00001.png" || ents[21].Name() != "frame-00022.png" {
		t.Fatalf("exported %d frames", len(ents))
	}
	f, _ := os.Open(filepath.Join(frames, "frame-00022.png"))
	img, err := png.Decode(f)
	f.Close()
	if err != nil || img.Bounds().Dx() != 256 {
		t.Errorf("frame 22: %v %v", err, img)
	}

	// Frames into a folder that already holds frames (the user's, or an
	// earlier export): refused, nothing replaced.
	mine := filepath.Join(out, "mine")
	os.MkdirAll(mine, 0o755)
	os.WriteFile(filepath.Join(mine, "frame-00001.png"), []byte("my drawing"), 0o644)
	e.s.ExportFrames(take.ID, mine)
	if n := lastNotice(); n.Level != studio.Fail || !strings.Contains(n.Text, "already holds 1 frame") {
		t.Errorf("export over frames: notice %+v", n)
	}
	if b, _ := os.ReadFile(filepath.Join(mine, "frame-00001.png")); string(b) != "my drawing" {
		t.Error("an export replaced a frame the user had")
	}
	if ents, _ := os.ReadDir(mine); len(ents) != 1 {
		t.Errorf("the refused export wrote %d files", len(ents)-1)
	}

	// Sound onto a full disk: the dialog's empty file goes, an earlier
	// export is kept.
	restore := studio.SetCreateFile(func(string) (io.WriteCloser, error) { return &fullDisk{}, nil })
	wav2 := filepath.Join(out, "fox2.wav")
	os.WriteFile(wav2, nil, 0o644)
	e.s.ExportAudio(take.ID, wav2)
	e.s.ExportAudio(take.ID, wav)
	if n := lastNotice(); n.Level != studio.Fail || !strings.Contains(n.Text, "disk is full") {
		t.Errorf("full-disk sound export notice %+v", n)
	}
	restore()
	if _, err := os.Stat(wav2); err == nil {
		t.Error("a failed export left an empty file")
	}
	if b, _ := os.ReadFile(wav); !bytes.Equal(b, want) {
		t.Error("a failed export damaged the file it was to replace")
	}

	// Frames onto a full disk: the export fails, says so, and takes back
	// the frames it wrote.
	full := filepath.Join(out, "full")
	n := 0
	restore = studio.SetCreateFile(func(p string) (io.WriteCloser, error) {
		n++
		if n > 5 {
			return &fullDisk{}, nil
		}
		return os.Create(p)
	})
	e.s.ExportFrames(take.ID, full)
	notice := lastNotice()
	restore()
	if notice.Level != studio.Fail || !strings.Contains(notice.Text, "disk is full") {
		t.Errorf("full-disk notice %+v", notice)
	}
	if ents, _ := os.ReadDir(full); len(ents) != 0 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("a failed export left %v behind", names)
	}
	// The library is untouched.
	if takes, staging := takeDirs(t, e.lib); len(takes) != 1 || len(staging) != 0 {
		t.Errorf("library %v, staging %v", takes, staging)
	}
}
