package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"h3studio/engine"
	"h3studio/engine/take"
)

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func h3Record(t *testing.T, path string, frames int) {
	t.Helper()
	if err := take.Write(path, take.Record{App: take.AppInfo{Name: take.AppName}, Frames: frames, Outputs: map[string]string{"frames": filepath.Dir(path)}}); err != nil {
		t.Fatal(err)
	}
}

// TestNoOutputReplacesAnInput: an output is refused (before anything is
// loaded) when it is an input of the run by file identity — the same path,
// another spelling, a hard link, a symbolic link — or would replace a file
// or frames H3 Studio did not write, a read-only file, or cannot be created.
func TestNoOutputReplacesAnInput(t *testing.T) {
	dir := t.TempDir()
	ff := filepath.Join(dir, "ff.png")
	writeFile(t, ff, "picture")
	hard, soft := filepath.Join(dir, "hard.png"), filepath.Join(dir, "soft.png")
	if err := os.Link(ff, hard); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(ff, soft); err != nil {
		t.Fatal(err)
	}
	userFrames := filepath.Join(dir, "user")
	writeFile(t, filepath.Join(userFrames, "frame-00001.png"), "mine")
	ownFrames := filepath.Join(dir, "own")
	writeFile(t, filepath.Join(ownFrames, "frame-00001.png"), "h3")
	h3Record(t, filepath.Join(ownFrames, "take.json"), 1)
	writeFile(t, filepath.Join(dir, "scene.json"), `{"mine": true}`)
	writeFile(t, filepath.Join(dir, "ro.mp4"), "old")
	os.Chmod(filepath.Join(dir, "ro.mp4"), 0o444)
	writeFile(t, filepath.Join(dir, "notadir"), "keep")
	audio := filepath.Join(dir, "voice.wav")
	writeFile(t, audio, "RIFF")
	prompt := filepath.Join(dir, "prompt.txt")
	writeFile(t, prompt, "a lamp")
	writeFile(t, filepath.Join(dir, "prompt.json"), "a lamp")

	args := func(extra ...string) generateArgs {
		a, err := parseGenerateArgs(append([]string{"-d", "m", "-p", "x", "--first-frame", ff, "--ref-audio", audio}, extra...))
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	refused := map[string]generateArgs{
		"-o is the first frame":          args("-o", ff),
		"-o spelled otherwise":           args("-o", filepath.Join(dir, ".", "x", "..", "ff.png")),
		"-o is a hard link to an input":  args("-o", hard),
		"-o is a symbolic link to input": args("-o", soft),
		"--wav is the audio reference":   args("-o", "", "--wav", audio),
		"the MP4's record is the prompt": {modelDir: "m", promptFile: filepath.Join(dir, "prompt.json"), output: filepath.Join(dir, "prompt.mp4")},
		"frames the user made":           args("-o", "", "--frames-dir", userFrames),
		"the prompt file":                {modelDir: "m", promptFile: prompt, wav: prompt},
		"an unrelated scene.json":        args("-o", filepath.Join(dir, "scene.mp4")),
		"a read-only file":               args("-o", filepath.Join(dir, "ro.mp4")),
		"under a file":                   args("-o", filepath.Join(dir, "notadir", "x.mp4")),
		"frames under a file":            args("-o", "", "--frames-dir", filepath.Join(dir, "notadir", "fr")),
		"the input in an own frames dir": {modelDir: "m", framesDir: ownFrames, req: engine.Request{First: filepath.Join(ownFrames, "frame-00001.png")}},
		"-o is a folder":                 args("-o", userFrames),
	}
	for name, a := range refused {
		err := checkOutputSafety(a)
		if !errors.Is(err, errUnsafeOutput) || !strings.Contains(err.Error(), "invalid request") {
			t.Errorf("%s: got %v, want a refusal", name, err)
		}
	}
	h3Record(t, filepath.Join(dir, "take.json"), 22)
	allowed := map[string]generateArgs{
		"a new output":                  args("-o", filepath.Join(dir, "new", "out.mp4")),
		"frames into an own take's dir": args("-o", "", "--frames-dir", ownFrames),
		"a new frames folder":           args("-o", "", "--frames-dir", filepath.Join(dir, "fresh")),
		"over an earlier take":          args("-o", filepath.Join(dir, "take.mp4")),
	}
	for name, a := range allowed {
		if err := checkOutputSafety(a); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if b, _ := os.ReadFile(ff); string(b) != "picture" {
		t.Error("the input changed")
	}
}
