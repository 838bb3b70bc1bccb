package main

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"h3studio/engine"
	"h3studio/engine/videoapi"
	"h3studio/ui/studio"
)

// studioJobs is the API's job list over the studio's queue and library:
// takes the API submits run in the window's queue and are saved in its
// library with their take.json; the window's takes are listed too. Both
// `h3studio serve` (a studio without a window) and the app use it.
type studioJobs struct {
	s       *studio.Studio
	session string // this process's prefix of job video IDs

	mu   sync.Mutex
	recs map[studio.JobID]apiRecord
}

// apiRecord is what the API remembers of a take it submitted.
type apiRecord struct {
	prompt  string
	size    string
	seconds string
	model   string
	// outputs are the jobs of a request for several outputs (seed+i),
	// kept on the first one, whose ID is the video's; member marks the
	// others, which are not listed on their own.
	outputs []studio.JobID
	member  bool
}

func newStudioJobs(s *studio.Studio) *studioJobs {
	b := make([]byte, 4)
	rand.Read(b)
	return &studioJobs{s: s, session: hex.EncodeToString(b), recs: map[studio.JobID]apiRecord{}}
}

// apiModel is the model name videos report.
const apiModel = "MiniMaxAI/MiniMax-H3"

func (j *studioJobs) ModelName() string { return j.s.Model().Name() }

func (j *studioJobs) Plan(r engine.Request) (engine.Plan, error) {
	p, err := j.s.Queue().Plan(r)
	if errors.Is(err, studio.ErrNoModel) {
		return p, videoapi.ErrNoModel
	}
	return p, err
}

func (j *studioJobs) Submit(sub videoapi.Submission) (videoapi.Video, error) {
	plan := sub.Plan
	rec := apiRecord{prompt: sub.Lowered.Request.Prompt, model: sub.Lowered.Model,
		size:    fmt.Sprintf("%dx%d", plan.Request.Width, plan.Request.Height),
		seconds: strconv.FormatFloat(float64(plan.Request.Frames)/24, 'f', -1, 64)}
	if rec.model == "" {
		rec.model = apiModel
	}
	n := max(1, sub.Lowered.Outputs)
	ups := sub.Uploads
	var left sync.WaitGroup // the uploads stay until the last output ends
	left.Add(n)
	go func() { left.Wait(); videoapi.RemoveUploads(ups) }()
	j.mu.Lock() // held until the records are in, so a fast job's Get finds them
	defer j.mu.Unlock()
	var ids []studio.JobID
	for i := 0; i < n; i++ {
		r, p := sub.Lowered.Request, plan
		if i > 0 { // SGLang: output i uses seed+i
			r.Seed, r.SeedSet = plan.Request.Seed+uint64(i), true
			p.Request.Seed = r.Seed
		}
		id, err := j.s.Queue().Submit(r, &p, left.Done)
		if err != nil {
			for _, q := range ids {
				j.s.Queue().Cancel(q)
			}
			for k := i; k < n; k++ {
				left.Done()
			}
			if errors.Is(err, studio.ErrNoModel) {
				return videoapi.Video{}, videoapi.ErrNoModel
			}
			return videoapi.Video{}, err
		}
		ids = append(ids, id)
	}
	id := ids[0]
	for _, q := range ids[1:] {
		m := rec
		m.member = true
		j.recs[q] = m
	}
	if n > 1 {
		rec.outputs = ids
	}
	j.recs[id] = rec
	v := videoapi.Video{ID: j.jobID(id), Object: "video", Model: rec.model, Status: videoapi.StatusQueued,
		CreatedAt: time.Now().Unix(), Size: rec.size, Seconds: rec.seconds, Prompt: rec.prompt, NumOutputs: n}
	return v, nil
}

func (j *studioJobs) jobID(id studio.JobID) string {
	return "video_" + j.session + "_" + strconv.Itoa(int(id))
}

// takeID is the video ID of a library take.
func takeID(id string) string { return "video_take_" + id }

// parseID splits a video ID into a job of this session or a take.
func (j *studioJobs) parseID(id string) (job studio.JobID, take string, ok bool) {
	if t, ok := strings.CutPrefix(id, "video_take_"); ok && t != "" && !strings.ContainsAny(t, `/\`) && t != "." && t != ".." {
		return 0, t, true
	}
	if n, ok := strings.CutPrefix(id, "video_"+j.session+"_"); ok {
		if k, err := strconv.Atoi(n); err == nil && k > 0 {
			return studio.JobID(k), "", true
		}
	}
	return 0, "", false
}

func (j *studioJobs) rec(id studio.JobID) (apiRecord, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	r, ok := j.recs[id]
	return r, ok
}

// jobVideo is a job as a video object (completed jobs take their take's
// details); a request for several outputs reads as one video whose
// status and progress cover them all.
func (j *studioJobs) jobVideo(v studio.JobView) videoapi.Video {
	r, _ := j.rec(v.ID)
	if len(r.outputs) < 2 {
		return j.oneJobVideo(v)
	}
	out := j.oneJobVideo(v)
	out.NumOutputs = len(r.outputs)
	states := map[string]int{}
	progress := 0
	for _, id := range r.outputs {
		jv, ok := j.s.Queue().Job(id)
		if !ok {
			states[videoapi.StatusFailed]++
			continue
		}
		o := j.oneJobVideo(jv)
		states[o.Status]++
		progress += o.Progress
		if o.Status == videoapi.StatusFailed && out.Error == nil {
			out.Error = o.Error
		}
		if o.Status == videoapi.StatusInProgress {
			out.Phase = o.Phase
		}
		if o.CompletedAt != nil && (out.CompletedAt == nil || *o.CompletedAt > *out.CompletedAt) {
			out.CompletedAt = o.CompletedAt
		}
	}
	switch {
	case states[videoapi.StatusFailed] > 0 && states[videoapi.StatusQueued]+states[videoapi.StatusInProgress] == 0:
		out.Status = videoapi.StatusFailed
	case states[videoapi.StatusCompleted] == len(r.outputs):
		out.Status, out.Error = videoapi.StatusCompleted, nil
	case states[videoapi.StatusInProgress] > 0 || states[videoapi.StatusCompleted] > 0:
		out.Status, out.Error = videoapi.StatusInProgress, nil
		out.CompletedAt = nil
	default:
		out.Status, out.Error = videoapi.StatusQueued, nil
	}
	out.Progress = progress / len(r.outputs)
	if out.Status != videoapi.StatusCompleted {
		out.Progress = min(out.Progress, 99)
	}
	return out
}

// oneJobVideo is one job as a video object.
func (j *studioJobs) oneJobVideo(v studio.JobView) videoapi.Video {
	out := videoapi.Video{ID: j.jobID(v.ID), Object: "video", Model: apiModel, CreatedAt: v.Created.Unix(), Prompt: v.Title}
	if r, ok := j.rec(v.ID); ok {
		out.Model, out.Size, out.Seconds, out.Prompt = r.model, r.size, r.seconds, r.prompt
	}
	switch v.State {
	case studio.JobQueued:
		out.Status = videoapi.StatusQueued
	case studio.JobRunning:
		out.Status, out.Phase = videoapi.StatusInProgress, string(v.Current)
		out.Progress = progressOf(v)
	case studio.JobDone:
		out.Status, out.Progress = videoapi.StatusCompleted, 100
		if t, ok := j.s.Takes().Get(v.TakeID); ok {
			fillFromTake(&out, t)
			out.Model = apiModel
			if r, ok := j.rec(v.ID); ok {
				out.Model = r.model
			}
		}
	case studio.JobFailed:
		out.Status = videoapi.StatusFailed
		out.Error = &videoapi.VideoError{Code: "generation_failed", Message: scrubMessage(v.Message)}
	case studio.JobCancelled:
		// "failed" keeps OpenAI- and SGLang-style polling loops ending;
		// the code says it was cancelled.
		out.Status = videoapi.StatusFailed
		out.Error = &videoapi.VideoError{Code: "cancelled", Message: "the take was cancelled"}
	}
	if !v.Finished.IsZero() {
		t := v.Finished.Unix()
		out.CompletedAt = &t
	}
	return out
}

// scrubMessage keeps a failure's words but not its paths.
func scrubMessage(s string) string {
	f := strings.Fields(s)
	for i, w := range f {
		if strings.Contains(w, "/") || strings.Contains(w, `\`) {
			f[i] = "(a file)"
		}
	}
	return strings.Join(f, " ")
}

// progressOf weighs the phases by their usual share of a take's time.
func progressOf(v studio.JobView) int {
	weight := map[engine.Phase]float64{engine.PhaseLoad: 5, engine.PhaseText: 5, engine.PhaseReferences: 5,
		engine.PhaseDenoise: 70, engine.PhaseVideoDecode: 10, engine.PhaseAudioDecode: 3, engine.PhaseExport: 2}
	var done, total float64
	for _, p := range v.Phases {
		w := weight[p.Phase]
		total += w
		done += w * p.Fraction()
	}
	if total == 0 {
		return 0
	}
	return min(99, int(100*done/total))
}

func fillFromTake(v *videoapi.Video, t studio.Take) {
	m := t.Meta
	v.Prompt = m.Prompt
	v.Size = fmt.Sprintf("%dx%d", m.Width, m.Height)
	v.Seconds = strconv.FormatFloat(m.Seconds, 'f', -1, 64)
	if m.TotalSeconds > 0 {
		s := m.TotalSeconds
		v.InferenceTimeS = &s
	}
	if m.PeakBytes > 0 {
		mb := float64(m.PeakBytes) / (1 << 20)
		v.PeakMemoryMB = &mb
	}
	if len(m.Timings) > 0 {
		v.Timings = map[string]float64{}
		for p, s := range m.Timings {
			v.Timings[string(p)] = s
		}
	}
	if v.CompletedAt == nil && !m.Created.IsZero() {
		c := m.Created.Unix()
		v.CompletedAt = &c
	}
}

func (j *studioJobs) takeVideo(t studio.Take) videoapi.Video {
	v := videoapi.Video{ID: takeID(t.ID), Object: "video", Model: apiModel, Status: videoapi.StatusCompleted, Progress: 100,
		CreatedAt: t.Meta.Created.Unix()}
	fillFromTake(&v, t)
	return v
}

func (j *studioJobs) List() []videoapi.Video {
	snap := j.s.Snapshot()
	var out []videoapi.Video
	seen := map[string]bool{}
	for _, jv := range snap.Jobs {
		if jv.TakeID != "" {
			seen[jv.TakeID] = true
		}
		if r, _ := j.rec(jv.ID); r.member {
			continue
		}
		out = append(out, j.jobVideo(jv))
	}
	for _, t := range snap.Takes {
		if !seen[t.ID] && !t.Meta.Sample && t.Meta.Created.Unix() > 0 {
			out = append(out, j.takeVideo(t))
		}
	}
	sort.SliceStable(out, func(a, b int) bool {
		if out[a].CreatedAt != out[b].CreatedAt {
			return out[a].CreatedAt > out[b].CreatedAt
		}
		return out[a].ID > out[b].ID
	})
	return out
}

func (j *studioJobs) Get(id string) (videoapi.Video, bool) {
	job, take, ok := j.parseID(id)
	switch {
	case !ok:
		return videoapi.Video{}, false
	case take != "":
		t, ok := j.s.Takes().Get(take)
		if !ok {
			return videoapi.Video{}, false
		}
		return j.takeVideo(t), true
	}
	if r, _ := j.rec(job); r.member {
		return videoapi.Video{}, false
	}
	v, ok := j.s.Queue().Job(job)
	if !ok {
		return videoapi.Video{}, false
	}
	return j.jobVideo(v), true
}

func (j *studioJobs) Cancel(id string) (videoapi.Video, bool) {
	job, _, ok := j.parseID(id)
	if ok && job != 0 {
		r, _ := j.rec(job)
		if r.member {
			return videoapi.Video{}, false
		}
		ids := r.outputs
		if len(ids) == 0 {
			ids = []studio.JobID{job}
		}
		for i := len(ids) - 1; i >= 0; i-- { // the queued ones first, so none starts
			if v, ok := j.s.Queue().Job(ids[i]); ok && (v.State == studio.JobQueued || v.State == studio.JobRunning) {
				j.s.Queue().Cancel(ids[i])
			}
		}
	}
	return j.Get(id)
}

func (j *studioJobs) Content(id, variant string, index int) (string, string, error) {
	job, take, ok := j.parseID(id)
	if !ok {
		return "", "", videoapi.ErrNotFound
	}
	if job != 0 {
		r, _ := j.rec(job)
		switch {
		case r.member:
			return "", "", videoapi.ErrNotFound
		case len(r.outputs) > 0 && index >= len(r.outputs), len(r.outputs) == 0 && index > 0:
			return "", "", videoapi.ErrNotFound
		case len(r.outputs) > 0:
			job = r.outputs[index]
		}
		v, ok := j.s.Queue().Job(job)
		if !ok {
			return "", "", videoapi.ErrNotFound
		}
		if v.State != studio.JobDone {
			if v.State == studio.JobQueued || v.State == studio.JobRunning {
				return "", "", videoapi.ErrNotReady
			}
			return "", "", videoapi.ErrNotFound
		}
		take = v.TakeID
	}
	t, ok := j.s.Takes().Get(take)
	if !ok {
		return "", "", videoapi.ErrNotFound
	}
	if take != "" && job == 0 && index > 0 {
		return "", "", videoapi.ErrNotFound
	}
	switch variant {
	case "video":
		if t.Meta.Files.Video == "" {
			return "", "", videoapi.ErrNotFound
		}
		return filepath.Join(t.Dir, studio.VideoFile), "video/mp4", nil
	case "thumbnail":
		if !t.Has(studio.ThumbFile) {
			return "", "", videoapi.ErrNotFound
		}
		return filepath.Join(t.Dir, studio.ThumbFile), "image/png", nil
	}
	return "", "", videoapi.ErrNotFound
}

func (j *studioJobs) Pending() int {
	n := 0
	for _, v := range j.s.Snapshot().Jobs {
		if v.State == studio.JobQueued || v.State == studio.JobRunning {
			n++
		}
	}
	return n
}
