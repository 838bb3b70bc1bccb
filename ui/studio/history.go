package studio

import (
	"reflect"
	"time"
)

// history is the draft's undo/redo history: every change to the draft —
// the prompt (typing grouped), keyframes, references, settings, templates,
// examples, chaining — is undoable and redoable; nothing is dropped but the
// oldest entries past maxHistory.
type history struct {
	past, future []Draft
	// typingAt is when the last entry for typing was recorded: the prompt
	// edits that follow it within typingGroup form one step.
	typingAt time.Time
	typing   bool
	// edits counts the changes, undos and redos: the window compares it
	// between snapshots to learn that the draft was the last thing edited.
	edits uint64
}

const (
	maxHistory  = 500
	typingGroup = 1500 * time.Millisecond
)

// sameDraft compares what the user edits: the prompt, the files, the
// reference options and the settings (not what was read from the files).
func sameDraft(a, b Draft) bool {
	return a.KeepLabels == b.KeepLabels && reflect.DeepEqual(a.Saved(), b.Saved()) && reflect.DeepEqual(a.Settings, b.Settings)
}

// onlyPrompt reports whether a and b differ in the prompt alone.
func onlyPrompt(a, b Draft) bool {
	a.Prompt = b.Prompt
	return sameDraft(a, b)
}

// recordLocked records that the draft changed from before to the current
// draft. Consecutive prompt-only changes within typingGroup of each other
// are one step.
func (s *Studio) recordLocked(before Draft) {
	after := s.draft
	if sameDraft(before, after) {
		return
	}
	h := &s.hist
	h.edits++
	now := s.opts.Now()
	typing := onlyPrompt(before, after)
	h.future = nil
	if typing && h.typing && now.Sub(h.typingAt) < typingGroup && len(h.past) > 0 {
		h.typingAt = now // the same burst of typing
		return
	}
	h.past = append(h.past, before.Clone())
	if len(h.past) > maxHistory {
		h.past = append(h.past[:0:0], h.past[len(h.past)-maxHistory:]...)
	}
	h.typing, h.typingAt = typing, now
}

// Undo restores the draft before the last change; Redo brings it back.
func (c Compose) Undo() { c.step(&c.s.hist.past, &c.s.hist.future) }

// Redo re-applies the change the last Undo took back.
func (c Compose) Redo() { c.step(&c.s.hist.future, &c.s.hist.past) }

func (c Compose) step(from, to *[]Draft) {
	c.s.mu.Lock()
	if len(*from) == 0 {
		c.s.mu.Unlock()
		return
	}
	d := (*from)[len(*from)-1]
	*from = (*from)[:len(*from)-1]
	*to = append(*to, c.s.draft.Clone())
	c.s.hist.typing = false
	c.s.hist.edits++
	c.s.draft = d.Clone()
	c.s.draftVer++
	c.s.changedLocked()
	c.s.schedulePlanLocked()
	c.s.scheduleProbesLocked()
	for i := len(c.s.notices) - 1; i >= 0; i-- {
		if c.s.notices[i].Action == "Undo" {
			c.s.notices = append(c.s.notices[:i:i], c.s.notices[i+1:]...)
		}
	}
	c.s.mu.Unlock()
	c.s.afterEdit()
}

// ForgetHistory empties the undo history (after the start-up restores the
// last draft and settings, which are not steps the user can undo).
func (c Compose) ForgetHistory() {
	c.s.mu.Lock()
	c.s.hist = history{}
	c.s.changedLocked()
	c.s.mu.Unlock()
	c.s.notify()
}
