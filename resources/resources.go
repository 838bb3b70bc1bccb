package resources

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
)

//go:embed icon.png prompts/*.json
var files embed.FS

// FS is every embedded file, for callers that want to walk them.
var FS fs.FS = files

// Icon is the app icon as a 1024×1024 PNG (drawn by tools/mkicon; the .icns
// for the macOS bundle is written from the same picture).
func Icon() []byte { return mustRead("icon.png") }

// Field is one section of a prompt template.
type Field struct {
	Name  string `json:"name"`  // the section's name as the model reads it ("overall_soundscape")
	Title string `json:"title"` // the builder's label ("Overall soundscape")
	Hint  string `json:"hint"`  // what to write there
	// Inline sections are written "name: text" on one line (base modes);
	// the others "name:" on a line of their own followed by the text
	// (Ref2VA).
	Inline bool `json:"inline"`
	// Labels marks a section that holds one line per reference label
	// (<Picture 1> …), kept in step with the reference list.
	Labels bool `json:"labels"`
	// LabelLine is the text a new label line starts with after the label
	// ("is " for subject definitions).
	LabelLine string `json:"label_line"`
	// AudioLabelLine replaces LabelLine for <Audio N> labels.
	AudioLabelLine string `json:"audio_label_line"`
	Lines          int    `json:"lines"` // editor height
}

// Template is a prompt format: the ordered sections and, for the keyframe
// modes, the alignment instruction lines.
type Template struct {
	Name   string  `json:"name"`
	Title  string  `json:"title"`
	About  string  `json:"about"`
	Fields []Field `json:"fields"`
	// Alignment instruction lines for the keyframe modes (base template
	// only), with %[1]s = the final shot number and %[2]s = the clip's
	// length in seconds, two decimals.
	FirstOnly string `json:"first_only"`
	LastOnly  string `json:"last_only"`
	FirstLast string `json:"first_last"`
}

// Example is a ready-made prompt.
type Example struct {
	Title  string `json:"title"`
	Task   string `json:"task"` // t2va, fl2va or ref2va
	Prompt string `json:"prompt"`
}

// Templates returns the base-mode and Ref2VA templates, in that order.
func Templates() ([]Template, error) {
	var t []Template
	if err := json.Unmarshal(mustRead("prompts/templates.json"), &t); err != nil {
		return nil, fmt.Errorf("resources: prompts/templates.json: %w", err)
	}
	return t, nil
}

// Examples returns the example prompts.
func Examples() ([]Example, error) {
	var e []Example
	if err := json.Unmarshal(mustRead("prompts/examples.json"), &e); err != nil {
		return nil, fmt.Errorf("resources: prompts/examples.json: %w", err)
	}
	return e, nil
}

func mustRead(name string) []byte {
	b, err := files.ReadFile(name)
	if err != nil {
		panic("resources: missing embedded file " + name) // a build bug
	}
	return b
}
