package videoapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"mime/multipart"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"h3studio/engine"
	"h3studio/engine/testkit"
)

// mapAll resolves every URI to one existing file (the cookbook's server
// paths do not exist here).
type mapAll struct{ path string }

func (m mapAll) Resolve(uri string) (string, error) { return m.path, nil }

func TestCookbookExamplesLower(t *testing.T) {
	files, err := filepath.Glob("testdata/cookbook/*.json")
	if err != nil || len(files) < 7 {
		t.Fatalf("cookbook examples: %v (%d)", err, len(files))
	}
	img := filepath.Join(t.TempDir(), "x.png")
	os.WriteFile(img, []byte("\x89PNG\r\n\x1a\n"), 0o644)
	for _, f := range files {
		b, _ := os.ReadFile(f)
		c, err := ParseJSON(b, Limits{})
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		low, err := Lower(c, mapAll{img}, nil, "")
		if filepath.Base(f) == "warmup.json" {
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field != "num_inference_steps" {
				t.Errorf("warmup: want the num_inference_steps rule, got %v", err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		r := low.Request
		if r.Width != 1344 || r.Height != 768 || r.Steps != 49 || !r.SeedSet || r.Seconds == 0 {
			t.Errorf("%s: lowered to %dx%d steps %d seconds %v seed %v", f, r.Width, r.Height, r.Steps, r.Seconds, r.SeedSet)
		}
	}
	// The cookbook's V2V segment start.
	b, _ := os.ReadFile("testdata/cookbook/v2v.json")
	b = bytes.Replace(b, []byte(`"start_time_seconds": 0.0`), []byte(`"start_time_seconds": 35.0`), 1)
	c, _ := ParseJSON(b, Limits{})
	if _, err := Lower(c, mapAll{img}, nil, ""); err == nil || !strings.Contains(err.Error(), "start_time_seconds") {
		t.Errorf("start_time_seconds 35: %v", err)
	}
}

func TestParseRefusals(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		{`{"prompt":"x","bogus":1}`, "bogus is not a field"},
		{`{"prompt":""}`, "prompt is required"},
		{`{"prompt":"x","seed":"abc"}`, "not a number"},
		{`{"prompt":"x","num_inference_steps":"4"}`, "num_inference_steps must be an integer"},
		{`{"prompt":"x","target":{"short_edge":1,"aspect_ratio":"1:1","x":1}}`, "x is not a field"},
		{`{"prompt":"x","conditions":[{"type":"image","uri":"a","role":"keyframe","extra":1}]}`, "extra is not a field"},
		{`[1]`, "JSON object"},
		{`{"prompt":"x"} {}`, "one JSON object"},
		{`{"prompt":"x","h3studio":{"a":{"b":{"c":{"d":{"e":{"f":1}}}}}}}`, "nests deeper"},
		{`{"prompt":"x"`, "not valid JSON"},
	} {
		_, err := ParseJSON([]byte(c.body), Limits{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.body, err, c.want)
		}
	}
	if _, err := ParseJSON(bytes.Repeat([]byte(" "), 2<<20), Limits{}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("2 MiB body: %v", err)
	}
}

func TestLowerRules(t *testing.T) {
	low := func(body string) (engine.Request, error) {
		c, err := ParseJSON([]byte(body), Limits{})
		if err != nil {
			return engine.Request{}, err
		}
		l, err := Lower(c, Folders{}, nil, "demo")
		return l.Request, err
	}
	r, err := low(`{"prompt":"x","model":"h3","size":"256x256","seconds":"1","num_inference_steps":4,"seed":3}`)
	if err != nil || r.Width != 256 || r.Height != 256 || r.Seconds != 1 || r.Steps != 3 || r.Seed != 3 || !r.SeedSet {
		t.Errorf("OpenAI body: %+v %v", r, err)
	}
	r, err = low(`{"prompt":"x","target":{"short_edge":480,"aspect_ratio":"16:9"}}`)
	if err != nil || r.Width != 832 || r.Height != 480 {
		t.Errorf("480 16:9: %dx%d %v", r.Width, r.Height, err)
	}
	r, err = low(`{"prompt":"x","target":{"short_edge":768,"aspect_ratio":"9:16"}}`)
	if err != nil || r.Width != 768 || r.Height != 1344 {
		t.Errorf("768 9:16: %dx%d %v", r.Width, r.Height, err)
	}
	for _, c := range []struct{ body, want string }{
		{`{"prompt":"x","model":"sora-2"}`, "model must be omitted or one of"},
		{`{"prompt":"x","n":11}`, "n must be 1..10"},
		{`{"prompt":"x","n":2,"num_outputs_per_prompt":3}`, "n disagree"},
		{`{"prompt":"x","flow_shift":5}`, "flow_shift must be 12"},
		{`{"prompt":"x","fps":30}`, "fps must be 24"},
		{`{"prompt":"x","size":"big"}`, "size must be WIDTHxHEIGHT"},
		{`{"prompt":"x","quality":"ultra"}`, "quality must be lossless or high"},
		{`{"prompt":"x","task":"v2v"}`, "task must be"},
		{`{"prompt":"x","task":"fl2va"}`, "fl2va needs"},
		{`{"prompt":"x","conditions":[{"type":"image","uri":"file:///etc/passwd","role":"keyframe"}]}`, "outside the folders"},
		{`{"prompt":"x","conditions":[{"type":"image","uri":"https://example.com/a.png","role":"reference"}]}`, "scheme"},
		{`{"prompt":"x","conditions":[{"type":"image","uri":"upload://ref_1","role":"reference"}]}`, "upload that is not in this request"},
		{`{"prompt":"x","num_inference_steps":1}`, "num_inference_steps must be 3..1001"},
	} {
		_, err := low(c.body)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.body, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "/etc/passwd") {
			t.Errorf("%s: the refusal repeats the path: %v", c.body, err)
		}
	}
}

func TestFoldersResolve(t *testing.T) {
	root := t.TempDir()
	allowed := filepath.Join(root, "media")
	outside := filepath.Join(root, "secret")
	os.MkdirAll(filepath.Join(allowed, "sub"), 0o755)
	os.MkdirAll(outside, 0o755)
	os.WriteFile(filepath.Join(allowed, "sub", "a.png"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(outside, "key.png"), []byte("x"), 0o644)
	os.Symlink(filepath.Join(outside, "key.png"), filepath.Join(allowed, "link.png"))
	os.Symlink(outside, filepath.Join(allowed, "dirlink"))
	f := Folders{Allowed: []string{allowed}}
	if p, err := f.Resolve("file://" + filepath.Join(allowed, "sub", "a.png")); err != nil || filepath.Base(p) != "a.png" {
		t.Errorf("allowed file: %q %v", p, err)
	}
	if _, err := f.Resolve("sub/a.png"); err != nil {
		t.Errorf("relative path under the first folder: %v", err)
	}
	for _, uri := range []string{
		"file://" + filepath.Join(outside, "key.png"),
		"file://" + allowed + "/../secret/key.png",
		"sub/../../secret/key.png",
		"file://" + filepath.Join(allowed, "link.png"),
		"file://" + filepath.Join(allowed, "dirlink", "key.png"),
		"file:///etc/passwd",
		"file://evil.example/etc/passwd",
		"file://" + allowed + "/sub/a.png%00.txt",
		"file://" + allowed,
	} {
		_, err := f.Resolve(uri)
		if err == nil {
			t.Errorf("%s: resolved", uri)
		} else if strings.Contains(err.Error(), root) || strings.Contains(err.Error(), "passwd") {
			t.Errorf("%s: the refusal names the path: %v", uri, err)
		}
	}
}

func TestMultipartAndUploads(t *testing.T) {
	dir := t.TempDir()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	mw.WriteField("prompt", "123") // a string field stays a string
	mw.WriteField("seconds", "1")
	mw.WriteField("size", "256x256")
	mw.WriteField("extra_body", `{"num_inference_steps":4,"seed":9}`)
	w, _ := mw.CreateFormFile("input_reference", "first.png")
	w.Write([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"))
	mw.Close()
	c, ups, err := ParseMultipart(&buf, mw.Boundary(), dir, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Prompt != "123" || c.NumInferenceSteps == nil || *c.NumInferenceSteps != 4 || len(ups) != 1 || ups[0].Type != "image/png" {
		t.Fatalf("parsed %+v uploads %+v", c, ups)
	}
	l, err := Lower(c, nil, ups, "")
	if err != nil || l.Task != engine.TaskFL2VA || l.Request.First != ups[0].Path {
		t.Fatalf("input_reference: %+v %v", l, err)
	}
	RemoveUploads(ups)

	// A file that is not media, and one over the limit, are refused and
	// leave nothing behind.
	for _, c := range []struct {
		data []byte
		lim  Limits
		want string
	}{
		{[]byte("#!/bin/sh\nrm -rf /\n"), Limits{}, "is not a picture"},
		{append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 4096)...), Limits{MaxUpload: 1024}, "too large"},
	} {
		buf.Reset()
		mw := multipart.NewWriter(&buf)
		mw.WriteField("prompt", "x")
		w, _ := mw.CreateFormFile("ref_1", "a.png")
		w.Write(c.data)
		mw.Close()
		_, _, err := ParseMultipart(&buf, mw.Boundary(), dir, c.lim)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want %q", err, c.want)
		}
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("refused uploads left %d files", len(left))
	}
}

// TestBuildLowerRoundTrip: what the client builds, the server's parser
// gives back as the same engine request (one schema, both directions).
func TestBuildLowerRoundTrip(t *testing.T) {
	dir := t.TempDir()
	img := filepath.Join(dir, "first.png")
	os.WriteFile(img, []byte("\x89PNG\r\n\x1a\n"), 0o644)
	reqs := []struct {
		r    engine.Request
		task engine.Task
		d    Dialect
	}{
		{engine.Request{Prompt: "a", Width: 1344, Height: 768, Frames: 124, Steps: 20, Seed: 7, SeedSet: true}, engine.TaskT2VA, DialectSGLang},
		{engine.Request{Prompt: "b", Width: 832, Height: 480, Frames: 107, Steps: 8, Seed: 0, SeedSet: true, First: img}, engine.TaskFL2VA, DialectSGLang},
		{engine.Request{Prompt: "c", Width: 256, Height: 256, Frames: 39, Steps: 3, Seed: 1, SeedSet: true, Reuse: 2, Layers: 45, Memory: engine.MemoryStreaming,
			References: []engine.Reference{{Kind: engine.RefImage, Path: img}}}, engine.TaskRef2VA, DialectH3Studio},
		{engine.Request{Prompt: "d", Width: 320, Height: 192, Frames: 56, Steps: 5, Seed: 2, SeedSet: true}, engine.TaskT2VA, DialectH3Studio},
	}
	for i, c := range reqs {
		maps := []PathMap{{Local: dir, Remote: "/data/minimax-h3"}}
		if c.d == DialectH3Studio {
			maps = nil
		}
		b, err := Build(c.r, c.task, c.d, maps)
		if err != nil {
			t.Fatalf("%d: %v", i, err)
		}
		body, _ := json.Marshal(b.Request)
		if c.d == DialectSGLang && bytes.Contains(body, []byte("h3studio")) {
			t.Errorf("%d: an SGLang body carries H3 Studio's fields: %s", i, body)
		}
		parsed, err := ParseJSON(body, Limits{})
		if err != nil {
			t.Fatalf("%d: %v\n%s", i, err, body)
		}
		var ups []Upload
		for field, p := range b.Files {
			ups = append(ups, Upload{Field: field, Path: p})
		}
		res := Resolver(Folders{Allowed: []string{"/data/minimax-h3"}})
		if c.d == DialectSGLang {
			res = remap{dir, "/data/minimax-h3"}
		}
		l, err := Lower(parsed, res, ups, "")
		if err != nil {
			t.Fatalf("%d: %v\n%s", i, err, body)
		}
		got := l.Request
		if got.Seconds > 0 {
			got.Frames, got.Seconds = engine.SecondsToFrames(got.Seconds), 0
		}
		want := c.r
		if got.Prompt != want.Prompt || got.Width != want.Width || got.Height != want.Height || got.Frames != want.Frames ||
			got.Steps != want.Steps || got.Seed != want.Seed || got.First != want.First || len(got.References) != len(want.References) ||
			got.Reuse != want.Reuse || got.Layers != want.Layers || got.Memory != want.Memory || l.Task != c.task {
			t.Errorf("%d: sent %+v\ngot back %+v", i, want, got)
		}
	}
	// What SGLang cannot carry is refused by name, never dropped.
	for _, r := range []engine.Request{
		{Prompt: "x", Width: 1344, Height: 768, Frames: 124, Steps: 20, Reuse: 2},
		{Prompt: "x", Width: 1344, Height: 768, Frames: 56, Steps: 20},
		{Prompt: "x", Width: 256, Height: 512, Frames: 124, Steps: 20},
		{Prompt: "x", Width: 1344, Height: 768, Frames: 124, Steps: 20, First: img},
	} {
		if _, err := Build(r, engine.TaskT2VA, DialectSGLang, nil); err == nil {
			t.Errorf("%+v: built for SGLang", r)
		}
	}
}

// remap resolves the SGLang server's paths back to the local folder.
type remap struct{ local, remote string }

func (m remap) Resolve(uri string) (string, error) {
	p := strings.TrimPrefix(uri, "file://")
	return filepath.Join(m.local, strings.TrimPrefix(p, m.remote)), nil
}

// FuzzParseRequest feeds arbitrary bodies through the JSON parser and the
// lowering: nothing may panic, and every refusal names a rule without a
// path the body did not contain.
func FuzzParseRequest(f *testing.F) {
	files, _ := filepath.Glob("testdata/cookbook/*.json")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"prompt":"x","size":"256x256","seconds":"4","h3studio":{"reuse":2,"memory":"streaming"}}`))
	f.Add([]byte(`{"prompt":"x","conditions":[{"type":"video","uri":"upload://ref_1","role":"reference","audio_uri":"a.wav"}]}`))
	dir := f.TempDir()
	res := Folders{Allowed: []string{dir}}
	f.Fuzz(func(t *testing.T, body []byte) {
		c, err := ParseJSON(body, Limits{})
		if err != nil {
			if _, ok := err.(*FieldError); !ok && !strings.Contains(err.Error(), "too large") {
				t.Fatalf("an error that is not a rule: %v", err)
			}
			return
		}
		if _, err := Lower(c, res, nil, "demo"); err != nil {
			if _, ok := err.(*FieldError); !ok {
				t.Fatalf("a lowering error that is not a rule: %v", err)
			}
			if strings.Contains(err.Error(), dir) {
				t.Fatalf("the refusal names the server's folder: %v", err)
			}
		}
	})
}

// FuzzParseMultipart feeds arbitrary form fields and file contents
// through the multipart parser: nothing may panic and a refused body
// leaves no file behind.
func FuzzParseMultipart(f *testing.F) {
	f.Add("prompt", "a take", "input_reference", []byte("\x89PNG\r\n\x1a\n"))
	f.Add("extra_body", `{"prompt":"x","seed":3}`, "ref_1", []byte("RIFF\x00\x00\x00\x00WAVEfmt "))
	f.Add("conditions", `[{"type":"image","uri":"upload://ref_1","role":"reference"}]`, "ref_1", []byte("#!/bin/sh"))
	f.Fuzz(func(t *testing.T, field, value, fileField string, data []byte) {
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		if mw.WriteField(field, value) != nil {
			return
		}
		if w, err := mw.CreateFormFile(fileField, "f"); err == nil {
			w.Write(data)
		}
		mw.Close()
		dir := t.TempDir()
		_, ups, err := ParseMultipart(&buf, mw.Boundary(), dir, Limits{MaxUpload: 1 << 16})
		if err != nil {
			if left, _ := os.ReadDir(dir); len(left) != 0 {
				t.Fatalf("a refused body left %d files", len(left))
			}
			return
		}
		RemoveUploads(ups)
	})
}

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
