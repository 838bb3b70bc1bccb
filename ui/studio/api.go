package studio

import (
	"errors"

	"h3studio/engine"
	"h3studio/engine/media"
)

// This file is the studio's side of the local /v1/videos API: takes that
// arrive as engine requests join the same queue as the window's, and land
// in the same library with the same take.json.

// ErrNoModel is returned by Queue.Plan and Queue.Submit while no model
// is ready.
var ErrNoModel = errors.New("studio: no model is loaded")

// Plan validates r with the loaded model's planner (no job).
func (q Queue) Plan(r engine.Request) (engine.Plan, error) {
	q.s.mu.Lock()
	gen, ready := q.s.gen, q.s.model.Ready
	q.s.mu.Unlock()
	if gen == nil || !ready {
		return engine.Plan{}, ErrNoModel
	}
	return gen.Plan(r)
}

// Submit queues r as a job (after the window's queued jobs); the
// take is described in the library by the request itself. onEnd, when
// set, runs once when the job is cancelled in the queue or has finished.
func (q Queue) Submit(r engine.Request, plan *engine.Plan, onEnd func()) (JobID, error) {
	q.s.mu.Lock()
	if q.s.gen == nil || !q.s.model.Ready || q.s.closed {
		q.s.mu.Unlock()
		return 0, ErrNoModel
	}
	var p *engine.Plan
	if plan != nil {
		c := *plan
		p = &c
	}
	j := q.s.enqueueRequestLocked(DraftForRequest(r), r, p, false)
	j.onEnd = onEnd
	id := j.id
	q.s.mu.Unlock()
	q.s.notify()
	return id, nil
}

// SetRemote makes takes queued from now on run on g, a /v1/videos server
// (Run on server), instead of the loaded model; nil runs them here again.
// The loaded model still plans every take, so a take the server is sent
// follows the same rules.
func (q Queue) SetRemote(g Generator) {
	q.s.update(func() { q.s.remote = g })
}

// Job returns one job of this session (false once it has been dropped
// from the finished list, which keeps the newest 20).
func (q Queue) Job(id JobID) (JobView, bool) {
	q.s.mu.Lock()
	defer q.s.mu.Unlock()
	for _, j := range q.s.jobs {
		if j.id == id {
			return j.view(q.s.opts.Now()), true
		}
	}
	return JobView{}, false
}

// DraftForRequest describes an engine request as a draft: its prompt,
// keyframes and references (their kinds from the request) and the
// settings take.json records.
func DraftForRequest(r engine.Request) Draft {
	d := NewDraft()
	d.Prompt = r.Prompt
	d.KeepLabels = false
	st := &d.Settings
	if r.Width > 0 && r.Height > 0 {
		st.Width, st.Height = r.Width, r.Height
		st.Canvas = CanvasFor(r.Width, r.Height).ID
	}
	if r.Frames > 0 {
		st.Frames = r.Frames
	}
	st.Seed = r.Seed
	st.Quality = r.Preset
	st.Memory = r.Memory
	st.Preview = r.Preview
	st.Speed = Speed{Steps: r.Steps, Reuse: r.Reuse, Layers: r.Layers, CoreReuse: r.CoreReuse, TokenReduction: r.TokenReduction, RenderScale: 1}
	st.RenderWidth, st.RenderHeight = r.RenderWidth, r.RenderHeight
	image := func(p string) Media {
		if p == "" {
			return Media{}
		}
		return Media{Path: p, Kind: media.KindImage, State: MediaLimited}
	}
	d.First, d.Last = image(r.First), image(r.Last)
	for i, ref := range r.References {
		x := Reference{ID: i + 1, Media: Media{Path: ref.Path, State: MediaLimited}}
		switch ref.Kind {
		case engine.RefImage:
			x.Media.Kind = media.KindImage
		case engine.RefAudio:
			x.Media.Kind = media.KindAudio
		default:
			x.Media.Kind = media.KindVideo
		}
		x.Silent = ref.Kind == engine.RefSilentVideo
		if ref.Audio != "" {
			x.Sound = Media{Path: ref.Audio, Kind: media.KindAudio, State: MediaLimited}
		}
		d.References = append(d.References, x)
	}
	return d
}
