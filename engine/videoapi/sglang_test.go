package videoapi

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"h3studio/engine"
	"h3studio/engine/testkit"
)

// TestSGLangSchemaAcceptsOurRequests: every request the client builds for
// an SGLang server validates against SGLang's MiniMax-H3 request models
// (pydantic, transcribed in testdata), and so does every cookbook example
// (the transcription's own check).
func TestSGLangSchemaAcceptsOurRequests(t *testing.T) {
	py := testkit.PythonPeer(t, "pydantic")
	dir := t.TempDir()
	media := filepath.Join(dir, "media")
	os.MkdirAll(media, 0o755)
	for _, n := range []string{"first.png", "last.png", "subject.png", "voice.wav", "motion.mp4"} {
		os.WriteFile(filepath.Join(media, n), []byte("x"), 0o644)
	}
	in := func(n string) string { return filepath.Join(media, n) }
	maps := []PathMap{{Local: media, Remote: "/data/minimax-h3"}}
	cases := []struct {
		r    engine.Request
		task engine.Task
	}{
		{engine.Request{Prompt: "t2va 768p", Width: 1344, Height: 768, Frames: 124, Steps: 49, Seed: 1101, SeedSet: true}, engine.TaskT2VA},
		{engine.Request{Prompt: "portrait", Width: 768, Height: 1344, Frames: 362, Steps: 8, Seed: 0, SeedSet: true}, engine.TaskT2VA},
		{engine.Request{Prompt: "square", Width: 512, Height: 512, Frames: 107, Steps: 20, Seed: 42, SeedSet: true}, engine.TaskT2VA},
		{engine.Request{Prompt: "fl2va", Width: 1344, Height: 768, Frames: 124, Steps: 20, Seed: 2, SeedSet: true, First: in("first.png"), Last: in("last.png")}, engine.TaskFL2VA},
		{engine.Request{Prompt: "last only", Width: 1024, Height: 768, Frames: 97, Steps: 20, Seed: 2, SeedSet: true, Last: in("last.png")}, engine.TaskFL2VA},
		{engine.Request{Prompt: "<Picture 1> <Audio 1> <Video 1>", Width: 1344, Height: 768, Frames: 124, Steps: 20, Seed: 3, SeedSet: true,
			References: []engine.Reference{{Kind: engine.RefImage, Path: in("subject.png")}, {Kind: engine.RefAudio, Path: in("voice.wav")}, {Kind: engine.RefVideo, Path: in("motion.mp4")}}}, engine.TaskRef2VA},
	}
	var files []string
	for i, c := range cases {
		b, err := Build(c.r, c.task, DialectSGLang, maps)
		if err != nil {
			t.Fatalf("%d: %v", i, err)
		}
		body, _ := json.Marshal(b.Request)
		p := filepath.Join(dir, "ours-"+string(rune('a'+i))+".json")
		os.WriteFile(p, body, 0o644)
		files = append(files, p)
	}
	cook, _ := filepath.Glob("testdata/cookbook/*.json")
	files = append(files, cook...)
	out, err := exec.Command(py, append([]string{"testdata/sglang_h3_schema.py"}, files...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("SGLang's schema refused a request: %v\n%s", err, out)
	}
	if n := strings.Count(string(out), "ok "); n != len(files) {
		t.Fatalf("validated %d of %d bodies:\n%s", n, len(files), out)
	}
}
