package main

import (
	"errors"
	"os"
	"path/filepath"
	"time"

	"h3studio/engine/media"
	"h3studio/ui/studio"
	"h3studio/ui/studio/fakeengine"
)

// This file is the GUI's seam to the engine. Everything the studio needs
// from the engine goes through newGenerator (a session on a model folder),
// writeDemoModel (the demo checkpoint, as `h3studio testmodel` writes it),
// newVideoSink (the MP4 writer) and mediaOpener (reference decoding).
//
// LEAD: when the engine façade lands, wire these four; nothing else in the
// GUI changes. Until then the default path refuses to generate and says
// so; the development fake is only reachable through -fake-engine and in
// tests.

// errNoEngine is what the default path says until the façade is wired.
var errNoEngine = errors.New("this build of H3 Studio has no engine yet (the MiniMax-H3 pipeline is still being built); the studio runs with -fake-engine for UI development only")

// newGenerator opens an engine session on a model folder.
//
//	return engine.Open(engine.Options{ModelDir: modelDir, Backend: newBackend(), Opener: mediaOpener()})
func newGenerator(modelDir string) (studio.Generator, error) {
	return nil, errNoEngine
}

// writeDemoModel writes the demo checkpoint (tiny random weights in the
// released layout) into dir, like `h3studio testmodel -o dir`.
func writeDemoModel(dir string) error {
	return errors.New("the demo checkpoint writer (h3studio testmodel) is not in this build yet")
}

// newVideoSink returns the MP4 writer for a take: the media layer's
// platform writer (AVFoundation on macOS, Debian's ffmpeg on Linux). Where
// there is none, the take is saved without video.mp4.
func newVideoSink(path string) (media.Sink, error) {
	return media.NewMP4Sink(path, media.MP4Options{})
}

// mediaOpener decodes dropped files by content (pictures, WAV, and through
// the platform videos and compressed sound).
var mediaOpener media.Opener = media.Open

// realEngine is studio.Engine over the engine.
type realEngine struct{ cacheDir string }

func (e realEngine) Inspect(dir string) studio.ModelInfo { return inspectModel(dir) }

func (e realEngine) Open(dir string) (studio.Generator, error) { return newGenerator(dir) }

// Demo returns the demo checkpoint's folder in the cache, writing it first
// when it is missing.
func (e realEngine) Demo() (string, error) {
	dir := filepath.Join(e.cacheDir, "demo-model")
	if _, err := os.Stat(filepath.Join(dir, ".complete")); err == nil {
		return dir, nil
	}
	tmp := dir + ".partial"
	os.RemoveAll(tmp)
	if err := writeDemoModel(tmp); err != nil {
		os.RemoveAll(tmp)
		return "", err
	}
	if err := os.WriteFile(filepath.Join(tmp, ".complete"), nil, 0o644); err != nil {
		os.RemoveAll(tmp)
		return "", err
	}
	os.RemoveAll(dir)
	if err := os.Rename(tmp, dir); err != nil {
		return "", err
	}
	return dir, nil
}

// fakeEngine wraps the development fake so its "demo" is a folder in the
// cache like the real one.
func fakeEngine(cacheDir string) studio.Engine {
	e := fakeengine.New(fakeengine.Options{Delay: 120 * time.Millisecond})
	e.DemoDir = filepath.Join(cacheDir, "fake-model")
	return e
}
