package studio

import (
	"slices"
	"time"

	"h3studio/engine"
)

// Model is the model the studio generates with: the folder chosen (or the
// demo checkpoint), inspected without loading weights, opened in the
// background and watched while its files arrive. Its state lives in the
// Studio (Snapshot.Model) beside the generator the queue and the planner
// use; Model is the handle on it (Studio.Model). Models, by contrast,
// manages the model folders on disk (downloads, verification).
type Model struct{ s *Studio }

// Model returns the model the studio generates with.
func (s *Studio) Model() Model { return Model{s} }

// Name is the ready model's name ("" while none is ready).
func (m Model) Name() string {
	m.s.mu.Lock()
	defer m.s.mu.Unlock()
	if !m.s.model.Ready || m.s.gen == nil {
		return ""
	}
	if m.s.model.Info.Name != "" {
		return m.s.model.Info.Name
	}
	return "MiniMax-H3"
}

// Use chooses a model folder: it is inspected (the `h3studio info`
// report, no weights mapped) and, when usable, opened — both in the
// background — and then watched, so a folder that is still downloading is
// validated again as its files arrive.
func (m Model) Use(dir string) {
	m.s.mu.Lock()
	m.s.modelSeq++
	seq := m.s.modelSeq
	m.s.model = ModelState{Info: ModelInfo{Dir: dir, Name: "Checking the model…"}, Loading: true}
	m.s.gen = nil
	m.s.resetPlanLocked()
	m.s.changedLocked()
	m.s.mu.Unlock()
	m.s.notify()
	if m.s.watch != nil {
		m.s.watch.setModel(dir)
	}
	m.s.opts.Go(func() { m.s.openModel(seq, dir, false) })
}

// UseDemo switches to the demo checkpoint, writing it first if needed.
func (m Model) UseDemo() {
	m.s.mu.Lock()
	m.s.modelSeq++
	seq := m.s.modelSeq
	m.s.model = ModelState{Info: ModelInfo{Name: "Preparing the demo checkpoint…", Demo: true}, Loading: true}
	m.s.gen = nil
	m.s.resetPlanLocked()
	m.s.changedLocked()
	m.s.mu.Unlock()
	m.s.notify()
	m.s.opts.Go(func() {
		dir, err := m.s.opts.Engine.Demo()
		if err != nil {
			m.s.update(func() {
				if m.s.modelSeq != seq {
					return
				}
				m.s.model = ModelState{Info: ModelInfo{Name: "Demo checkpoint", Demo: true, Problem: "the demo checkpoint can't be prepared: " + err.Error()}}
			})
			return
		}
		if m.s.watch != nil {
			m.s.watch.setModel(dir)
		}
		m.s.openModel(seq, dir, false)
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

// Reload inspects the current model folder again and reopens it when its
// usability changed (File ▸ Check the Model Folder Again), for a folder
// whose changes the watcher does not see or when watching is off.
func (m Model) Reload() { m.s.opts.Go(m.s.modelChanged) }

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
