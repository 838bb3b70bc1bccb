package take

import (
	"path/filepath"
	"strings"
	"time"

	"h3studio/engine"
	"h3studio/engine/media"
)

// AppName is the application name a record carries.
const AppName = "H3 Studio"

// FromResult is the record of a finished generation as the command line
// writes it: the resolved request, its inputs by absolute path and content
// hash, timings, profile and peak storage. modelDir, device and backend
// name what ran it.
func FromResult(res engine.Result, appVersion, modelDir, device, backend string) Record {
	r := res.Plan.Request
	rec := Record{
		Version: Version, Title: Title(r.Prompt), Created: time.Now().UTC().Truncate(time.Second),
		Task: res.Plan.Task, Prompt: r.Prompt, Request: &r,
		Settings: Settings{
			Quality: r.Preset, Steps: r.Steps, Reuse: r.Reuse, Layers: r.Layers, CoreReuse: r.CoreReuse,
			TokenReduction: r.TokenReduction, RenderWidth: r.RenderWidth, RenderHeight: r.RenderHeight,
			Memory: r.Memory, Preview: r.Preview, Turbo: r.Turbo, LoRAs: r.LoRAs,
		},
		Seed: res.Seed, Frames: res.Frames, Width: r.Width, Height: r.Height,
		FPS: media.FPS, Seconds: float64(res.Frames) / media.FPS, SampleRate: 32000, Channels: 2,
		Timings: map[engine.Phase]float64{}, PeakBytes: res.PeakBytes,
		PredictedPeakBytes: res.Plan.PeakBytes, Memory: res.Plan.Memory, MemoryWhy: res.Plan.MemoryWhy, TextCached: res.Cached,
		App:   AppInfo{Name: AppName, Version: appVersion, Device: device, Backend: backend},
		Model: ModelRef{Name: res.Model, Dir: modelDir, Version: res.ModelID},
		Notes: res.Plan.Notes, LoRAs: res.LoRAs,
	}
	for _, p := range res.Profile {
		rec.Profile = append(rec.Profile, PhaseProfile{Phase: p.Phase, Seconds: p.Wall.Seconds(), Units: p.Units, Unit: p.Unit,
			Dispatches: p.Dispatches, GFLOP: p.FLOPs / 1e9, PeakBytes: p.PeakBytes})
	}
	for ph, d := range res.Timings {
		rec.Timings[ph] = d.Seconds()
		rec.TotalSeconds += d.Seconds()
	}
	rec.First = inputRef("", "image", r.First)
	rec.Last = inputRef("", "image", r.Last)
	for _, l := range engine.ReferenceLabels(r.References) {
		ref := inputRef(l.Label, string(l.Kind), l.Path)
		ref.Sound = inputRef("", string(engine.RefAudio), l.Audio)
		rec.References = append(rec.References, *ref)
	}
	return rec
}

// inputRef records an input file by absolute path (the record is read from
// beside the output, not from where the command ran) and content hash; nil
// when path is empty.
func inputRef(label, kind, path string) *MediaRef {
	if path == "" {
		return nil
	}
	sum, _ := HashFile(path)
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	return &MediaRef{Label: label, Kind: kind, Path: path, Hash: sum}
}

// Title is a short description of a prompt for lists ("A red fox walks…").
func Title(prompt string) string {
	p := strings.TrimSpace(prompt)
	// Skip the structure: use the first sentence of the description.
	for _, f := range []string{"integrated_multimodal_description:", "detailed_description:", "summary:"} {
		if i := strings.Index(p, f); i >= 0 {
			p = strings.TrimSpace(p[i+len(f):])
			break
		}
	}
	p = strings.TrimPrefix(p, "[Shot 1]")
	p = strings.Join(strings.Fields(p), " ")
	if i := strings.IndexAny(p, ".!?\n"); i > 0 && i < 80 {
		p = p[:i]
	}
	if r := []rune(p); len(r) > 60 {
		p = string(r[:59])
		if i := strings.LastIndex(p, " "); i > 30 {
			p = p[:i]
		}
		p = strings.TrimSpace(p) + "…"
	}
	if p == "" {
		return "Untitled"
	}
	return p
}
