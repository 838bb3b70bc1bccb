package main

import (
	"os"
	"path/filepath"
	"time"

	"h3studio/engine"
	"h3studio/engine/envconfig"
	"h3studio/engine/media"
	"h3studio/engine/testmodel"
	"h3studio/ui/studio"
	"h3studio/ui/studio/fakeengine"
)

// This file is the GUI's seam to the engine. Everything the studio needs
// from the engine goes through newGenerator (a session on a model folder)
// and ensureDemoModel (the demo checkpoint in the cache), plus the media
// layer's MP4 writer and decoder below.

// newGenerator opens an engine session on a model folder (no weights are
// mapped until the first Generate; components then stay resident between
// takes as the memory mode allows, and prompt conditionings are cached in
// the app's cache folder). *engine.Session satisfies studio.Generator.
func newGenerator(modelDir string) (studio.Generator, error) {
	oracles, err := envconfig.Oracles()
	if err != nil {
		return nil, err
	}
	b, err := openBackend("auto", os.Stderr)
	if err != nil {
		return nil, err
	}
	s, err := engine.Open(engine.Options{ModelDir: modelDir, Backend: b, Opener: mediaOpener, CacheDir: cacheDir(), CloseBackend: true, Oracles: oracles, RatesFile: ratesFile()})
	if err != nil {
		b.Close()
		return nil, err
	}
	return s, nil
}

// ensureDemoModel returns the demo checkpoint's folder inside cacheDir,
// writing it first when it is missing (what `h3studio testmodel` writes).
func ensureDemoModel(cacheDir string) (string, error) {
	return testmodel.Ensure(cacheDir)
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
