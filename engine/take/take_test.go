package take

import (
	"os"
	"path/filepath"
	"testing"

	"h3studio/engine"
)

// TestWritePermissions: a new record is 0644 (not the 0600 of its temporary
// file), a replaced one keeps its permission, and nothing temporary is left
// beside it.
func TestWritePermissions(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, File)
	if err := Write(p, Record{Version: Version}); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(p); err != nil || st.Mode().Perm() != 0o644 {
		t.Errorf("new record: %v %v, want 0644", st.Mode(), err)
	}
	os.Chmod(p, 0o640)
	if err := Write(p, Record{Version: Version, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(p); err != nil || st.Mode().Perm() != 0o640 {
		t.Errorf("replaced record: %v %v, want its 0640 kept", st.Mode(), err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("folder holds %d entries, want only %s", len(ents), File)
	}
}

// TestInputsAbsolute: conditioning files given relative to the working
// folder are recorded by absolute path with their hash, since the record
// is read from beside the output.
func TestInputsAbsolute(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	os.WriteFile("first.png", []byte("x"), 0o644)
	os.WriteFile("v.mp4", []byte("v"), 0o644)
	os.WriteFile("s.wav", []byte("s"), 0o644)
	rec := FromResult(engine.Result{Plan: engine.Plan{Task: engine.TaskFL2VA, Request: engine.Request{First: "first.png",
		References: []engine.Reference{{Kind: engine.RefVideoAudio, Path: "v.mp4", Audio: "s.wav"}}}}}, "test", "m", "CPU", "cpu")
	in := rec.Inputs()
	if len(in) != 3 {
		t.Fatalf("inputs %+v, want first frame, video and its sound", in)
	}
	for i, base := range []string{"first.png", "v.mp4", "s.wav"} {
		if !filepath.IsAbs(in[i].Path) || filepath.Base(in[i].Path) != base || len(in[i].Hash) != 64 {
			t.Errorf("input %d: %+v", i, in[i])
		}
	}
	if r := rec.References[0]; r.Label != "Video 1" || r.Kind != string(engine.RefVideoAudio) || r.Sound.Kind != "audio" {
		t.Errorf("reference %+v", r)
	}
}

// TestReadHashFormat: Read gives one hash format whether the file wrote
// the plain hex digest or the "sha256:"-prefixed one of older take folders,
// and a damaged record's error names the file.
func TestReadHashFormat(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, File)
	sum, _ := HashFile(p) // missing file: no hash
	if sum != "" {
		t.Fatalf("hash of a missing file %q", sum)
	}
	os.WriteFile(filepath.Join(dir, "a.png"), []byte("a"), 0o644)
	h, err := HashFile(filepath.Join(dir, "a.png"))
	if err != nil || len(h) != 64 {
		t.Fatalf("HashFile %q %v", h, err)
	}
	os.WriteFile(p, []byte(`{"version":1,"first_frame":{"kind":"image","path":"a.png","sha256":"sha256:`+h+`"},`+
		`"references":[{"kind":"video-audio","path":"v","sha256":"`+h+`","sound":{"kind":"audio","path":"s","sha256":"sha256:`+h+`"}}]}`), 0o644)
	rec, err := Read(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range rec.Inputs() {
		if m.Hash != h {
			t.Errorf("%s: hash %q, want %q", m.Path, m.Hash, h)
		}
	}
	os.WriteFile(p, []byte(`{"version":`), 0o644)
	if _, err := Read(p); err == nil || err.Error()[:len(File)] != File {
		t.Errorf("damaged record: %v", err)
	}
}
