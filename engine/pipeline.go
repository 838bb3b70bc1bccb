package engine

import (
	"context"
	"fmt"

	"h3studio/engine/compute"
	"h3studio/engine/media"
)

// run executes a planned request. The stages land one by one; until all of
// them exist it reports which one is missing.
func (s *Session) run(ctx context.Context, p Plan, out media.Sink, progress func(Event)) (Result, error) {
	return Result{Plan: p}, fmt.Errorf("engine: generation pipeline: %w", compute.ErrNotImplemented)
}
