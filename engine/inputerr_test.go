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
