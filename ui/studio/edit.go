package studio

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"h3studio/engine"
	"h3studio/engine/media"
	"h3studio/resources"
)

// Compose is the draft being edited in the Compose panel: its prompt
// (templates, examples, the label lines kept in step), keyframe slots,
// ordered references, LoRAs and settings, the files dropped on it, and its
// undo/redo history. Each edit changes the draft under the Studio's lock,
// records it for Undo, and schedules whatever background work follows
// (reading dropped files, planning). The draft lives in the Studio
// (Snapshot.Draft) because the queue, the planner and the library read it
// too; Compose is the handle on it (Studio.Compose).
type Compose struct{ s *Studio }

// Compose returns the draft being edited.
func (s *Studio) Compose() Compose { return Compose{s} }

// Slot names a keyframe slot.
type Slot uint8

// Keyframe slots.
const (
	FirstSlot Slot = iota + 1
	LastSlot
)

func (s *Studio) slotLocked(w Slot) *Media {
	if w == LastSlot {
		return &s.draft.Last
	}
	return &s.draft.First
}

// editDraft applies fn to the draft, then keeps labels in step, replans and
// updates the watched files.
func (s *Studio) editDraft(fn func(d *Draft)) {
	s.mu.Lock()
	before := s.draft.Clone()
	fn(&s.draft)
	s.afterEditLocked(before)
	s.mu.Unlock()
	s.afterEdit()
}

func (s *Studio) afterEditLocked(before Draft) {
	d := &s.draft
	s.boundPromptLocked(d)
	if d.KeepLabels {
		d.Prompt = s.renumber(d.Prompt, before, *d)
		d.Prompt = s.builder.SyncAlignment(d.Prompt, !d.First.Empty(), !d.Last.Empty(), d.Settings.Frames)
	}
	s.recordLocked(before)
	s.draftVer++
	s.changedLocked()
	s.schedulePlanLocked()
	s.scheduleProbesLocked()
}

func (s *Studio) afterEdit() {
	s.notify()
	s.updateWatches()
}

// renumber keeps reference labels in a prompt in step with the list:
// labels of moved references are renamed, the bare label lines of removed
// ones dropped (their mentions, and the label of a line the user wrote
// about them, become "[removed: file]": prose is never deleted), and a
// Ref2VA prompt gets a line for every new reference.
func (s *Studio) renumber(prompt string, before, after Draft) string {
	oldL, newL := Labels(before.References), Labels(after.References)
	newByID := map[int]string{}
	for i, r := range after.References {
		newByID[r.ID] = newL[i]
	}
	from := map[string]string{}
	var removed []string
	for i, r := range before.References {
		if nl, ok := newByID[r.ID]; ok {
			if nl != oldL[i] {
				from[oldL[i]] = nl
			}
			continue
		}
		removed = append(removed, oldL[i])
		from[oldL[i]] = "\x00" + r.Media.Name()
	}
	if len(removed) > 0 {
		prompt = s.builder.DropLabelLines(prompt, removed)
	}
	prompt = Relabel(prompt, from)
	prompt = strings.NewReplacer(removedMarks(from)...).Replace(prompt)
	return s.builder.SyncLabels(prompt, newL)
}

func removedMarks(from map[string]string) []string {
	var r []string
	for _, to := range from {
		if strings.HasPrefix(to, "\x00") {
			r = append(r, "<"+to+">", "[removed: "+to[1:]+"]")
		}
	}
	return r
}

// DropLabelLines removes the bare label lines (a label with nothing the
// user wrote after it) of the given labels from a Ref2VA prompt's label
// sections. A line that describes the reference keeps its text: renumber
// marks its label "[removed: file]", and Undo brings the reference back.
func (b *Builder) DropLabelLines(prompt string, labels []string) string {
	if b.Template(prompt) != &b.Ref {
		return prompt
	}
	gone := map[string]bool{}
	for _, l := range labels {
		gone[l] = true
	}
	sec := Split(prompt, b.Ref)
	for _, f := range b.Ref.Fields {
		if !f.Labels {
			continue
		}
		var keep []string
		for _, line := range strings.Split(sec.Fields[f.Name], "\n") {
			if l, ok := leadingLabel(line); ok && gone[l] && !hasProse(line, f.LabelLine, f.AudioLabelLine) {
				continue // a bare label line the studio wrote
			}
			keep = append(keep, line)
		}
		sec.Fields[f.Name] = strings.Join(keep, "\n")
	}
	return Join(sec, b.Ref)
}

// hasProse reports whether a label line holds text after its label other
// than a starter the studio writes there (starters).
func hasProse(line string, starters ...string) bool {
	t := strings.TrimSpace(line)
	if m := refTagRE.FindStringIndex(t); m != nil && m[0] == 0 {
		t = t[m[1]:]
	}
	bare := func(s string) string { return strings.Trim(s, " \t:-–—,.;") }
	t = bare(t)
	for _, st := range starters {
		if t == bare(st) {
			return false
		}
	}
	return t != ""
}

// SetPrompt replaces the prompt text. A text over MaxPromptRunes is cut
// there, its whole text kept in the library's CutPromptFolder, and a notice
// says so.
func (c Compose) SetPrompt(p string) {
	c.s.mu.Lock()
	if bounded, cut := boundPrompt(p); cut {
		c.s.keepCutPromptLocked(p)
		p = bounded
	}
	if c.s.draft.Prompt == p {
		c.s.mu.Unlock()
		return
	}
	before := c.s.draft.Clone()
	c.s.draft.Prompt = p
	c.s.recordLocked(before)
	c.s.draftVer++
	c.s.changedLocked()
	c.s.schedulePlanLocked()
	c.s.mu.Unlock()
	c.s.notify()
}

// SetKeepLabels turns label and alignment-line upkeep on or off.
func (c Compose) SetKeepLabels(on bool) {
	c.s.editDraft(func(d *Draft) { d.KeepLabels = on })
}

// SetSettings replaces the settings (lengths are aligned to 17n+5).
func (c Compose) SetSettings(st Settings) {
	st.Frames = AlignFrames(st.Frames)
	// Settings restored from disk carry the LoRA library without the
	// files' summaries: read their headers again (a file gone since shows
	// its problem and is switched off).
	st.LoRAs = append([]LoRAChoice(nil), st.LoRAs...)
	for i, l := range st.LoRAs {
		if l.Summary == "" && l.Problem == "" {
			st.LoRAs[i] = inspectLoRA(l)
			if st.LoRAs[i].Problem != "" {
				st.LoRAs[i].On = false
			}
		}
	}
	c.s.editDraft(func(d *Draft) { d.Settings = st })
}

// SetQuality selects a quality preset.
func (c Compose) SetQuality(p engine.Preset) {
	c.s.editDraft(func(d *Draft) { d.Settings = d.Settings.WithQuality(p) })
}

// SetCanvas selects an output canvas preset.
func (c Compose) SetCanvas(id string) {
	c.s.editDraft(func(d *Draft) { d.Settings = d.Settings.WithCanvas(id, d.Settings.Width, d.Settings.Height) })
}

// SetFrames sets the length, aligned up to the next legal length.
func (c Compose) SetFrames(n int) {
	c.s.editDraft(func(d *Draft) { d.Settings.Frames = AlignFrames(n) })
}

// SetSeconds sets the length from seconds (5 s → 124 frames, 5.17 s).
func (c Compose) SetSeconds(sec float64) { c.SetFrames(FramesForSeconds(sec)) }

// SetSeed sets the seed.
func (c Compose) SetSeed(seed uint64) { c.s.editDraft(func(d *Draft) { d.Settings.Seed = seed }) }

// RollSeed picks a random seed (the dice button).
func (c Compose) RollSeed() uint64 {
	seed := c.s.opts.Rand()
	c.SetSeed(seed)
	return seed
}

// SetMemory selects the memory mode.
func (c Compose) SetMemory(m engine.MemoryMode) {
	c.s.editDraft(func(d *Draft) { d.Settings.Memory = m })
}

// SetSpeed sets the Advanced speed controls (the preset stays named; the
// settings then report Custom).
func (c Compose) SetSpeed(sp Speed) { c.s.editDraft(func(d *Draft) { d.Settings.Speed = sp }) }

// SetRenderSize sets an explicit internal canvas (0, 0 for the preset's).
func (c Compose) SetRenderSize(w, h int) {
	c.s.editDraft(func(d *Draft) { d.Settings.RenderWidth, d.Settings.RenderHeight = w, h })
}

// SetPreviewFrames turns per-step preview frames on or off.
func (c Compose) SetPreviewFrames(on bool) { c.s.editDraft(func(d *Draft) { d.Settings.Preview = on }) }

// guessKind is the kind a file's name suggests, before it is read.
func guessKind(path string) media.Kind {
	ext := strings.ToLower(filepath.Ext(path))
	switch {
	case videoExts[ext]:
		return media.KindVideo
	case audioExts[ext]:
		return media.KindAudio
	}
	return media.KindImage
}

func probing(path string) Media {
	return Media{Path: path, Kind: guessKind(path), State: MediaProbing}
}

// SetFrame puts a picture into a keyframe slot (it is read in the
// background; a file that turns out unusable is taken out again with a
// notice).
func (c Compose) SetFrame(w Slot, path string) {
	c.s.editDraft(func(d *Draft) { *c.s.slotLocked(w) = probing(path) })
}

// ClearFrame empties a keyframe slot.
func (c Compose) ClearFrame(w Slot) { c.s.editDraft(func(d *Draft) { *c.s.slotLocked(w) = Media{} }) }

// SwapFrames exchanges the first and last frames.
func (c Compose) SwapFrames() { c.s.editDraft(func(d *Draft) { d.First, d.Last = d.Last, d.First }) }

// AddReferences appends files to the reference list, in order.
func (c Compose) AddReferences(paths []string) {
	c.s.editDraft(func(d *Draft) {
		for _, p := range paths {
			c.s.nextRefID++
			d.References = append(d.References, Reference{ID: c.s.nextRefID, Media: probing(p)})
		}
	})
}

// InsertReferences inserts files into the reference list at index at.
func (c Compose) InsertReferences(at int, paths []string) {
	c.s.editDraft(func(d *Draft) {
		at = max(0, min(at, len(d.References)))
		var add []Reference
		for _, p := range paths {
			c.s.nextRefID++
			add = append(add, Reference{ID: c.s.nextRefID, Media: probing(p)})
		}
		d.References = append(d.References[:at:at], append(add, d.References[at:]...)...)
	})
}

func refIndex(d *Draft, id int) int {
	for i, r := range d.References {
		if r.ID == id {
			return i
		}
	}
	return -1
}

// RemoveReference takes a reference out of the list.
func (c Compose) RemoveReference(id int) {
	c.s.editDraft(func(d *Draft) {
		if i := refIndex(d, id); i >= 0 {
			d.References = append(d.References[:i:i], d.References[i+1:]...)
		}
	})
}

// ClearReferences empties the reference list.
func (c Compose) ClearReferences() { c.s.editDraft(func(d *Draft) { d.References = nil }) }

// MoveReference moves a reference to index to; labels are renumbered.
func (c Compose) MoveReference(id, to int) {
	c.s.editDraft(func(d *Draft) {
		i := refIndex(d, id)
		if i < 0 {
			return
		}
		to = max(0, min(to, len(d.References)-1))
		r := d.References[i]
		rest := append(d.References[:i:i], d.References[i+1:]...)
		d.References = append(rest[:to:to], append([]Reference{r}, rest[to:]...)...)
	})
}

// ReplaceReference swaps a reference's file, keeping its place.
func (c Compose) ReplaceReference(id int, path string) {
	c.s.editDraft(func(d *Draft) {
		if i := refIndex(d, id); i >= 0 {
			d.References[i].Media = probing(path)
			d.References[i].Sound = Media{}
		}
	})
}

// SetSilent chooses whether a video reference brings its own sound.
func (c Compose) SetSilent(id int, silent bool) {
	c.s.editDraft(func(d *Draft) {
		if i := refIndex(d, id); i >= 0 {
			d.References[i].Silent = silent
		}
	})
}

// PairSound pairs a separate sound file with a video reference ("" to
// unpair).
func (c Compose) PairSound(id int, path string) {
	c.s.editDraft(func(d *Draft) {
		if i := refIndex(d, id); i >= 0 {
			if path == "" {
				d.References[i].Sound = Media{}
			} else {
				d.References[i].Sound = Media{Path: path, Kind: media.KindAudio, State: MediaProbing}
			}
		}
	})
}

// DropTarget is where files were dropped.
type DropTarget uint8

// Drop targets.
const (
	DropReferences DropTarget = iota // the reference list, or anywhere else in the window
	DropFirst
	DropLast
)

// Drop handles files dropped on the window: a picture dropped on a keyframe
// slot goes there; everything else joins the reference list in the order
// given. Files are checked in the background; folders and unknown types are
// refused with a notice naming them. It returns what was refused at once
// (folders, missing files).
func (c Compose) Drop(paths []string, target DropTarget) []string {
	return c.drop(paths, target, -1)
}

// DropReferencesAt is Drop on the reference list between two rows: the files
// join the list at index at (0 is the top; at or beyond the end appends).
func (c Compose) DropReferencesAt(paths []string, at int) []string {
	return c.drop(paths, DropReferences, max(at, 0))
}

// drop is Drop; at ≥ 0 places references at that index, −1 appends them.
func (c Compose) drop(paths []string, target DropTarget, at int) []string {
	var refused, ok []string
	for _, p := range paths {
		st, err := os.Stat(p)
		switch {
		case err != nil:
			refused = append(refused, fmt.Sprintf("%s can't be opened (%v).", filepath.Base(p), errorsCause(err)))
		case st.IsDir():
			refused = append(refused, fmt.Sprintf("%s is a folder; drop the files inside it instead.", filepath.Base(p)))
		default:
			ok = append(ok, p)
		}
	}
	for _, r := range refused {
		c.s.Notify(Warn, r)
	}
	var loras []string
	ok = slices.DeleteFunc(ok, func(p string) bool {
		if IsLoRAFile(p) {
			loras = append(loras, p)
			return true
		}
		return false
	})
	if len(loras) > 0 {
		c.AddLoRAs(loras) // LoRA files join the LoRA library wherever they land
	}
	if len(ok) == 0 {
		return refused
	}
	switch target {
	case DropFirst, DropLast:
		slot := FirstSlot
		if target == DropLast {
			slot = LastSlot
		}
		c.SetFrame(slot, ok[0])
		if len(ok) > 1 {
			c.s.Notify(Info, fmt.Sprintf("A frame slot holds one picture; %d other file(s) were not used.", len(ok)-1))
		}
	default:
		if at < 0 {
			c.AddReferences(ok)
		} else {
			c.InsertReferences(at, ok)
		}
	}
	return refused
}

func errorsCause(err error) string {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err.Error()
	}
	return err.Error()
}

// ApplyTemplate lays the prompt out in a template's structure (the user's
// text is kept as the description), then fills the label and alignment
// lines.
func (c Compose) ApplyTemplate(name string) {
	c.s.mu.Lock()
	var t resources.Template
	switch name {
	case "ref2va":
		t = c.s.builder.Ref
	default:
		t = c.s.builder.Base
	}
	before := c.s.draft.Clone()
	c.s.draft.Prompt = Structure(c.s.draft.Prompt, t)
	c.s.draft.KeepLabels = true
	c.s.afterEditLocked(before)
	c.s.mu.Unlock()
	c.s.afterEdit()
}

// ApplyExample replaces the prompt with an example (Undo restores it).
func (c Compose) ApplyExample(i int) {
	if i < 0 || i >= len(c.s.builder.Examples) {
		return
	}
	c.s.mu.Lock()
	before := c.s.draft.Clone()
	c.s.draft.Prompt = c.s.builder.Examples[i].Prompt
	c.s.afterEditLocked(before)
	c.s.noticeLocked(Info, "The prompt now holds the example “"+c.s.builder.Examples[i].Title+"”.", "Undo")
	c.s.mu.Unlock()
	c.s.afterEdit()
}

// replaceDraft swaps in a whole new draft, keeping the old one for Undo.
func (s *Studio) replaceDraft(d Draft, msg string) {
	s.mu.Lock()
	before := s.draft.Clone()
	s.boundPromptLocked(&d) // before it becomes a step of the history
	for i := range d.References {
		if d.References[i].ID == 0 {
			s.nextRefID++
			d.References[i].ID = s.nextRefID
		}
	}
	s.draft = d
	s.recordLocked(before)
	s.afterEditLocked(d) // labels are already in step
	if msg != "" {
		s.noticeLocked(Info, msg, "Undo")
	}
	s.mu.Unlock()
	s.afterEdit()
}

// forEachMediaLocked visits every file of the draft.
func (s *Studio) forEachMediaLocked(fn func(m *Media)) {
	fn(&s.draft.First)
	fn(&s.draft.Last)
	for i := range s.draft.References {
		fn(&s.draft.References[i].Media)
		fn(&s.draft.References[i].Sound)
	}
}

// scheduleProbesLocked starts reading every file still in MediaProbing.
func (s *Studio) scheduleProbesLocked() {
	s.forEachMediaLocked(func(m *Media) {
		if m.Empty() || m.State != MediaProbing {
			return
		}
		if _, busy := s.probing[m.Path]; busy {
			return
		}
		s.probing[m.Path] = m.Gen
		s.probeQueue = append(s.probeQueue, m.Path)
	})
	s.startProbesLocked()
}

// maxProbes bounds the files read at once: each decodes a whole picture
// (up to 100 megapixels) or a clip's sound, and a drop of a Finder
// selection can hold dozens.
const maxProbes = 2

// startProbesLocked starts queued probes while fewer than maxProbes run.
func (s *Studio) startProbesLocked() {
	for s.probeActive < maxProbes && len(s.probeQueue) > 0 {
		path := s.probeQueue[0]
		s.probeQueue = s.probeQueue[1:]
		s.probeActive++
		s.opts.Go(func() {
			s.probe(path, false)
			s.mu.Lock()
			s.probeActive--
			s.startProbesLocked()
			s.mu.Unlock()
		})
	}
}

// probe reads a file and publishes the result to every place the draft
// uses it. reload marks a change on disk.
func (s *Studio) probe(path string, reload bool) {
	kind, err := Classify(path)
	var res Media
	if err != nil {
		res = Media{Path: path, Kind: guessKind(path), State: MediaBroken, Note: err.Error()}
		if _, serr := os.Stat(path); serr != nil {
			res.State, res.Note = MediaMissing, "the file is gone"
		}
	} else {
		res = Probe(s.ctx, path, kind, s.opts.Opener)
	}
	s.mu.Lock()
	delete(s.probing, path)
	found, changed := false, false
	s.forEachMediaLocked(func(m *Media) {
		if m.Path != path {
			return
		}
		found = true
		if reload && m.Hash != "" && res.Hash != "" && m.Hash != res.Hash {
			changed = true
		}
		gen := m.Gen
		if reload {
			gen++
		}
		*m = res
		m.Gen = gen
	})
	// A file that is not usable at all in a keyframe slot (a sound, a folder
	// …) leaves the slot with a notice; in the reference list it stays,
	// marked, so the user sees which one it was.
	for _, sl := range []*Media{&s.draft.First, &s.draft.Last} {
		if sl.Path == path && err != nil && errorsIsUnsupported(err) {
			*sl = Media{}
		}
	}
	if found {
		if changed {
			s.noticeLocked(Info, res.Name()+" changed on disk and was read again.", "")
		}
		if err != nil && errorsIsUnsupported(err) {
			s.noticeLocked(Warn, err.Error(), "")
		} else if res.State == MediaBroken && !reload {
			s.noticeLocked(Warn, res.Name()+" can't be used: "+res.Note, "")
		}
		s.draftVer++
		s.changedLocked()
		s.schedulePlanLocked()
	}
	s.mu.Unlock()
	s.notify()
}

func errorsIsUnsupported(err error) bool {
	return err != nil && strings.Contains(err.Error(), ErrUnsupported.Error())
}

// fileChanged is the watcher's callback for an input file.
func (s *Studio) fileChanged(path string) {
	if _, err := os.Stat(path); err != nil {
		s.mu.Lock()
		found := false
		s.forEachMediaLocked(func(m *Media) {
			if m.Path == path && m.State != MediaMissing {
				found = true
				m.State, m.Note = MediaMissing, "the file was moved or deleted"
			}
		})
		if found {
			s.noticeLocked(Warn, filepath.Base(path)+" was moved or deleted. Drop it again, or remove it.", "")
			s.draftVer++
			s.changedLocked()
			s.schedulePlanLocked()
		}
		s.mu.Unlock()
		s.notify()
		return
	}
	s.probe(path, true)
}

// updateWatches follows the draft's files.
func (s *Studio) updateWatches() {
	if s.watch == nil {
		return
	}
	s.mu.Lock()
	var paths []string
	s.forEachMediaLocked(func(m *Media) {
		if !m.Empty() {
			paths = append(paths, m.Path)
		}
	})
	s.mu.Unlock()
	s.watch.setFiles(paths)
}

// TidyPrompt brings the prompt's label lines and alignment line in step
// with the slots (when KeepLabels is on), as every slot change does.
func (c Compose) TidyPrompt() { c.s.editDraft(func(*Draft) {}) }

// SetLibrary switches to another library folder (created if needed) and
// reads it.
func (s *Studio) SetLibrary(dir string) error {
	lib, err := OpenLibrary(dir, s.library().trash)
	if err != nil {
		return err
	}
	s.update(func() {
		s.lib = lib
		s.takes = nil
		s.libLoaded = false
		if s.viewer.TakeID != "" {
			s.viewerSeq++
			s.viewer = Viewer{}
		}
	})
	if s.libWatch != nil {
		s.libWatch.follow(lib.Dir)
	}
	s.opts.Go(s.loadLibrary)
	return nil
}
