package main

import (
	"errors"
	"path/filepath"
	"time"

	"h3studio/engine/media"
	"h3studio/ui/studio"
	"h3studio/ui/studio/fakeengine"
)

// This file is the GUI's seam to the engine. Everything the studio needs
// from the engine goes through newGenerator (a session on a model folder)
// and ensureDemoModel (the demo checkpoint in the cache), plus the media
// layer's MP4 writer and decoder below.
//
// LEAD: when the engine façade (engine.Session, engine/demo) lands on main,
// wire the two functions as their comments say; nothing else in the GUI
// changes, and `make test-gui` then generates through the real engine on
// the demo checkpoint. Until then the default path refuses to generate and
// says so; the development fake is only reachable through -fake-engine and
// in tests.

// errNoEngine is what the default path says until the façade is wired.
var errNoEngine = errors.New("this build of H3 Studio has no engine yet (the MiniMax-H3 pipeline is still being built); the studio runs with -fake-engine for UI development only")

// newGenerator opens an engine session on a model folder (no weights are
// mapped until the first Generate). *engine.Session satisfies
// studio.Generator:
//
//	return engine.Open(engine.Options{ModelDir: modelDir, Backend: <the app's backend>,
//		CacheDir: filepath.Join(cacheDir(), "conditioning")})
func newGenerator(modelDir string) (studio.Generator, error) {
	return nil, errNoEngine
}

// ensureDemoModel returns the demo checkpoint's folder inside cacheDir,
// writing it first when it is missing (what `h3studio testmodel` writes):
//
//	return demo.Ensure(cacheDir)
func ensureDemoModel(cacheDir string) (string, error) {
	return "", errors.New("the demo checkpoint writer (h3studio testmodel) is not in this build yet")
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
func (e realEngine) Demo() (string, error) { return ensureDemoModel(e.cacheDir) }

// fakeEngine wraps the development fake so its "demo" is a folder in the
// cache like the real one.
func fakeEngine(cacheDir string) studio.Engine {
	e := fakeengine.New(fakeengine.Options{Delay: 120 * time.Millisecond})
	e.DemoDir = filepath.Join(cacheDir, "fake-model")
	return e
}
