package videoapi

import (
	"bytes"
	"mime/multipart"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

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
