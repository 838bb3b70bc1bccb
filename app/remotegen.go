package main

import (
	"context"
	"errors"
	"fmt"
	"image"
	"net/url"
	"os"
	"time"

	"h3studio/engine"
	"h3studio/engine/media"
	"h3studio/engine/videoapi"
)

// remoteGenerator is studio.Generator over a /v1/videos server (Run on
// server): the take is planned by the loaded model (the same rules as a
// local take), built as SGLang expects, polled, and the server's MP4 is
// decoded into the studio's take sink, so the take lands in the library
// like any other (thumbnail, viewer proxy, take.json with the server's
// timings).
type remoteGenerator struct {
	plan    func(engine.Request) (engine.Plan, error)
	client  *videoapi.Client
	dialect videoapi.Dialect
	maps    []videoapi.PathMap
	open    media.Opener
	host    string
}

func newRemoteGenerator(plan func(engine.Request) (engine.Plan, error), server, token string, dialect videoapi.Dialect, maps []videoapi.PathMap) (*remoteGenerator, error) {
	u, err := url.Parse(server)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%q is not an http(s) URL", server)
	}
	return &remoteGenerator{plan: plan, client: &videoapi.Client{BaseURL: server, Token: token}, dialect: dialect, maps: maps,
		open: mediaOpener, host: u.Host}, nil
}

func (g *remoteGenerator) Plan(r engine.Request) (engine.Plan, error) { return g.plan(r) }

// serverPhase is the studio's phase for a server's progress: H3 Studio
// servers name theirs; SGLang's progress is all denoising.
func serverPhase(v videoapi.Video) engine.Phase {
	switch p := engine.Phase(v.Phase); p {
	case engine.PhaseLoad, engine.PhaseText, engine.PhaseReferences, engine.PhaseDenoise, engine.PhaseVideoDecode, engine.PhaseAudioDecode:
		return p
	}
	if v.Status == videoapi.StatusQueued {
		return engine.PhaseLoad
	}
	return engine.PhaseDenoise
}

func (g *remoteGenerator) Generate(ctx context.Context, r engine.Request, out media.Sink, progress func(engine.Event)) (engine.Result, error) {
	start := time.Now()
	fail := func(err error) (engine.Result, error) {
		out.Abort()
		return engine.Result{}, err
	}
	p, err := g.plan(r)
	if err != nil {
		return fail(err)
	}
	b, err := videoapi.Build(p.Request, p.Task, g.dialect, g.maps)
	if err != nil {
		return fail(fmt.Errorf("this take cannot be sent to %s: %w", g.host, err))
	}
	v, err := g.client.Create(ctx, b)
	if err != nil {
		return fail(fmt.Errorf("sending the take to %s: %w", g.host, err))
	}
	v, err = g.client.Wait(ctx, v.ID, func(v videoapi.Video) {
		msg := fmt.Sprintf("On %s: %s", g.host, v.Status)
		progress(engine.Event{Phase: serverPhase(v), Done: v.Progress, Total: 100, Elapsed: time.Since(start), Message: msg})
	})
	if err != nil {
		if ctx.Err() != nil {
			dctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			g.client.Delete(dctx, v.ID)
			cancel()
			return fail(fmt.Errorf("%w (the server was asked to drop the take)", ctx.Err()))
		}
		return fail(err)
	}
	tmp, err := os.CreateTemp("", "h3studio-remote-*.mp4")
	if err != nil {
		return fail(err)
	}
	defer os.Remove(tmp.Name())
	err = g.client.Download(ctx, v.ID, tmp)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fail(fmt.Errorf("downloading the take from %s: %w", g.host, err))
	}
	res, err := g.decodeInto(ctx, tmp.Name(), p, out, progress, start)
	if err != nil {
		return fail(err)
	}
	res.Timings = map[engine.Phase]time.Duration{}
	for ph, s := range v.Timings {
		res.Timings[engine.Phase(ph)] = time.Duration(s * float64(time.Second))
	}
	if len(res.Timings) == 0 && v.InferenceTimeS != nil {
		res.Timings[engine.PhaseDenoise] = time.Duration(*v.InferenceTimeS * float64(time.Second))
	}
	if v.PeakMemoryMB != nil {
		res.PeakBytes = int64(*v.PeakMemoryMB * (1 << 20))
	}
	res.Model = "MiniMax-H3 on " + g.host
	res.ModelID = "server " + g.host + " " + v.ID
	progress(engine.Event{Phase: engine.PhaseDone, Done: 1, Total: 1, Elapsed: time.Since(start)})
	return res, nil
}

// decodeInto writes the server's MP4 into the take sink: its frames and
// its sound at the model's 32 kHz stereo.
func (g *remoteGenerator) decodeInto(ctx context.Context, path string, p engine.Plan, out media.Sink, progress func(engine.Event), start time.Time) (engine.Result, error) {
	src, err := g.open(path)
	if err != nil {
		return engine.Result{}, fmt.Errorf("the server's video cannot be read here: %w", err)
	}
	defer src.Close()
	info := src.Info()
	if info.Width <= 0 || info.Height <= 0 {
		return engine.Result{}, errors.New("the server's video has no picture")
	}
	if err := out.Begin(media.Format{Width: info.Width, Height: info.Height, FPS: media.FPS, Frames: info.Frames,
		SampleRate: media.SampleRate, Channels: media.NumChannels}); err != nil {
		return engine.Result{}, err
	}
	n := 0
	err = src.Frames(ctx, 0, func(i int, f *image.RGBA) error {
		n++
		progress(engine.Event{Phase: engine.PhaseExport, Done: i + 1, Total: max(info.Frames, i+1), Elapsed: time.Since(start)})
		return out.WriteFrame(f)
	})
	if err != nil {
		return engine.Result{}, fmt.Errorf("reading the server's video: %w", err)
	}
	if a, err := src.Audio(ctx); err == nil {
		if a.Rate != media.SampleRate {
			a = media.Resample(a, media.SampleRate)
		}
		if err := out.WriteAudio(a); err != nil {
			return engine.Result{}, err
		}
	} else if !errors.Is(err, media.ErrNoAudio) {
		return engine.Result{}, fmt.Errorf("reading the server's sound: %w", err)
	}
	if err := out.Close(); err != nil {
		return engine.Result{}, err
	}
	return engine.Result{Plan: p, Seed: p.Request.Seed, Frames: n}, nil
}
