package engine

import (
	"context"
	"errors"

	"h3studio/engine/media"
	"h3studio/engine/safetensors"
)

// runCatchingFaults is run with memory faults on mapped weights turned into
// errors: a weight file truncated, rewritten or on a disk that dropped out
// under the run ends it with a *safetensors.FaultError naming the file
// instead of ending the process. The resident components are dropped after
// such a fault, so the next request maps the files again (and is refused
// clearly if they are still damaged).
func (s *Session) runCatchingFaults(ctx context.Context, p Plan, out media.Sink, t *tracker) (res Result, err error) {
	defer func() {
		var fe *safetensors.FaultError
		if errors.As(err, &fe) && s.cur != nil {
			s.cur.release()
		}
	}()
	defer safetensors.CatchFaults()(&err)
	return s.run(ctx, p, out, t)
}

// IsWeightFault reports whether err is a read of a mapped weight file that
// failed because the file changed under the run.
func IsWeightFault(err error) bool {
	var fe *safetensors.FaultError
	return errors.As(err, &fe)
}
