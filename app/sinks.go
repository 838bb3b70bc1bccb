package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"h3studio/engine"
	"h3studio/engine/media"
)

// outputs is what a generate command writes: the media sink fanning out to
// every requested file, and the paths it will produce once closed.
type outputs struct {
	sink  media.Sink
	paths map[string]string // "video", "frames", "audio" → path
	// created lists the folders openSinks made for the outputs; a failed
	// or cancelled generation removes them again when they stayed empty.
	created []string
}

// openSinks builds the outputs a generate command asked for, from package
// media's sinks: the MP4 (unless the output is empty), the PNG frame sequence
// (--frames-dir, frame-00001.png …) and the WAV (--wav). Each writes under a
// temporary name and appears only when the generation finishes; nothing is
// left behind on failure or cancellation.
func openSinks(a generateArgs, p engine.Plan) (*outputs, error) {
	o := &outputs{paths: map[string]string{}}
	if a.output == "" && a.framesDir == "" && a.wav == "" {
		return nil, errNoOutput
	}
	var sinks []media.Sink
	fail := func(err error) (*outputs, error) {
		for _, s := range sinks {
			s.Abort()
		}
		o.removeCreated()
		return nil, err
	}
	if a.output != "" {
		if err := o.ensureDir(filepath.Dir(a.output)); err != nil {
			return fail(err)
		}
		s, err := media.NewMP4Sink(a.output, media.MP4Options{})
		if err != nil {
			return fail(err)
		}
		sinks = append(sinks, s)
		o.paths["video"] = a.output
	}
	if a.framesDir != "" {
		_, statErr := os.Stat(a.framesDir)
		s, err := media.NewFrameSink(a.framesDir)
		if err != nil {
			return fail(err)
		}
		if os.IsNotExist(statErr) {
			o.created = append(o.created, a.framesDir)
		}
		sinks = append(sinks, s)
		o.paths["frames"] = a.framesDir
	}
	if a.wav != "" {
		if err := o.ensureDir(filepath.Dir(a.wav)); err != nil {
			return fail(err)
		}
		s, err := media.NewWAVSink(a.wav, media.PCM16)
		if err != nil {
			return fail(err)
		}
		sinks = append(sinks, s)
		o.paths["audio"] = a.wav
	}
	if len(sinks) == 1 {
		o.sink = sinks[0]
	} else {
		o.sink = media.MultiSink(sinks...)
	}
	return o, nil
}

var errNoOutput = errors.New("nothing to write: -o '' needs --frames-dir or --wav")

// ensureDir creates dir (and its parents) when missing, remembering the
// topmost folder it made.
func (o *outputs) ensureDir(dir string) error {
	if dir == "" || dir == "." {
		return nil
	}
	if st, err := os.Stat(dir); err == nil {
		if !st.IsDir() {
			return fmt.Errorf("%s exists and is not a folder", dir)
		}
		return nil
	}
	top := dir
	for {
		parent := filepath.Dir(top)
		if parent == top {
			break
		}
		if _, err := os.Stat(parent); err == nil {
			break
		}
		top = parent
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("cannot create %s: %w", dir, err)
	}
	o.created = append(o.created, top)
	return nil
}

// removeCreated removes the folders openSinks created, where they are
// still empty (os.Remove refuses a folder with anything in it).
func (o *outputs) removeCreated() {
	for i := len(o.created) - 1; i >= 0; i-- {
		// Walk down-up: remove empty leaves first.
		removeEmptyTree(o.created[i])
	}
}

func removeEmptyTree(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if e.IsDir() {
			removeEmptyTree(filepath.Join(dir, e.Name()))
		}
	}
	os.Remove(dir)
}
