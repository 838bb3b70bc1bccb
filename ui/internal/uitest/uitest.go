// Package uitest is the test kit of the ui packages: a queue that runs the
// studio's background work and the window's UI calls on the test's
// goroutine, the media files tests drop, and the skip for tests that need
// a command-line tool (the bounded waits on change notifications are
// engine/testkit's). It uses neither Fyne nor the studio, so the Fyne-free
// studio's own tests use it too.
package uitest

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"h3studio/engine/media"
)

// Queue runs functions when the test drains it, on the test's goroutine:
// the studio's background tasks (its Options.Go) or the window's UI calls,
// deterministically.
type Queue struct {
	mu sync.Mutex
	q  []func()
}

// Go queues f.
func (q *Queue) Go(f func()) { q.mu.Lock(); q.q = append(q.q, f); q.mu.Unlock() }

// Drain runs the queued functions, and those they queue, until none is
// left; it returns how many ran.
func (q *Queue) Drain() int {
	n := 0
	for {
		q.mu.Lock()
		if len(q.q) == 0 {
			q.mu.Unlock()
			return n
		}
		f := q.q[0]
		q.q = q.q[1:]
		q.mu.Unlock()
		f()
		n++
	}
}

// NeedTools skips t unless every named command is installed; on CI (CI
// set) a missing one fails it instead, since make deps installs them.
func NeedTools(t testing.TB, names ...string) {
	t.Helper()
	for _, name := range names {
		if _, err := exec.LookPath(name); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is missing on CI (make deps installs Debian's ffmpeg)", name)
			}
			t.Skipf("SKIP: %s not installed", name)
		}
	}
}

// PNG is a w×h picture of one opaque colour, encoded.
func PNG(w, h int, c color.RGBA) []byte {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for i := 0; i < len(img.Pix); i += 4 {
		img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = c.R, c.G, c.B, 255
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		panic(fmt.Sprintf("uitest: encoding a %dx%d PNG: %v", w, h, err))
	}
	return b.Bytes()
}

// WriteFile writes b to dir/name and returns the path.
func WriteFile(t testing.TB, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// WAV writes dir/name: secs seconds of 32 kHz stereo 16-bit sound, every
// sample at level (a constant, so a test can tell the sound it dropped).
func WAV(t testing.TB, dir, name string, secs float64, level float32) string {
	t.Helper()
	n := int(secs * 32000)
	a := media.Audio{Rate: 32000, Channels: 2, Samples: make([]float32, 2*n)}
	for i := range a.Samples {
		a.Samples[i] = level
	}
	p := filepath.Join(dir, name)
	if err := media.WriteWAVFile(p, a, media.PCM16); err != nil {
		t.Fatal(err)
	}
	return p
}

// Files reads every file below dir into a map keyed by its slash-separated
// path relative to dir (the repository of a fake Hub).
func Files(t testing.TB, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		files[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		t.Fatalf("reading the files below %s: %v", dir, err)
	}
	return files
}
