package studio

import (
	"fmt"

	"h3studio/engine"
)

// Seed counts "Generate N seeds" accepts.
const (
	MinSeeds = 2
	MaxSeeds = 9
)

// GenerateSeeds queues n takes of the draft as it is, one per seed: the
// draft's seed, then the next n−1 seeds, in that order, so the takes differ
// only by their seed. The draft keeps its seed. It returns the jobs in seed
// order (the grid's cells).
func (q Queue) GenerateSeeds(n int) ([]JobID, error) {
	if n < MinSeeds || n > MaxSeeds {
		return nil, fmt.Errorf("studio: %d seeds, expected %d…%d", n, MinSeeds, MaxSeeds)
	}
	q.s.mu.Lock()
	ok, why := q.s.canGenerateLocked(q.s.problemsLocked())
	if !ok {
		q.s.mu.Unlock()
		return nil, fmt.Errorf("%w: %s", ErrNotReady, why)
	}
	var plan *engine.Plan
	if q.s.plan != nil && q.s.planVer == q.s.draftVer {
		p := *q.s.plan
		plan = &p
	}
	ids := make([]JobID, n)
	for k := range ids {
		d := q.s.draft.Clone()
		d.Settings.Seed += uint64(k)
		ids[k] = q.s.enqueueLocked(d, plan)
	}
	q.s.mu.Unlock()
	q.s.notify()
	return ids, nil
}

// JobTake is the take a job saved ("" while it is queued or running, or
// when it failed) and whether the job has ended.
func (sn Snapshot) JobTake(id JobID) (take string, ended bool) {
	for _, j := range sn.Jobs {
		if j.ID == id {
			return j.TakeID, j.State == JobDone || j.State == JobFailed || j.State == JobCancelled
		}
	}
	return "", false
}
