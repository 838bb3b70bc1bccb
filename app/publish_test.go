package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"h3studio/engine/media"
)

func stageFile(t *testing.T, s *takeStage, final, content string) {
	t.Helper()
	p, err := s.stagedPath(final)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, p, content)
	s.add(p, final)
}

func readOr(path, missing string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return missing
	}
	return string(b)
}

// TestTakeIsPublishedWholeOrNotAtAll: the outputs of a take appear
// together; when one cannot be moved into place, those already moved go
// back, the files they replaced are restored, and no staging folder or
// created folder is left.
func TestTakeIsPublishedWholeOrNotAtAll(t *testing.T) {
	dir := t.TempDir()
	wav, mp4 := filepath.Join(dir, "out", "take.wav"), filepath.Join(dir, "take.mp4")
	writeFile(t, wav, "older sound")
	blocked := filepath.Join(dir, "take.json")
	writeFile(t, filepath.Join(blocked, "x"), "a folder in the way") // a rename over a non-empty folder fails

	s := newTakeStage()
	stageFile(t, s, mp4, "video")
	stageFile(t, s, wav, "new sound")
	frames, _ := s.stagedPath(filepath.Join(dir, "new", "frames"))
	writeFile(t, filepath.Join(frames, "frame-00001.png"), "f1")
	if err := s.addFramesFolder(frames, filepath.Join(dir, "new", "frames")); err != nil {
		t.Fatal(err)
	}
	stageFile(t, s, blocked, "record")
	err := s.publish()
	if err == nil || !strings.Contains(err.Error(), "nothing was written") {
		t.Fatalf("publish over a blocked record: %v", err)
	}
	if got := readOr(wav, "gone"); got != "older sound" {
		t.Errorf("the older WAV is %q, want it restored", got)
	}
	for _, p := range []string{mp4, filepath.Join(dir, "new")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s exists after a failed publish", p)
		}
	}
	assertNoStaging(t, dir)

	// The same take, unblocked: everything appears.
	os.RemoveAll(blocked)
	s = newTakeStage()
	stageFile(t, s, mp4, "video")
	stageFile(t, s, wav, "new sound")
	stageFile(t, s, blocked, "record")
	if err := s.publish(); err != nil {
		t.Fatal(err)
	}
	if readOr(mp4, "") != "video" || readOr(wav, "") != "new sound" || readOr(blocked, "") != "record" {
		t.Error("a published take lacks an output")
	}
	assertNoStaging(t, dir)
}

func assertNoStaging(t *testing.T, dir string) {
	t.Helper()
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && strings.Contains(filepath.Base(p), ".h3studio-take-") {
			t.Errorf("staging left: %s", p)
		}
		return nil
	})
}

// TestFramesFolderOfAnEarlierTake: new frames go into a folder of an
// earlier H3 Studio take; that take's frames past the new last frame are
// removed, and nothing else in the folder is touched.
func TestFramesFolderOfAnEarlierTake(t *testing.T) {
	dir := t.TempDir()
	fr := filepath.Join(dir, "frames")
	for i := 1; i <= 5; i++ {
		writeFile(t, filepath.Join(fr, frameName(i)), "old")
	}
	writeFile(t, filepath.Join(fr, frameName(9)), "not of that take")
	writeFile(t, filepath.Join(fr, "notes.txt"), "mine")
	h3Record(t, filepath.Join(fr, "take.json"), 5)

	s := newTakeStage()
	staged, err := s.stagedPath(fr)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 3; i++ {
		writeFile(t, filepath.Join(staged, frameName(i)), "new")
	}
	h3Record(t, filepath.Join(staged, "take.json"), 3)
	if err := s.addFramesFolder(staged, fr); err != nil {
		t.Fatal(err)
	}
	if err := s.publish(); err != nil {
		t.Fatal(err)
	}
	for i, want := range map[int]string{1: "new", 3: "new", 4: "gone", 5: "gone", 9: "not of that take"} {
		if got := readOr(filepath.Join(fr, frameName(i)), "gone"); got != want {
			t.Errorf("frame %d: %q, want %q", i, got, want)
		}
	}
	if n, ok := isTakeRecord(filepath.Join(fr, "take.json")); !ok || n != 3 {
		t.Errorf("take.json: %d frames, %v", n, ok)
	}
	if readOr(filepath.Join(fr, "notes.txt"), "") != "mine" {
		t.Error("a file of the user's in the frames folder changed")
	}
	assertNoStaging(t, dir)
}

func frameName(n int) string { return media.FrameName(n - 1) }
