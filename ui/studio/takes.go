package studio

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"h3studio/engine"
	"h3studio/engine/media"
	"h3studio/engine/take"
)

// Takes is the library of takes as the window shows it: the viewer that
// shows one (and follows the running job's previews), stars, the Trash,
// running a take again or continuing from it, and exporting its files.
// The takes themselves live in the Studio (Snapshot.Takes), read from disk
// by the Library; Takes is its handle on them (Studio.Takes).
type Takes struct{ s *Studio }

// Takes returns the library of takes.
func (s *Studio) Takes() Takes { return Takes{s} }

// Get returns a library take by its ID.
func (tk Takes) Get(id string) (Take, bool) { return tk.s.take(id) }

// takeMeta builds take.json for a finished job.
func (s *Studio) takeMeta(j *job, res engine.Result, sink *takeSink, hasVideo bool) TakeMeta {
	d := j.draft
	st := d.Settings
	req := j.req
	if res.Plan.Request.Width > 0 {
		req = res.Plan.Request // the engine's resolved request
	}
	m := TakeMeta{
		Version: 1, Title: Title(d.Prompt), Created: s.opts.Now(), Task: d.Task(), Prompt: d.Prompt,
		Settings: TakeSettings{
			Canvas: st.Canvas, Quality: st.Quality, Custom: st.Custom(),
			Steps: req.Steps, Reuse: req.Reuse, Layers: req.Layers, CoreReuse: req.CoreReuse,
			TokenReduction: req.TokenReduction, RenderWidth: req.RenderWidth, RenderHeight: req.RenderHeight,
			Memory: st.Memory, Preview: st.Preview, Turbo: st.Turbo, LoRAs: req.LoRAs,
		},
		Seed: req.Seed, Frames: sink.nFrames, Width: sink.format.Width, Height: sink.format.Height,
		FPS: media.FPS, Seconds: Seconds(sink.nFrames),
		SampleRate: sink.audio.Rate, Channels: sink.audio.Channels,
		Timings:   map[engine.Phase]float64{},
		PeakBytes: res.PeakBytes,
		// The mode the take ran in (the engine's choice under Automatic),
		// why, and the peak predicted for it, as the command line records.
		PredictedPeakBytes: res.Plan.PeakBytes, Memory: res.Plan.Memory, MemoryWhy: res.Plan.MemoryWhy,
		Files: TakeFiles{Thumb: ThumbFile, Last: LastFile, Viewer: ViewerFile},
		App:   AppInfo{Name: take.AppName, Version: s.opts.AppVersion, Device: s.opts.Device},
		Notes: res.Plan.Notes,
		LoRAs: res.LoRAs,
	}
	if res.Seed != 0 || m.Seed == 0 {
		m.Seed = res.Seed
	}
	if sink.format.FPS > 0 {
		m.FPS = sink.format.FPS
	}
	if hasVideo {
		m.Files.Video = VideoFile
	}
	if len(sink.audio.Samples) > 0 {
		m.Files.Audio = AudioFile
	}
	var total float64
	for p, t := range res.Timings {
		m.Timings[p] = t.Seconds()
		total += t.Seconds()
	}
	if !j.started.IsZero() {
		total = s.opts.Now().Sub(j.started).Seconds()
	}
	m.TotalSeconds = total
	s.mu.Lock()
	info := s.model.Info
	s.mu.Unlock()
	m.Model = ModelRef{Name: info.Name, Dir: info.Dir, Engine: info.Engine, Version: res.ModelID}
	if res.Model != "" {
		m.Model.Name = res.Model
	}
	if j.sample {
		m.Title = SampleTakeTitle
		m.Sample = true
		m.Notes = append(m.Notes, SampleTakeNote)
	}
	ref := func(x Media, label, kind string) *MediaRef {
		if x.Empty() {
			return nil
		}
		r := &MediaRef{Label: label, Kind: kind, Path: x.Path, Hash: x.Hash}
		if x.State == MediaReady {
			r.Info = &MediaShape{Width: x.Info.Width, Height: x.Info.Height, Seconds: x.Info.Duration.Seconds(), HasAudio: x.Info.HasAudio}
		}
		return r
	}
	m.First = ref(d.First, "", "image")
	m.Last = ref(d.Last, "", "image")
	labels := Labels(d.References)
	for i, r := range d.References {
		mr := ref(r.Media, labels[i], string(r.EngineKind()))
		mr.Sound = ref(r.Sound, "", "audio")
		m.References = append(m.References, *mr)
	}
	return m
}

// loadLibrary reads the library folder (a background task).
func (s *Studio) loadLibrary() {
	takes, err := s.library().List()
	s.update(func() {
		s.libLoaded = true
		if err != nil {
			s.noticeLocked(Fail, "The library can't be read: "+err.Error(), "")
			return
		}
		// Keep takes committed while listing; a take whose folder is
		// gone (moved away, deleted outside the app) leaves the list.
		seen := map[string]bool{}
		for _, t := range takes {
			seen[t.ID] = true
		}
		for _, t := range s.takes {
			if !seen[t.ID] && dirExists(t.Dir) {
				takes = append([]Take{t}, takes...)
			}
		}
		if t, _, ok := s.takeLocked(s.viewer.TakeID); ok && !seen[t.ID] && !dirExists(t.Dir) {
			s.viewerSeq++
			s.viewer = Viewer{} // the take shown is gone
		}
		s.takes = takes
		defer s.maybeSampleLocked()
		if s.viewer.Clip == nil && s.viewer.TakeID == "" && !s.viewer.Loading {
			switch {
			case len(takes) > 0 && takes[0].Damaged == "":
				s.showTakeLocked(takes[0])
			case s.opts.Sample != nil:
				s.viewerSeq++
				s.viewer = Viewer{Title: "Sample take", Sample: true, Loading: true}
				seq := s.viewerSeq
				s.opts.Go(func() {
					c := s.opts.Sample()
					s.update(func() {
						if s.viewerSeq == seq {
							s.viewer.Clip, s.viewer.Loading = c, false
						}
					})
				})
			}
		}
	})
}

// Refresh rereads the library folder.
func (tk Takes) Refresh() { tk.s.opts.Go(tk.s.loadLibrary) }

func (s *Studio) takeLocked(id string) (Take, int, bool) {
	for i, t := range s.takes {
		if t.ID == id {
			return t, i, true
		}
	}
	return Take{}, -1, false
}

// take returns the take id names (false when it is gone).
func (s *Studio) take(id string) (Take, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, _, ok := s.takeLocked(id)
	return t, ok
}

// onTake runs fn on a worker with the take id names; nothing happens when
// the take is gone.
func (s *Studio) onTake(id string, fn func(t Take)) {
	if t, ok := s.take(id); ok {
		s.opts.Go(func() { fn(t) })
	}
}

// Show opens a take in the viewer (loading its frames in the background).
func (tk Takes) Show(id string) {
	tk.s.update(func() {
		t, _, ok := tk.s.takeLocked(id)
		if !ok {
			return
		}
		tk.s.showTakeLocked(t)
	})
}

func (s *Studio) showTakeLocked(t Take) {
	s.viewerSeq++
	seq := s.viewerSeq
	s.viewer = Viewer{TakeID: t.ID, Title: t.Meta.Title, Loading: true}
	if t.Damaged != "" {
		s.viewer.Loading, s.viewer.Err = false, "This take can't be shown: "+t.Damaged
		return
	}
	s.opts.Go(func() {
		if s.takeGone(t) {
			return
		}
		c, err := s.library().LoadClip(t)
		s.update(func() {
			if s.viewerSeq != seq {
				return
			}
			s.viewer.Loading = false
			if err != nil {
				s.viewer.Err = err.Error()
				return
			}
			s.viewer.Clip = c
		})
	})
}

// StopFollowing keeps the viewer on what it shows instead of the running
// job's previews.
func (tk Takes) StopFollowing() { tk.s.update(func() { tk.s.viewer.Follow = false }) }

// FollowJob shows the running job's previews again.
func (tk Takes) FollowJob() { tk.s.update(func() { tk.s.viewer.Follow = true }) }

// SetStarred stars or unstars a take.
func (tk Takes) SetStarred(id string, on bool) {
	tk.s.onTake(id, func(t Take) {
		if tk.s.takeGone(t) {
			return
		}
		nt, err := tk.s.library().SetStarred(t, on)
		tk.s.update(func() {
			if err != nil {
				tk.s.noticeLocked(Fail, "The star could not be saved: "+err.Error(), "")
				return
			}
			if _, i, ok := tk.s.takeLocked(id); ok {
				tk.s.takes[i] = nt
			}
		})
	})
}

// Delete moves a take to the Trash.
func (tk Takes) Delete(id string) {
	tk.s.onTake(id, func(t Take) {
		if tk.s.takeGone(t) {
			return
		}
		err := tk.s.library().Delete(t)
		tk.s.update(func() {
			if err != nil {
				tk.s.noticeLocked(Fail, fmt.Sprintf("“%s” could not be moved to the Trash: %v. It is still in the library.", t.Meta.Title, err), "")
				return
			}
			if _, i, ok := tk.s.takeLocked(id); ok {
				tk.s.takes = append(tk.s.takes[:i:i], tk.s.takes[i+1:]...)
			}
			if tk.s.viewer.TakeID == id {
				tk.s.viewerSeq++
				tk.s.viewer = Viewer{}
			}
			// A frame or reference taken from this take (Chain →, Use as
			// Reference) went to the Trash with it: mark it, as the watcher
			// would for a deleted input (a moved folder sends no event for
			// the files inside it).
			gone := false
			tk.s.forEachMediaLocked(func(m *Media) {
				if !m.Empty() && within(filepath.Clean(m.Path), filepath.Clean(t.Dir)) {
					m.State, m.Note = MediaMissing, "its take was moved to the Trash"
					gone = true
				}
			})
			if gone {
				tk.s.draftVer++
				tk.s.schedulePlanLocked()
			}
			tk.s.noticeLocked(Info, fmt.Sprintf("“%s” was moved to the Trash.", t.Meta.Title), "")
		})
	})
}

// draftFromTake rebuilds the draft that made a take. Input files are read
// again (they may have changed; their hashes are compared).
func (s *Studio) draftFromTake(t Take) (Draft, []string) {
	m := t.Meta
	d := NewDraft()
	d.Prompt = m.Prompt
	d.Settings = d.Settings.WithCanvas(m.Settings.Canvas, m.Width, m.Height)
	d.Settings.Frames = m.Frames
	d.Settings = d.Settings.WithQuality(m.Settings.Quality)
	d.Settings.Speed.Steps, d.Settings.Speed.Reuse, d.Settings.Speed.Layers = m.Settings.Steps, m.Settings.Reuse, m.Settings.Layers
	d.Settings.Speed.CoreReuse, d.Settings.Speed.TokenReduction = m.Settings.CoreReuse, m.Settings.TokenReduction
	if m.Settings.RenderWidth > 0 {
		d.Settings.RenderWidth, d.Settings.RenderHeight = m.Settings.RenderWidth, m.Settings.RenderHeight
	}
	d.Settings.Seed, d.Settings.Memory, d.Settings.Preview = m.Seed, m.Settings.Memory, m.Settings.Preview
	var warn []string
	d.Settings.Turbo = m.Settings.Turbo
	for _, l := range m.Settings.LoRAs {
		c := inspectLoRA(LoRAChoice{Path: l.Path, Strength: l.Strength, On: true})
		if c.Problem != "" {
			warn = append(warn, c.Name()+" can't be used ("+c.Problem+")")
			c.On = false
		}
		d.Settings.LoRAs = append(d.Settings.LoRAs, c)
	}
	in := func(r *MediaRef, k media.Kind) Media {
		if r == nil {
			return Media{}
		}
		x := Media{Path: r.Path, Kind: k, State: MediaProbing, Hash: r.Hash}
		if _, err := os.Stat(r.Path); err != nil {
			x.State, x.Note = MediaMissing, "the file is gone"
			warn = append(warn, filepath.Base(r.Path)+" is missing")
		} else if r.Hash != "" {
			if h, err := take.HashFile(r.Path); err == nil && h != r.Hash {
				warn = append(warn, filepath.Base(r.Path)+" has changed since this take")
			}
		}
		return x
	}
	d.First = in(m.First, media.KindImage)
	d.Last = in(m.Last, media.KindImage)
	for _, r := range m.References {
		k := media.KindImage
		switch engine.ReferenceKind(r.Kind) {
		case engine.RefVideo, engine.RefSilentVideo, engine.RefVideoAudio:
			k = media.KindVideo
		case engine.RefAudio:
			k = media.KindAudio
		}
		ref := Reference{Media: in(&r, k), Silent: engine.ReferenceKind(r.Kind) == engine.RefSilentVideo}
		if r.Sound != nil {
			ref.Sound = in(r.Sound, media.KindAudio)
		}
		d.References = append(d.References, ref)
	}
	return d, warn
}

// Rerun queues a take again with its own settings: the same seed
// (newSeed false) or a fresh one. The draft in Compose is not touched.
func (tk Takes) Rerun(id string, newSeed bool) {
	tk.s.onTake(id, func(t Take) {
		d, warn := tk.s.draftFromTake(t)
		for i := range d.References {
			tk.s.mu.Lock()
			tk.s.nextRefID++
			d.References[i].ID = tk.s.nextRefID
			tk.s.mu.Unlock()
		}
		for _, m := range []*Media{&d.First, &d.Last} {
			if m.State == MediaProbing {
				m.State = MediaReady
			}
		}
		for i := range d.References {
			for _, m := range []*Media{&d.References[i].Media, &d.References[i].Sound} {
				if m.State == MediaProbing {
					m.State = MediaReady
				}
			}
		}
		if newSeed {
			d.Settings.Seed = tk.s.opts.Rand()
		}
		tk.s.update(func() {
			if ps := Check(d); Blocking(ps) {
				for _, p := range ps {
					if p.Severity == Error {
						tk.s.noticeLocked(Fail, "“"+t.Meta.Title+"” can't be run again: "+p.String(), "")
						return
					}
				}
			}
			if tk.s.gen == nil {
				tk.s.noticeLocked(Fail, "“"+t.Meta.Title+"” can't be run again: no model is loaded.", "")
				return
			}
			if len(warn) > 0 {
				tk.s.noticeLocked(Warn, "Running “"+t.Meta.Title+"” again, but "+strings.Join(warn, "; ")+".", "")
			}
			tk.s.enqueueLocked(d, nil)
		})
	})
}

// UseSettings loads a take's prompt, inputs and settings into Compose (the
// previous draft can be restored with Undo).
func (tk Takes) UseSettings(id string) {
	tk.s.onTake(id, func(t Take) {
		d, warn := tk.s.draftFromTake(t)
		tk.s.replaceDraft(d, "Compose now holds the settings of “"+t.Meta.Title+"”.")
		if len(warn) > 0 {
			tk.s.Notify(Warn, strings.Join(warn, "; ")+".")
		}
	})
}

// Chain starts a new draft that continues a take: its last frame becomes the
// first frame, the prompt and settings are kept, references are cleared
// (they can't be combined with frames). Undo restores the previous draft.
func (tk Takes) Chain(id string) {
	tk.s.mu.Lock()
	t, _, ok := tk.s.takeLocked(id)
	cur := tk.s.draft.Clone()
	tk.s.mu.Unlock()
	if !ok {
		return
	}
	if tk.s.takeGone(t) {
		return
	}
	last := filepath.Join(t.Dir, LastFile)
	if _, err := os.Stat(last); err != nil {
		tk.s.Notify(Fail, "“"+t.Meta.Title+"” has no saved last frame to continue from.")
		return
	}
	d := cur
	if t.Damaged == "" {
		d.Prompt = t.Meta.Prompt
		d.Settings = d.Settings.WithCanvas(t.Meta.Settings.Canvas, t.Meta.Width, t.Meta.Height)
	}
	d.References = nil
	d.First = Media{Path: last, Kind: media.KindImage, State: MediaProbing}
	d.Last = Media{}
	tk.s.replaceDraft(d, "The last frame of “"+t.Meta.Title+"” is now the first frame.")
}

// UseAsReference adds a take to the reference list: its video (with its
// sound) when the take has an MP4, otherwise its last frame as a picture.
func (tk Takes) UseAsReference(id string) {
	t, ok := tk.s.take(id)
	if !ok || tk.s.takeGone(t) {
		return
	}
	p := filepath.Join(t.Dir, VideoFile)
	if !t.Has(VideoFile) {
		p = filepath.Join(t.Dir, LastFile)
		tk.s.Notify(Info, "This build writes no MP4, so the take's last frame was added as a picture reference.")
	}
	tk.s.Compose().AddReferences([]string{p})
}
