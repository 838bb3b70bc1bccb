package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"h3studio/engine"
	"h3studio/engine/atomicfile"
	"h3studio/engine/take"
	"h3studio/engine/videoapi"
)

// remoteArgs are generate's --server flags.
type remoteArgs struct {
	url, token, kind string
	maps             []string
}

// generateRemote sends the take to a /v1/videos server (SGLang's
// MiniMax-H3 schema, built by the same videoapi package that parses
// requests for `h3studio serve`), polls it, downloads the MP4 and writes
// the sidecar with the server's timings.
func generateRemote(ctx context.Context, a generateArgs, stdout, stderr io.Writer) int {
	fail := func(code int, format string, v ...any) int {
		fmt.Fprintf(stderr, "h3studio generate: "+format+"\n", v...)
		return code
	}
	u, err := url.Parse(a.remote.url)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fail(2, "--server %q is not an http(s) URL", a.remote.url)
	}
	if a.output == "" {
		return fail(2, "--server needs -o: the server's MP4 is the take")
	}
	if a.wav != "" || a.framesDir != "" {
		return fail(2, "--wav and --frames-dir are not available with --server (the server returns an MP4)")
	}
	dialect := videoapi.DialectSGLang
	switch a.remote.kind {
	case "", "sglang":
	case "h3studio":
		dialect = videoapi.DialectH3Studio
	default:
		return fail(2, "--server-kind must be sglang or h3studio")
	}
	var maps []videoapi.PathMap
	for _, m := range a.remote.maps {
		pm, err := videoapi.ParsePathMap(m)
		if err != nil {
			return fail(2, "--server-map: %v", err)
		}
		maps = append(maps, pm)
	}
	token := a.remote.token
	if token == "" {
		token = os.Getenv("H3_SERVER_TOKEN")
	}

	req, task, notes, err := planRemote(a)
	if err != nil {
		if engine.IsRequestError(err) {
			return fail(2, "%v", err)
		}
		return fail(1, "%v", err)
	}
	for _, n := range notes {
		fmt.Fprintf(stderr, "note: %s\n", n)
	}
	built, err := videoapi.Build(req, task, dialect, maps)
	if err != nil {
		return fail(2, "invalid request for the server: %v", err)
	}
	c := &videoapi.Client{BaseURL: a.remote.url, Token: token}
	start := time.Now()
	v, err := c.Create(ctx, built)
	if err != nil {
		var ae *videoapi.APIError
		if errors.As(err, &ae) && ae.Status >= 400 && ae.Status < 500 && ae.Status != 401 && ae.Status != 403 {
			return fail(2, "the server refused the take: %s", ae.Message)
		}
		return fail(1, "sending the take: %v", err)
	}
	fmt.Fprintf(stderr, "sent to %s as %s\n", u.Host, v.ID)
	last := ""
	v, err = c.Wait(ctx, v.ID, func(v videoapi.Video) {
		line := fmt.Sprintf("%s %d%%", v.Status, v.Progress)
		if v.Phase != "" {
			line += " (" + v.Phase + ")"
		}
		if line != last {
			fmt.Fprintf(stderr, "server: %s\n", line)
			last = line
		}
	})
	if err != nil {
		if ctx.Err() != nil {
			dctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			c.Delete(dctx, v.ID)
			cancel()
			fmt.Fprintln(stderr, "h3studio generate: cancelled; the server was asked to drop the take")
			return 130
		}
		return fail(1, "%v", err)
	}
	if err := os.MkdirAll(filepath.Dir(a.output), 0o755); err != nil {
		return fail(1, "%v", err)
	}
	tmp, err := atomicfile.CreateTemp(a.output, ".part-*")
	if err != nil {
		return fail(1, "%v", err)
	}
	if err := c.Download(ctx, v.ID, tmp); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return fail(1, "downloading the take: %v", err)
	}
	if err := atomicfile.Commit(tmp, a.output); err != nil {
		return fail(1, "%v", err)
	}
	sc := remoteSidecar(req, task, v, a.remote.url, time.Since(start))
	sc.Outputs = map[string]string{"video": a.output}
	side := sidecarPath(a)
	if err := take.Write(side, sc); err != nil {
		return fail(1, "%v", err)
	}
	fmt.Fprintf(stderr, "wrote %s\nwrote %s\n", a.output, side)
	return 0
}

// planRemote resolves the request: through the local model's Plan when
// -d is given (the same validation as a local take), else with the
// engine's defaults and presets (the server validates the rest).
func planRemote(a generateArgs) (engine.Request, engine.Task, []string, error) {
	r := a.req
	if a.modelDir != "" {
		b, err := openBackend("cpu", io.Discard)
		if err != nil {
			return r, "", nil, err
		}
		defer b.Close()
		s, err := engine.Open(engine.Options{ModelDir: a.modelDir, Backend: b})
		if err != nil {
			return r, "", nil, err
		}
		defer s.Close()
		p, err := s.Plan(r)
		if err != nil {
			return r, "", nil, err
		}
		return p.Request, p.Task, p.Notes, nil
	}
	// A server's defaults are the released recipe's (SGLang takes 4-15 s),
	// not the Mac's smaller ones.
	if r.Width == 0 && r.Height == 0 {
		r.Width, r.Height = remoteWidth, remoteHeight
	}
	switch {
	case r.Seconds > 0:
		r.Frames, r.Seconds = engine.SecondsToFrames(r.Seconds), 0
	case r.Frames > 0:
		r.Frames = engine.AlignFrames(r.Frames)
	default:
		r.Frames = engine.SecondsToFrames(remoteSeconds)
	}
	ps, ok := engine.Presets[r.Preset]
	if r.Preset == "" {
		ps, ok = engine.Presets[engine.PresetDefault], true
	}
	if !ok {
		return r, "", nil, &engine.RequestError{Field: "preset", Rule: "must be reference, default, fast or preview"}
	}
	if r.Steps == 0 {
		r.Steps = ps.Steps
	}
	if r.Reuse == 0 {
		r.Reuse = ps.Reuse
	}
	if r.CoreReuse == 0 {
		r.CoreReuse = ps.CoreReuse
	}
	if r.Layers == 0 && ps.LayersFraction < 1 {
		r.Layers = int(float64(engine.MaxLayers)*ps.LayersFraction + 0.5)
	}
	if !r.SeedSet {
		r.Seed, r.SeedSet = engine.DefaultSeed, true
	}
	task := engine.TaskT2VA
	switch {
	case len(r.References) > 0:
		task = engine.TaskRef2VA
	case r.First != "" || r.Last != "":
		task = engine.TaskFL2VA
	}
	return r, task, nil, nil
}

// The canvas and duration a server take has when the command line gives
// none: the released recipe (1344×768, 5 s).
const (
	remoteWidth, remoteHeight = 1344, 768
	remoteSeconds             = 5
)

// remoteSidecar is the take record of a server's take: the request sent
// and the server's timings (H3 Studio's per phase, SGLang's inference
// time).
func remoteSidecar(r engine.Request, task engine.Task, v videoapi.Video, server string, wall time.Duration) take.Record {
	host := server
	if u, err := url.Parse(server); err == nil {
		host = u.Host
	}
	rec := take.Record{Version: take.Version, Title: take.Title(r.Prompt), Created: time.Now().UTC().Truncate(time.Second),
		Task: task, Prompt: r.Prompt, Request: &r, Seed: r.Seed, Frames: r.Frames, Width: r.Width, Height: r.Height,
		FPS: 24, Seconds: float64(r.Frames) / 24, SampleRate: 32000, Channels: 2, Timings: map[engine.Phase]float64{},
		Settings: take.Settings{Quality: r.Preset, Steps: r.Steps, Reuse: r.Reuse, Layers: r.Layers, CoreReuse: r.CoreReuse,
			TokenReduction: r.TokenReduction, RenderWidth: r.RenderWidth, RenderHeight: r.RenderHeight, Memory: r.Memory},
		App:   take.AppInfo{Name: take.AppName, Version: version, Device: "server " + host, Backend: "remote"},
		Model: take.ModelRef{Name: "MiniMax-H3 (" + v.Model + " on " + host + ")"},
		Extra: map[string]float64{"client_wall_seconds": wall.Seconds()}}
	for p, s := range v.Timings {
		rec.Timings[engine.Phase(p)] = s
		rec.TotalSeconds += s
	}
	if v.InferenceTimeS != nil {
		rec.Extra["server_inference_seconds"] = *v.InferenceTimeS
		if rec.TotalSeconds == 0 {
			rec.TotalSeconds = *v.InferenceTimeS
		}
	}
	if v.PeakMemoryMB != nil {
		rec.PeakBytes = int64(*v.PeakMemoryMB * (1 << 20))
	}
	rec.Notes = append(rec.Notes, "generated on "+host+" as "+v.ID)
	return rec
}
