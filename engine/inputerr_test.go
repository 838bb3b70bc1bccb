package engine_test

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"h3studio/engine"
	"h3studio/engine/media"
)

// TestDamagedInputIsAnInvalidRequest: an input file found damaged only
// when it is decoded (a PNG whose header is whole but whose data ends
// early) is an invalid request naming the file, like one refused from its
// header, not a failure of the run; nothing is written.
func TestDamagedInputIsAnInvalidRequest(t *testing.T) {
	s := openSession(t)
	var b bytes.Buffer
	png.Encode(&b, image.NewRGBA(image.Rect(0, 0, 64, 64)))
	p := filepath.Join(t.TempDir(), "cut.png")
	os.WriteFile(p, b.Bytes()[:b.Len()*2/3], 0o644)
	r := base("a lamp", 1)
	r.First = p
	sink := &recSink{}
	_, err := s.Generate(context.Background(), r, sink, nil)
	var me *media.Error
	if !engine.IsRequestError(err) || !errors.As(err, &me) || !bytes.Contains([]byte(err.Error()), []byte("cut.png")) {
		t.Fatalf("got %v, want an invalid request naming cut.png", err)
	}
	if sink.closes != 0 || len(sink.Frames) != 0 {
		t.Error("something was written")
	}
}

// TestEveryDamagedInputIsAnInvalidRequest: the class of the test above
// over every kind of input a take reads: a picture cut short as the first
// frame, the last frame or a picture reference, and a WAV whose data ends
// before its header says, as a sound reference. Each is an invalid request
// naming the file, and nothing is written.
func TestEveryDamagedInputIsAnInvalidRequest(t *testing.T) {
	s := openSession(t)
	dir := t.TempDir()
	var b bytes.Buffer
	png.Encode(&b, image.NewRGBA(image.Rect(0, 0, 64, 64)))
	pic := filepath.Join(dir, "cut.png")
	os.WriteFile(pic, b.Bytes()[:b.Len()*2/3], 0o644)
	whole := writeWAV(t, filepath.Join(dir, "whole.wav"), 2, 32000, 2)
	wb, _ := os.ReadFile(whole)
	wav := filepath.Join(dir, "cut.wav")
	os.WriteFile(wav, wb[:len(wb)/2], 0o644)
	for name, c := range map[string]struct {
		file string
		edit func(r *engine.Request)
	}{
		"first frame":       {"cut.png", func(r *engine.Request) { r.First = pic }},
		"last frame":        {"cut.png", func(r *engine.Request) { r.Last = pic }},
		"picture reference": {"cut.png", func(r *engine.Request) { r.References = []engine.Reference{{Kind: engine.RefImage, Path: pic}} }},
		"sound reference": {"cut.wav", func(r *engine.Request) {
			r.Prompt = "<Audio 1> plays."
			r.References = []engine.Reference{{Kind: engine.RefAudio, Path: wav}}
		}},
	} {
		r := base("a lamp", 1)
		c.edit(&r)
		sink := &recSink{}
		_, err := s.Generate(context.Background(), r, sink, nil)
		if !engine.IsRequestError(err) || !bytes.Contains([]byte(err.Error()), []byte(c.file)) {
			t.Errorf("%s: got %v, want an invalid request naming %s", name, err, c.file)
		}
		if sink.closes != 0 || len(sink.Frames) != 0 {
			t.Errorf("%s: something was written", name)
		}
	}
}
