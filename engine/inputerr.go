package engine

import (
	"context"
	"errors"
	"strings"

	"h3studio/engine/media"
)

// asInputError marks a failure to read or decode an input file of the
// request (a truncated or damaged picture, video or sound found while the
// conditions are prepared) as an invalid request: the request named a file
// the model cannot use, as when the plan refuses one from its header. A
// cancellation, a fault on a weight file or any other failure stays as it
// is.
func asInputError(err error) error {
	var me *media.Error
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || IsWeightFault(err) || !errors.As(err, &me) {
		return err
	}
	return &RequestError{Field: strings.TrimPrefix(err.Error(), "engine: "), Err: err}
}
