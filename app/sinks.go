package main

import (
	"fmt"

	"h3studio/engine"
	"h3studio/engine/media"
)

// openSinks builds the outputs a generate command asked for. (The MP4,
// frame-folder and WAV sinks come from package media.)
func openSinks(a generateArgs, p engine.Plan) (media.Sink, map[string]string, error) {
	return nil, nil, fmt.Errorf("output sinks are not available in this build yet")
}
