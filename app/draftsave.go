package main

import (
	"reflect"
	"sync"
	"time"

	"h3studio/ui/studio"
)

// draftSaveDelay is how long the draft must stay unchanged before it is
// written: typing saves about once a pause, never once a keystroke.
const draftSaveDelay = 400 * time.Millisecond

// draftSaver writes Compose's draft and settings into settings.json as
// they change (debounced, atomically), so a crash, a force-quit or a hang
// loses at most the last draftSaveDelay of work: the next start restores
// the draft as it was.
type draftSaver struct {
	p     *prefs
	delay time.Duration

	wmu     sync.Mutex // held while writing: writes happen in order
	mu      sync.Mutex
	timer   *time.Timer
	pending *savedState
	last    savedState
	closed  bool
	// written is told of each draft after it was saved (nil: no one is).
	written func(studio.SavedDraft)
}

type savedState struct {
	settings studio.Settings
	draft    studio.SavedDraft
}

func newDraftSaver(p *prefs, delay time.Duration) *draftSaver {
	return &draftSaver{p: p, delay: delay}
}

// keepDraft puts the settings and draft remembered in p back into Compose
// (the demo settings and an empty draft on a first start), then saves them
// whenever they change: a crash, a force-quit or a kill loses at most the
// last draftSaveDelay of edits. The function it returns writes the final
// draft and stops saving (at quit). written, when not nil, is told of each
// draft after it was saved (tests).
func keepDraft(s *studio.Studio, p *prefs, firstStart bool, written func(studio.SavedDraft)) (stop func()) {
	if p.Settings != nil && !firstStart {
		s.Compose().SetSettings(*p.Settings)
	} else {
		s.Compose().SetSettings(studio.DemoSettings())
	}
	if p.Draft != nil && !firstStart {
		s.Compose().Restore(*p.Draft) // the prompt and files left at the last quit
	}
	if !p.existed {
		p.save() // the next start is not a first start
	}
	s.Compose().ForgetHistory()
	saver := newDraftSaver(p, draftSaveDelay)
	saver.written = written
	unsubscribe := s.Subscribe(func() { saver.changed(s.Snapshot().Draft) })
	return func() {
		unsubscribe()
		saver.close(s.Snapshot().Draft)
	}
}

// changed takes the draft of a new snapshot; a changed draft is saved once
// it has stayed unchanged for the delay.
func (d *draftSaver) changed(dr studio.Draft) {
	st := savedState{settings: dr.Settings, draft: dr.Saved()}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed || d.pending == nil && reflect.DeepEqual(st, d.last) {
		return
	}
	if d.pending != nil && reflect.DeepEqual(st, *d.pending) {
		return
	}
	d.pending = &st
	if d.timer != nil {
		d.timer.Stop()
	}
	d.timer = time.AfterFunc(d.delay, d.flush)
}

// flush writes the pending draft now.
func (d *draftSaver) flush() {
	d.wmu.Lock()
	defer d.wmu.Unlock()
	d.mu.Lock()
	st := d.pending
	d.pending = nil
	if d.timer != nil {
		d.timer.Stop()
	}
	if st != nil {
		d.last = *st
	}
	d.mu.Unlock()
	if st == nil {
		return
	}
	d.p.setDraft(st.settings, st.draft)
	if d.written != nil {
		d.written(st.draft)
	}
}

// close writes the final draft (at quit); later changes are not saved.
func (d *draftSaver) close(dr studio.Draft) {
	d.mu.Lock()
	d.closed = true
	d.pending = &savedState{settings: dr.Settings, draft: dr.Saved()}
	d.mu.Unlock()
	d.flush()
}

// setDraft records the draft and settings and saves settings.json.
func (p *prefs) setDraft(st studio.Settings, saved studio.SavedDraft) {
	p.mu.Lock()
	p.Settings, p.Draft = &st, &saved
	if saved.Empty() {
		p.Draft = nil
	}
	p.mu.Unlock()
	p.save()
}
