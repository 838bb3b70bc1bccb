package main

import (
	"errors"
	"path/filepath"

	"h3studio/engine/media"
	"h3studio/engine/take"
)

// outputs is what a generate command writes: the media sink fanning out to
// every requested file, staged (takeStage) until the take is complete.
type outputs struct {
	sink  media.Sink
	paths map[string]string // "video", "frames", "audio" → final path
	stage *takeStage
	// staged maps each final path to where it is written meanwhile.
	staged map[string]string
}

// openSinks builds the outputs a generate command asked for, from package
// media's sinks: the MP4 (unless the output is empty), the PNG frame sequence
// (--frames-dir, frame-00001.png …) and the WAV (--wav). Each is written into
// a staging folder beside its destination; publish moves them, with the take
// record, into place together. Nothing is left behind on failure or
// cancellation (discard).
func openSinks(a generateArgs) (*outputs, error) {
	if a.output == "" && a.framesDir == "" && a.wav == "" {
		return nil, errNoOutput
	}
	o := &outputs{paths: map[string]string{}, stage: newTakeStage(), staged: map[string]string{}}
	var sinks []media.Sink
	fail := func(err error) (*outputs, error) {
		for _, s := range sinks {
			s.Abort()
		}
		o.stage.discard()
		return nil, err
	}
	open := func(kind, final string, mk func(string) (media.Sink, error)) error {
		p, err := o.stage.stagedPath(final)
		if err != nil {
			return err
		}
		s, err := mk(p)
		if err != nil {
			return err
		}
		sinks = append(sinks, s)
		o.paths[kind], o.staged[final] = final, p
		return nil
	}
	if a.output != "" {
		if err := open("video", a.output, func(p string) (media.Sink, error) { return media.NewMP4Sink(p, media.MP4Options{}) }); err != nil {
			return fail(err)
		}
	}
	if a.framesDir != "" {
		if err := open("frames", filepath.Clean(a.framesDir), media.NewFrameSink); err != nil {
			return fail(err)
		}
	}
	if a.wav != "" {
		if err := open("audio", a.wav, func(p string) (media.Sink, error) { return media.NewWAVSink(p, media.PCM16) }); err != nil {
			return fail(err)
		}
	}
	if len(sinks) == 1 {
		o.sink = sinks[0]
	} else {
		o.sink = media.MultiSink(sinks...)
	}
	return o, nil
}

// publish writes the take record(s) into the staging folders and moves
// every output into place together.
func (o *outputs) publish(records []string, sc take.Record) error {
	fail := func(err error) error {
		o.stage.discard()
		return err
	}
	var later []stageItem // the take records beside the files, published last
	for _, rec := range records {
		var p string
		if fr := o.paths["frames"]; fr != "" && filepath.Dir(rec) == fr {
			p = filepath.Join(o.staged[fr], filepath.Base(rec)) // moves with the folder
		} else {
			var err error
			if p, err = o.stage.stagedPath(rec); err != nil {
				return fail(err)
			}
			later = append(later, stageItem{staged: p, final: rec})
		}
		if err := take.Write(p, sc); err != nil {
			return fail(err)
		}
	}
	for _, kind := range []string{"video", "audio"} {
		if f := o.paths[kind]; f != "" {
			o.stage.add(o.staged[f], f)
		}
	}
	if fr := o.paths["frames"]; fr != "" {
		if err := o.stage.addFramesFolder(o.staged[fr], fr); err != nil {
			return fail(err)
		}
	}
	o.stage.items = append(o.stage.items, later...)
	return o.stage.publish()
}

var errNoOutput = errors.New("nothing to write: -o '' needs --frames-dir or --wav")
