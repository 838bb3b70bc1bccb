package studio

import (
	"context"
	"errors"
	"fmt"
	"image"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"h3studio/engine/media"
	"h3studio/ui/studio/sequence"
)

// SequencesDir is the library folder that holds the sequences, one folder
// per sequence with its sequence.json (and the frames "Extend →" wrote).
// It is not a take folder, so the library listing passes over it.
const SequencesDir = "Sequences"

// Timeline is the studio's open sequence: the editor (undo, redo, atomic
// saves), the viewer clips of its takes (loaded in the background), which
// sources are missing (followed with fsnotify), a running export, and the
// takes "Extend →" is waiting for. Its state reaches the window through the
// studio's change notifications and View. It is safe for concurrent use.
type Timeline struct {
	s *Studio

	mu        sync.Mutex
	ed        *sequence.Editor
	clips     map[string]*clipEntry // by resolved source path
	missing   map[int]string        // clip index → why its source is missing
	export    *SequenceExport
	cancelExp context.CancelFunc
	extends   []extendWait
	watch     *fsnotify.Watcher
	watched   map[string]bool
	recheck   *debouncer // refreshes once the watched files are quiet
	unsub     func()
	// the extra sound track, decoded at 32 kHz stereo for playback
	extraPath string
	extra     media.Audio
	names     []string // the library's sequences, reread when one is opened or made
}

type clipEntry struct {
	clip    *Clip
	loading bool
	err     string
}

// extendWait is an "Extend →" whose take has not arrived yet: the take whose
// first frame is first goes after the clip at index after.
type extendWait struct {
	first  string
	source string // the clip's source, to find it again after edits
	after  int
}

// SequenceExport is a running sequence export.
type SequenceExport struct {
	Dst         string
	Done, Total int
}

// TimelineItem is one clip as the timeline shows it.
type TimelineItem struct {
	Title string
	// Missing says why the clip's source is not there ("" when it is):
	// the timeline shows a named gap.
	Missing string
	Clip    *Clip // the viewer clip; nil while loading, missing or unreadable
	Err     string
}

// TimelineView is an immutable view of the timeline.
type TimelineView struct {
	Name, Path string
	Names      []string // every sequence in the library
	Seq        sequence.Sequence
	Spans      []sequence.Span
	Total      int // frames
	Items      []TimelineItem
	CanUndo    bool
	CanRedo    bool
	// Edits counts the sequence's changes, undos and redos (it changes
	// when the user edits the sequence).
	Edits  uint64
	Export *SequenceExport
}

// NewTimeline opens the library's most recently changed sequence (or an
// empty "Sequence 1", saved on its first edit) and follows its sources.
func NewTimeline(s *Studio) *Timeline {
	t := &Timeline{s: s, clips: map[string]*clipEntry{}, missing: map[int]string{}, watched: map[string]bool{}}
	// A take moved to the Trash sends several events: recheck the sources
	// once things are quiet.
	t.recheck = newDebouncer(150*time.Millisecond, func() {
		t.refresh()
		t.changed()
	})
	if w, err := fsnotify.NewWatcher(); err == nil {
		t.watch = w
		go t.watchLoop()
	}
	names := t.Names()
	name := "Sequence 1"
	if len(names) > 0 {
		name = t.newest(names)
	}
	t.open(name)
	t.unsub = s.Subscribe(t.takesChanged)
	return t
}

// Close stops following files and cancels a running export.
func (t *Timeline) Close() {
	t.mu.Lock()
	if t.cancelExp != nil {
		t.cancelExp()
	}
	t.recheck.stop()
	w := t.watch
	t.mu.Unlock()
	if t.unsub != nil {
		t.unsub()
	}
	if w != nil {
		w.Close()
	}
}

func (t *Timeline) dir() string { return filepath.Join(t.s.library().Dir, SequencesDir) }

// SequencePath is the file of the sequence called name.
func (t *Timeline) SequencePath(name string) string {
	return filepath.Join(t.dir(), name, sequence.File)
}

// Names lists the library's sequences, by name.
func (t *Timeline) Names() []string {
	ents, _ := os.ReadDir(t.dir())
	var out []string
	for _, e := range ents {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			if _, err := os.Stat(filepath.Join(t.dir(), e.Name(), sequence.File)); err == nil {
				out = append(out, e.Name())
			}
		}
	}
	sort.Strings(out)
	return out
}

func (t *Timeline) newest(names []string) string {
	best, bt := names[0], time.Time{}
	for _, n := range names {
		if st, err := os.Stat(t.SequencePath(n)); err == nil && st.ModTime().After(bt) {
			best, bt = n, st.ModTime()
		}
	}
	return best
}

// Open switches to the sequence called name (creating it on its first
// edit).
func (t *Timeline) Open(name string) { t.open(name); t.changed() }

// New starts a new empty sequence with the next free "Sequence N" name.
func (t *Timeline) New() string {
	have := map[string]bool{}
	for _, n := range t.Names() {
		have[n] = true
	}
	name := ""
	for i := 1; ; i++ {
		if name = fmt.Sprintf("Sequence %d", i); !have[name] {
			break
		}
	}
	t.open(name)
	// saved at once so that it is listed
	t.mu.Lock()
	p := t.ed.Path()
	t.mu.Unlock()
	if err := sequence.Save(p, sequence.Sequence{Version: sequence.Version, Name: name}); err != nil {
		t.s.Notify(Fail, "The sequence can't be saved: "+err.Error())
	}
	names := t.Names()
	t.mu.Lock()
	t.names = names
	t.mu.Unlock()
	t.changed()
	return name
}

func (t *Timeline) open(name string) {
	p := t.SequencePath(name)
	ed, err := sequence.Open(p)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			// a damaged file is left as it is (renamed aside on the
			// first edit would lose it): edit a fresh sequence beside it
			t.s.Notify(Fail, "The sequence “"+name+"” can't be read: "+err.Error())
			p = filepath.Join(t.dir(), name+" (recovered)", sequence.File)
		}
		ed = sequence.NewEditor(p, sequence.Sequence{Version: sequence.Version, Name: name})
	}
	names := t.Names()
	t.mu.Lock()
	t.ed = ed
	t.names = names
	t.mu.Unlock()
	t.refresh()
}

// Editor is the open sequence's editor.
func (t *Timeline) Editor() *sequence.Editor {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.ed
}

func (t *Timeline) changed() { t.s.update(func() {}) }

// edit runs an editor change, reports a failed save as a notice (the edit
// is kept in memory), then refreshes.
func (t *Timeline) edit(fn func(e *sequence.Editor) error) {
	if err := fn(t.Editor()); err != nil {
		t.s.Notify(Fail, "The sequence: "+err.Error())
	}
	t.refresh()
	t.changed()
}

// AddTake puts a library take on the timeline at index at (−1: the end),
// whole.
func (t *Timeline) AddTake(id string, at int) {
	tk, ok := t.s.take(id)
	if !ok {
		return
	}
	t.addSource(tk.Dir, tk.Meta.Title, tk.Meta.Frames, at)
}

// AddFile puts a video file (or a take folder) on the timeline at index at
// (−1: the end).
func (t *Timeline) AddFile(path string, at int) {
	title := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		if m, err := readMeta(path); err == nil {
			t.addSource(path, m.Title, m.Frames, at)
			return
		}
	}
	t.addSource(path, title, 0, at)
}

func (t *Timeline) addSource(path, title string, frames, at int) {
	ed := t.Editor()
	src := sequence.RelSource(ed.Path(), path)
	if frames <= 0 && t.s.opts.Opener != nil {
		if f, err := sequence.Locate(ed.Path(), 0, src); err == nil {
			if s, err := t.s.opts.Opener(f.Video); err == nil {
				frames = sequence.SourceFrames(s.Info())
				s.Close()
			}
		}
	}
	if frames > 0 {
		ed.SetLength(src, frames)
	}
	if at < 0 {
		at = len(ed.Sequence().Clips)
	}
	t.edit(func(e *sequence.Editor) error {
		return e.Insert(at, sequence.Clip{Source: src, Title: title, Transition: sequence.Transition{Kind: sequence.Cut}})
	})
}

// Move, Remove, Trim, SetTransition and SetMute edit the sequence (one undo
// step each); Undo and Redo walk the history.
func (t *Timeline) Move(from, to int) {
	t.edit(func(e *sequence.Editor) error { return e.Move(from, to) })
}
func (t *Timeline) Remove(i int) { t.edit(func(e *sequence.Editor) error { return e.Remove(i) }) }
func (t *Timeline) Trim(i int, in, out float64) {
	t.edit(func(e *sequence.Editor) error { return e.Trim(i, in, out) })
}
func (t *Timeline) SetTransition(i int, kind string, seconds float64) {
	t.edit(func(e *sequence.Editor) error { return e.SetTransition(i, kind, seconds) })
}
func (t *Timeline) SetMute(i int, mute bool) {
	t.edit(func(e *sequence.Editor) error { return e.SetMute(i, mute) })
}

// SetSound sets the extra sound track (path "" removes it).
func (t *Timeline) SetSound(path string, gainDB float64) {
	t.edit(func(e *sequence.Editor) error {
		if path == "" {
			return e.SetAudio(nil)
		}
		return e.SetAudio(&sequence.Track{Source: sequence.RelSource(e.Path(), path), GainDB: gainDB})
	})
}
func (t *Timeline) Undo() { t.edit(func(e *sequence.Editor) error { return e.Undo() }) }
func (t *Timeline) Redo() { t.edit(func(e *sequence.Editor) error { return e.Redo() }) }

// View is the timeline's current state.
func (t *Timeline) View() TimelineView {
	t.mu.Lock()
	defer t.mu.Unlock()
	ed := t.ed
	seq := ed.Sequence()
	spans, total := ed.Layout()
	v := TimelineView{Path: ed.Path(), Name: filepath.Base(filepath.Dir(ed.Path())), Seq: seq, Spans: spans, Total: total,
		CanUndo: ed.CanUndo(), CanRedo: ed.CanRedo(), Edits: ed.Edits()}
	if t.export != nil {
		e := *t.export
		v.Export = &e
	}
	for i, c := range seq.Clips {
		it := TimelineItem{Title: c.Title, Missing: t.missing[i]}
		if it.Title == "" {
			it.Title = filepath.Base(c.Source)
		}
		if e := t.clips[sequence.Path(ed.Path(), c.Source)]; e != nil && it.Missing == "" {
			it.Clip, it.Err = e.clip, e.err
		}
		v.Items = append(v.Items, it)
	}
	return v
}

// Snapshot is View with the list of sequences (as last read: when a
// sequence was opened or made).
func (t *Timeline) Snapshot() TimelineView {
	v := t.View()
	t.mu.Lock()
	v.Names = append([]string(nil), t.names...)
	t.mu.Unlock()
	return v
}

// refresh rechecks which sources are missing, starts loading the viewer
// clips of the others, and watches their folders.
func (t *Timeline) refresh() {
	ed := t.Editor()
	seq := ed.Sequence()
	miss := map[int]string{}
	for _, m := range sequence.Missing(ed.Path(), seq) {
		if m.Clip >= 0 {
			miss[m.Clip] = m.Why
		}
	}
	t.mu.Lock()
	t.missing = miss
	var load []string
	for i, c := range seq.Clips {
		p := sequence.Path(ed.Path(), c.Source)
		t.watchLocked(filepath.Dir(p))
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			t.watchLocked(p)
		}
		if _, gone := miss[i]; gone {
			delete(t.clips, p) // reload when it comes back
			continue
		}
		if t.clips[p] == nil {
			t.clips[p] = &clipEntry{loading: true}
			load = append(load, p)
		}
	}
	var extra string
	if seq.Audio != nil {
		extra = sequence.Path(ed.Path(), seq.Audio.Source)
	}
	loadExtra := extra != t.extraPath
	if loadExtra {
		t.extraPath, t.extra = extra, media.Audio{}
	}
	t.mu.Unlock()
	if loadExtra && extra != "" {
		t.s.opts.Go(func() { t.loadExtra(extra) })
	}
	for _, p := range load {
		p := p
		t.s.opts.Go(func() { t.load(p) })
	}
}

func (t *Timeline) watchLocked(dir string) {
	if t.watch == nil || t.watched[dir] {
		return
	}
	if err := t.watch.Add(dir); err == nil {
		t.watched[dir] = true
	}
}

func (t *Timeline) watchLoop() { drainWatch(t.watch, ignoreChmod(t.recheck.poke), t.recheck.poke) }

// loadExtra decodes the extra sound track for playback.
func (t *Timeline) loadExtra(path string) {
	open := t.s.opts.Opener
	if open == nil {
		open = media.DefaultOpener
	}
	var a media.Audio
	src, err := open(path)
	if err == nil {
		a, err = src.Audio(t.s.ctx)
		src.Close()
	}
	if err != nil {
		t.s.Notify(Warn, "The sound track can't be played: "+err.Error())
		return
	}
	t.mu.Lock()
	if t.extraPath == path {
		t.extra = media.Resample(a.Stereo(), media.SampleRate)
	}
	t.mu.Unlock()
	t.changed()
}

// ExtraSound is the extra track's sound for playback (empty while loading
// or when there is none).
func (t *Timeline) ExtraSound() media.Audio {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.extra
}

// Clip is the viewer clip of a take folder or video file at path, loaded
// in the background on first use (nil until it is ready; a change
// notification follows). The seed grid and the A/B view use it.
func (t *Timeline) Clip(path string) *Clip {
	t.mu.Lock()
	e := t.clips[path]
	if e == nil {
		t.clips[path] = &clipEntry{loading: true}
	}
	t.mu.Unlock()
	if e == nil {
		t.s.opts.Go(func() { t.load(path) })
		return nil
	}
	return e.clip
}

// load reads a source's viewer clip: a take folder's viewer frames and
// sound, or a video file decoded at viewer size.
func (t *Timeline) load(path string) {
	c, err := t.loadClip(path)
	t.mu.Lock()
	e := t.clips[path]
	if e != nil {
		e.loading = false
		e.clip = c
		if err != nil {
			e.err = err.Error()
		}
	}
	ed := t.ed
	t.mu.Unlock()
	if c != nil {
		for _, cl := range ed.Sequence().Clips {
			if sequence.Path(ed.Path(), cl.Source) == path && ed.Length(cl.Source) == 0 {
				ed.SetLength(cl.Source, c.Len())
			}
		}
	}
	t.changed()
}

func (t *Timeline) loadClip(path string) (*Clip, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		tk := Take{ID: filepath.Base(path), Dir: path}
		if m, err := readMeta(path); err == nil {
			tk.Meta = m
		}
		if tk.Has(ViewerFile) {
			return t.s.library().LoadClip(tk)
		}
		path = filepath.Join(path, VideoFile)
	}
	src, err := t.s.openVideo(path)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	var frames [][]byte
	inf := src.Info()
	err = src.Frames(t.s.ctx, 0, func(i int, f *image.RGBA) error {
		b, err := viewerFrame(f)
		if err == nil {
			frames = append(frames, b)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if len(frames) == 0 {
		return nil, errors.New("the video has no frames")
	}
	if fps := inf.FPS; fps > 0 && fps != media.FPS {
		slots := media.Slots(len(frames), fps)
		re := make([][]byte, len(slots))
		for i, k := range slots {
			re[i] = frames[k]
		}
		frames = re
	}
	var a media.Audio
	if inf.HasAudio {
		if s, err := src.Audio(t.s.ctx); err == nil {
			a = media.Resample(s.Stereo(), media.SampleRate)
		}
	}
	return NewClip(inf.Width, inf.Height, frames, a), nil
}

// Export renders the sequence to dst in the background (the same code as
// `h3studio sequence export`), with progress in the view and a notice at
// the end. A failed or cancelled export leaves nothing at dst.
func (t *Timeline) Export(dst string) {
	t.mu.Lock()
	if t.export != nil {
		t.mu.Unlock()
		t.s.Notify(Warn, "A sequence export is already running.")
		return
	}
	ed := t.ed
	ctx, cancel := context.WithCancel(t.s.ctx)
	t.export, t.cancelExp = &SequenceExport{Dst: dst}, cancel
	t.mu.Unlock()
	t.changed()
	t.s.opts.Go(func() {
		last := time.Time{}
		o := media.ExportOptions{Progress: func(done, total int) {
			t.mu.Lock()
			if t.export != nil {
				t.export.Done, t.export.Total = done, total
			}
			t.mu.Unlock()
			if now := time.Now(); now.Sub(last) > 100*time.Millisecond || done == total {
				last = now
				t.changed()
			}
		}}
		// media's own opener (the CLI's): the platform's composition stays in
		// play on macOS
		err := sequence.Export(ctx, ed.Path(), ed.Sequence(), dst, o)
		t.mu.Lock()
		t.export, t.cancelExp = nil, nil
		t.mu.Unlock()
		cancel()
		switch {
		case err == nil:
			t.s.Notify(Info, "Exported the sequence to "+filepath.Base(dst)+".")
		case errors.Is(err, context.Canceled):
			removeEmpty(dst)
			t.s.Notify(Info, "The sequence export was cancelled; nothing was written.")
		case errors.Is(err, ErrDiskFull):
			removeEmpty(dst)
			t.s.Notify(Fail, "The sequence export failed: the disk is full. Nothing partial was left behind.")
		default:
			removeEmpty(dst)
			t.s.Notify(Fail, "The sequence export failed: "+err.Error())
		}
	})
}

// CancelExport stops a running export.
func (t *Timeline) CancelExport() {
	t.mu.Lock()
	if t.cancelExp != nil {
		t.cancelExp()
	}
	t.mu.Unlock()
}

// Extend continues clip i from its frame at source frame f (−1: its out
// point): that frame becomes Compose's first frame (saved as a PNG in the
// sequence's folder, so the take can name it), with, if asReference, the
// clip's video as a reference; the prompt and canvas come from the clip's
// take when it is one. The take made from this draft goes after clip i.
func (t *Timeline) Extend(i, f int, asReference bool) {
	ed := t.Editor()
	seq := ed.Sequence()
	if i < 0 || i >= len(seq.Clips) {
		return
	}
	c := seq.Clips[i]
	files, err := sequence.Locate(ed.Path(), i, c.Source)
	if err != nil {
		t.s.Notify(Fail, "Can't extend: "+err.Error())
		return
	}
	if f < 0 {
		f = c.OutFrame() - 1
	}
	f = max(f, c.InFrame())
	t.s.opts.Go(func() {
		img, err := t.sourceFrame(files.Video, f)
		if err != nil {
			t.s.Notify(Fail, "Can't extend “"+c.Title+"”: its frame can't be read: "+err.Error())
			return
		}
		dir := filepath.Join(filepath.Dir(ed.Path()), "frames")
		name := fmt.Sprintf("extend-%s-%05d.png", safeName(filepath.Base(strings.TrimSuffix(sequence.Path(ed.Path(), c.Source), "/"))), f+1)
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(dir, 0o755); err == nil {
			err = writePNGAtomic(p, img)
		}
		if err != nil {
			t.s.Notify(Fail, "Can't extend: the frame can't be saved: "+err.Error())
			return
		}
		t.mu.Lock()
		t.extends = append(t.extends, extendWait{first: p, source: c.Source, after: i})
		t.mu.Unlock()
		t.s.mu.Lock()
		d := t.s.draft.Clone()
		t.s.mu.Unlock()
		src := sequence.Path(ed.Path(), c.Source)
		if m, err := readMeta(src); err == nil {
			d.Prompt = m.Prompt
			d.Settings = d.Settings.WithCanvas(m.Settings.Canvas, m.Width, m.Height)
		}
		d.References = nil
		if asReference {
			d.References = []Reference{{Media: probing(files.Video)}}
		}
		d.First = Media{Path: p, Kind: media.KindImage, State: MediaProbing}
		d.Last = Media{}
		t.s.replaceDraft(d, fmt.Sprintf("Frame %d of “%s” is now the first frame; the new take goes after it on the timeline.", f+1, c.Title))
	})
}

func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == ':' || r < ' ' {
			return '-'
		}
		return r
	}, s)
}

// openVideo opens a video with the build's decoder.
func (s *Studio) openVideo(path string) (media.Source, error) {
	if s.opts.Opener == nil {
		return nil, errors.New("this build can't decode videos")
	}
	return s.opts.Opener(path)
}

// sourceFrame decodes frame f (24 fps grid) of a video at full size.
func (t *Timeline) sourceFrame(path string, f int) (*image.RGBA, error) {
	src, err := t.s.openVideo(path)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	inf := src.Info()
	want := f
	if fps := inf.FPS; fps > 0 && fps != media.FPS {
		slots := media.Slots(max(inf.Frames, 1), fps)
		want = slots[min(f, len(slots)-1)]
	}
	var got *image.RGBA
	stop := errors.New("found")
	err = src.Frames(t.s.ctx, want+1, func(i int, img *image.RGBA) error {
		c := image.NewRGBA(image.Rect(0, 0, img.Rect.Dx(), img.Rect.Dy()))
		for y := 0; y < c.Rect.Dy(); y++ {
			copy(c.Pix[y*c.Stride:(y+1)*c.Stride], img.Pix[img.PixOffset(img.Rect.Min.X, img.Rect.Min.Y+y):])
		}
		got = c
		if i >= want {
			return stop
		}
		return nil
	})
	if err != nil && !errors.Is(err, stop) {
		return nil, err
	}
	if got == nil {
		return nil, errors.New("no frames")
	}
	return got, nil
}

// takesChanged places takes that "Extend →" was waiting for.
func (t *Timeline) takesChanged() {
	t.mu.Lock()
	if len(t.extends) == 0 {
		t.mu.Unlock()
		return
	}
	waits := append([]extendWait(nil), t.extends...)
	t.mu.Unlock()
	t.s.mu.Lock()
	var found []struct {
		w  extendWait
		tk Take
	}
	for _, w := range waits {
		for _, tk := range t.s.takes {
			if tk.Meta.First != nil && filepath.Clean(tk.Meta.First.Path) == filepath.Clean(w.first) {
				found = append(found, struct {
					w  extendWait
					tk Take
				}{w, tk})
				break
			}
		}
	}
	t.s.mu.Unlock()
	for _, f := range found {
		t.mu.Lock()
		kept := t.extends[:0]
		for _, w := range t.extends {
			if w.first != f.w.first {
				kept = append(kept, w)
			}
		}
		t.extends = kept
		t.mu.Unlock()
		// after the clip it extends (found again by its source, it may
		// have moved), else at the end
		at := -1
		for i, c := range t.Editor().Sequence().Clips {
			if c.Source == f.w.source {
				at = i + 1
				if i == f.w.after {
					break
				}
			}
		}
		t.addSource(f.tk.Dir, f.tk.Meta.Title, f.tk.Meta.Frames, at)
		t.s.Notify(Info, "“"+f.tk.Meta.Title+"” is on the timeline after the clip it extends.")
	}
}
