package studio

import "h3studio/engine/media"

// SavedDraft is the draft as the app keeps it between runs (settings are
// kept on their own): the prompt and the files by path. Restoring it reads
// the files again, so one that was moved or edited meanwhile is marked or
// re-read like any other.
type SavedDraft struct {
	Prompt     string           `json:"prompt"`
	First      string           `json:"first_frame,omitempty"`
	Last       string           `json:"last_frame,omitempty"`
	References []SavedReference `json:"references,omitempty"`
	// KeepLabels is stored inverted so that an absent field means on.
	FreeLabels bool `json:"free_labels,omitempty"`
}

// SavedReference is one reference of a SavedDraft.
type SavedReference struct {
	Path   string `json:"path"`
	Silent bool   `json:"silent,omitempty"`
	Sound  string `json:"sound,omitempty"`
}

// Saved returns the draft's prompt and files for keeping between runs.
func (d Draft) Saved() SavedDraft {
	sd := SavedDraft{Prompt: d.Prompt, First: d.First.Path, Last: d.Last.Path, FreeLabels: !d.KeepLabels}
	for _, r := range d.References {
		sd.References = append(sd.References, SavedReference{Path: r.Media.Path, Silent: r.Silent, Sound: r.Sound.Path})
	}
	return sd
}

// Empty reports whether there is nothing to restore.
func (sd SavedDraft) Empty() bool {
	return sd.Prompt == "" && sd.First == "" && sd.Last == "" && len(sd.References) == 0
}

// Restore puts a saved draft back into Compose (at start-up: the
// prompt and files the user left, so quitting loses nothing they typed).
// The settings stay as they are; the files are read again in the
// background. It is not an undoable replacement.
func (c Compose) Restore(sd SavedDraft) {
	file := func(p string) Media {
		if p == "" {
			return Media{}
		}
		return probing(p)
	}
	c.s.mu.Lock()
	d := c.s.draft.Clone()
	d.Prompt, d.First, d.Last, d.KeepLabels = sd.Prompt, file(sd.First), file(sd.Last), !sd.FreeLabels
	d.References = nil
	for _, r := range sd.References {
		if r.Path == "" {
			continue
		}
		c.s.nextRefID++
		ref := Reference{ID: c.s.nextRefID, Media: file(r.Path), Silent: r.Silent}
		if r.Sound != "" {
			ref.Sound = Media{Path: r.Sound, Kind: media.KindAudio, State: MediaProbing}
		}
		d.References = append(d.References, ref)
	}
	c.s.draft = d
	c.s.afterEditLocked(d) // the labels were in step when it was saved
	c.s.mu.Unlock()
	c.s.afterEdit()
}
