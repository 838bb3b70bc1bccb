package studio

import (
	"slices"
	"time"

	"h3studio/engine"
)

// SetModel chooses a model folder: it is inspected (the `h3studio info`
// report, no weights mapped) and, when usable, opened — both in the
// background — and then watched, so a folder that is still downloading is
// validated again as its files arrive.
func (s *Studio) SetModel(dir string) {
	s.mu.Lock()
	s.modelSeq++
	seq := s.modelSeq
	s.model = ModelState{Info: ModelInfo{Dir: dir, Name: "Checking the model…"}, Loading: true}
	s.gen = nil
	s.resetPlanLocked()
	s.changedLocked()
	s.mu.Unlock()
	s.notify()
	if s.watch != nil {
		s.watch.setModel(dir)
	}
	s.opts.Go(func() { s.openModel(seq, dir, false) })
}

// UseDemo switches to the demo checkpoint, writing it first if needed.
func (s *Studio) UseDemo() {
	s.mu.Lock()
	s.modelSeq++
	seq := s.modelSeq
	s.model = ModelState{Info: ModelInfo{Name: "Preparing the demo checkpoint…", Demo: true}, Loading: true}
	s.gen = nil
	s.resetPlanLocked()
	s.changedLocked()
	s.mu.Unlock()
	s.notify()
	s.opts.Go(func() {
		dir, err := s.opts.Engine.Demo()
		if err != nil {
			s.update(func() {
				if s.modelSeq != seq {
					return
				}
				s.model = ModelState{Info: ModelInfo{Name: "Demo checkpoint", Demo: true, Problem: "the demo checkpoint can't be prepared: " + err.Error()}}
			})
			return
		}
		if s.watch != nil {
			s.watch.setModel(dir)
		}
		s.openModel(seq, dir, false)
	})
}

// openModel inspects and opens a folder; revalidate keeps a working
// generator when nothing about the folder's usability changed.
func (s *Studio) openModel(seq int, dir string, revalidate bool) {
	if s.opts.Engine == nil {
		s.update(func() {
			if s.modelSeq == seq {
				s.model = ModelState{Info: ModelInfo{Dir: dir, Problem: "this build has no engine"}}
			}
		})
		return
	}
	info := s.opts.Engine.Inspect(dir)
	s.mu.Lock()
	if s.modelSeq != seq {
		s.mu.Unlock()
		return
	}
	if revalidate && s.gen != nil && info.Usable && slices.Equal(info.Tasks, s.model.Info.Tasks) {
		s.model.Info = info
		s.changedLocked()
		s.mu.Unlock()
		s.notify()
		return
	}
	s.mu.Unlock()
	var gen Generator
	var err error
	if info.Usable {
		gen, err = s.opts.Engine.Open(dir)
	}
	s.update(func() {
		if s.modelSeq != seq {
			return
		}
		prev := s.model
		s.model = ModelState{Info: info, Ready: gen != nil}
		if s.gen != gen {
			s.resetPlanLocked()
		}
		s.gen = gen
		if err != nil {
			s.model.Err = err.Error()
		}
		if revalidate && prev.Ready != s.model.Ready {
			if s.model.Ready {
				s.noticeLocked(Info, "The model folder is complete now: "+info.Name+".", "")
			} else {
				s.noticeLocked(Warn, "The model folder changed and can't be used now: "+info.Problem, "")
			}
		}
		s.schedulePlanLocked()
		s.maybeSampleLocked()
	})
}

func (s *Studio) resetPlanLocked() {
	s.plan, s.planErr, s.planVer = nil, nil, 0
	s.estimates = map[engine.Preset]time.Duration{}
}

// modelChanged is the watcher's callback for the model folder.
func (s *Studio) modelChanged() {
	s.mu.Lock()
	dir, seq := s.model.Info.Dir, s.modelSeq
	s.mu.Unlock()
	if dir == "" {
		return
	}
	s.openModel(seq, dir, true)
}

// ReloadModel inspects the current model folder again.
func (s *Studio) ReloadModel() { s.opts.Go(s.modelChanged) }

// schedulePlanLocked asks the engine for a plan of the current draft (and
// estimates for every quality preset) in the background; the latest draft
// wins.
func (s *Studio) schedulePlanLocked() {
	if s.planBusy || s.gen == nil {
		return
	}
	s.planBusy = true
	s.opts.Go(s.planLoop)
}

func (s *Studio) planLoop() {
	for {
		s.mu.Lock()
		gen, ver, d := s.gen, s.draftVer, s.draft.Clone()
		if gen == nil || (s.planVer == ver && (s.plan != nil || s.planErr != nil)) {
			s.planBusy = false
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()

		plan, err := gen.Plan(d.Request())
		est := map[engine.Preset]time.Duration{}
		if err == nil {
			for _, q := range Qualities {
				dq := d
				dq.Settings = dq.Settings.WithQuality(q.Preset)
				if p, err := gen.Plan(dq.Request()); err == nil {
					est[q.Preset] = p.Estimate
				}
			}
		}
		s.mu.Lock()
		if s.gen == gen {
			s.planVer = ver
			s.plan, s.planErr = nil, err
			if err == nil {
				s.plan = &plan
				s.estimates = est
			}
			s.changedLocked()
		}
		s.mu.Unlock()
		s.notify()
	}
}
