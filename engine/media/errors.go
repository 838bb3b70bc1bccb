package media

import (
	"errors"
	"fmt"
)

// Error is a media failure tied to one file: the path, what went wrong in
// words a user can act on, and the underlying error if any. Every error
// this package returns about a file is an *Error.
type Error struct {
	Path    string // the file (input or destination)
	Problem string // e.g. "truncated PNG data", "not an image (the content is WAV audio)"
	Err     error  // underlying cause, may be nil
}

func (e *Error) Error() string {
	s := "media: " + e.Path + ": " + e.Problem
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

func fileErr(path string, err error, format string, args ...any) error {
	return &Error{Path: path, Problem: fmt.Sprintf(format, args...), Err: err}
}

// Sentinel causes, for callers that branch (errors.Is).
var (
	ErrTooLarge    = errors.New("too large")
	ErrUnsupported = errors.New("unsupported")
	ErrNoAudio     = errors.New("no sound")
	ErrNoPlatform  = errors.New("no media platform for this build")
)
