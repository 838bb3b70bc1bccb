package request

import (
	"image/color"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"h3studio/engine/media"
	"h3studio/engine/request/requesttest"
)

func writePNG(t testing.TB, dir, name string, w, h int) string {
	t.Helper()
	img := requesttest.Picture(w, h)
	img.Set(0, 0, color.RGBA{255, 0, 0, 255})
	return requesttest.WritePNG(t, filepath.Join(dir, name), img)
}

func writeWAV(t testing.TB, dir, name string, frames int) string {
	t.Helper()
	a := media.Audio{Rate: 32000, Channels: 2, Samples: make([]float32, 2*frames)}
	for i := range a.Samples {
		a.Samples[i] = float32(i%200)/200 - 0.5
	}
	return requesttest.WriteWAV(t, filepath.Join(dir, name), a)
}

var released = ModelFacts{Blocks: 50, HasFL2VA: true, HasRef2VA: true}

func TestAlignFrames(t *testing.T) {
	cases := map[int]int{0: 5, 1: 5, 5: 5, 6: 22, 22: 22, 23: 39, 56: 56, 57: 73, 123: 124, 124: 124, 240: 243, 362: 362, 363: 379}
	for in, want := range cases {
		if got := AlignFrames(in); got != want {
			t.Errorf("AlignFrames(%d) = %d, want %d", in, got, want)
		}
		if got := AlignFrames(in); (got-5)%17 != 0 {
			t.Errorf("AlignFrames(%d) = %d is not 17n+5", in, got)
		}
	}
	if got := SecondsToFrames(10); got != 243 {
		t.Errorf("10 s -> %d frames, want 243 (h3.c)", got)
	}
	if got := SecondsToFrames(5); got != 124 {
		t.Errorf("5 s -> %d frames, want 124", got)
	}
}

func TestResolveDefaults(t *testing.T) {
	p, err := Resolve(Request{Prompt: "a fox"}, released, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := p.Request
	if r.Width != 864 || r.Height != 480 || r.Frames != 56 || r.Steps != 20 || r.Seed != 42 || r.Layers != 50 || r.Reuse != 1 || r.CoreReuse != 1 {
		t.Errorf("defaults: %+v", r)
	}
	if p.Task != TaskT2VA || p.LatentFrames != 17 || p.LatentWidth != 54 || p.LatentHeight != 30 || p.AudioLatents != 93 || p.Forwards != 20 {
		t.Errorf("plan: %+v", p)
	}
}

func TestResolveRejects(t *testing.T) {
	dir := t.TempDir()
	img := writePNG(t, dir, "a.png", 64, 48)
	wide := writePNG(t, dir, "wide.png", 500, 100)
	wav := writeWAV(t, dir, "a.wav", 3*32000)
	short := writeWAV(t, dir, "short.wav", 32000)
	text := filepath.Join(dir, "notes.png")
	os.WriteFile(text, []byte("not a picture"), 0o644)
	cases := []struct {
		name string
		r    Request
		want string // substring of the error
	}{
		{"width not x32", Request{Width: 100, Height: 256}, "width 100 must be a multiple of 32"},
		{"too many pixels", Request{Width: 2048, Height: 2048}, "more than the model's"},
		{"too many frames", Request{Width: 256, Height: 256, Frames: 400}, "frames 413 after alignment is outside 22..362"},
		{"too few frames", Request{Frames: 5}, "outside 22..362"},
		{"reuse with core reuse", Request{Reuse: 2, CoreReuse: 2}, "cannot be combined with core-reuse"},
		{"steps", Request{Steps: 1}, "steps 1 is outside 2..1000"},
		{"layers", Request{Layers: 30}, "layers 30 is outside 35..50"},
		{"render aspect", Request{Width: 512, Height: 512, RenderWidth: 256, RenderHeight: 128}, "aspect ratio"},
		{"render larger", Request{Width: 256, Height: 256, RenderWidth: 512, RenderHeight: 512}, "must not exceed"},
		{"mixed conditions", Request{First: img, References: []Reference{{Kind: RefImage, Path: img}}}, "do not mix"},
		{"missing keyframe", Request{First: filepath.Join(dir, "nope.png")}, "first-frame"},
		{"audio only", Request{References: []Reference{{Kind: RefAudio, Path: wav}}}, "needs at least one picture or video"},
		{"audio too short", Request{References: []Reference{{Kind: RefImage, Path: img}, {Kind: RefAudio, Path: short}}}, "audio clips must be 2.0 s–15.0 s long"},
		{"picture aspect", Request{References: []Reference{{Kind: RefImage, Path: wide}}}, "between 1:4 and 4:1"},
		{"picture given as audio", Request{References: []Reference{{Kind: RefImage, Path: img}, {Kind: RefAudio, Path: img}}}, "is a picture, but was given as sound file reference"},
		{"unreadable reference", Request{References: []Reference{{Kind: RefImage, Path: text}}}, "the name says PNG but the content is text"},
		{"keyframe is sound", Request{First: wav}, "first-frame"},
		{"too many references", Request{References: make([]Reference, 13)}, "at most 12"},
		{"steps too many", Request{Steps: 1001}, "steps 1001 is outside 2..1000"},
		{"reuse range", Request{Reuse: 4}, "reuse 4 is outside 1..3"},
		{"core reuse range", Request{CoreReuse: 7}, "core-reuse 7 is outside 1..6"},
		{"layers too many", Request{Layers: 51}, "layers 51 is outside 35..50"},
		{"height not x32", Request{Width: 256, Height: 250}, "height 250 must be a multiple of 32"},
		{"render not x32", Request{Width: 512, Height: 512, RenderWidth: 100, RenderHeight: 100}, "render-width 100 must be a multiple of 32"},
		{"seconds too long", Request{Seconds: 20}, "frames 481 after alignment is outside 22..362"},
		{"memory mode", Request{Memory: "cloud"}, "memory"},
		{"frames and seconds", Request{Frames: 22, Seconds: 1}, "not both"},
		{"preset", Request{Preset: "ultra"}, "preset"},
		{"invalid UTF-8", Request{Prompt: "a fox\xff in snow"}, "prompt is not valid UTF-8 (first invalid byte at offset 5)"},
	}
	for _, c := range cases {
		_, err := Resolve(c.r, released, nil)
		if err == nil || !IsRequestError(err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want a request error containing %q", c.name, err, c.want)
		}
	}
}

func TestPresetsAndOverrides(t *testing.T) {
	p, err := Resolve(Request{Preset: PresetPreview}, released, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r := p.Request; r.Steps != 16 || r.Reuse != 3 || r.Layers != 40 {
		t.Errorf("preview: %+v", r)
	}
	if p.Forwards != 6 { // steps 0, 3, 6, 9, 12 and 15 (the last)
		t.Errorf("preview forwards %d, want 6", p.Forwards)
	}
	// An explicit core reuse wins over the preset's velocity reuse.
	p, err = Resolve(Request{Preset: PresetFast, CoreReuse: 2}, released, nil)
	if err != nil || p.Request.Reuse != 1 || p.Request.CoreReuse != 2 {
		t.Errorf("fast + core-reuse: %+v %v", p.Request, err)
	}
	if got := forwardCount(20, 2); got != 11 {
		t.Errorf("forwardCount(20,2) = %d, want 11 (H3-DIT §13.1)", got)
	}
	if got := forwardCount(20, 3); got != 8 {
		t.Errorf("forwardCount(20,3) = %d, want 8", got)
	}
	if got := forwardCount(50, 3); got != 18 {
		t.Errorf("forwardCount(50,3) = %d, want 18", got)
	}
}

// TestReferenceRules checks the reference rules that depend on what the
// files hold, with a prober standing in for the media layer.
func TestReferenceRules(t *testing.T) {
	dir := t.TempDir()
	file := func(name string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte("x"), 0o644)
		return p
	}
	infos := map[string]media.Info{
		file("v3s.mp4"):    {Kind: media.KindVideo, Width: 640, Height: 360, FPS: 30, Frames: 90, Duration: 3 * time.Second, HasAudio: true},
		file("mute.mp4"):   {Kind: media.KindVideo, Width: 640, Height: 360, FPS: 24, Frames: 72, Duration: 3 * time.Second},
		file("v20s.mp4"):   {Kind: media.KindVideo, Width: 640, Height: 360, FPS: 24, Frames: 480, Duration: 20 * time.Second},
		file("blip.mp4"):   {Kind: media.KindVideo, Width: 640, Height: 360, FPS: 24, Frames: 10, Duration: 2100 * time.Millisecond},
		file("a10s.wav"):   {Kind: media.KindAudio, Duration: 10 * time.Second, HasAudio: true, SampleRate: 48000, Channels: 2},
		file("pic.png"):    {Kind: media.KindImage, Width: 1200, Height: 800},
		file("square.png"): {Kind: media.KindImage, Width: 512, Height: 512},
	}
	probe := func(path string) (media.Info, error) { return infos[path], nil }
	p := func(name string) string { return filepath.Join(dir, name) }
	ref := func(kind ReferenceKind, name string) Reference { return Reference{Kind: kind, Path: p(name)} }
	req := func(frames int, refs ...Reference) Request {
		return Request{Prompt: "x", Width: 256, Height: 256, Frames: frames, References: refs}
	}
	bad := []struct {
		name string
		r    Request
		want string
	}{
		{"sound track, short generation", req(22, ref(RefVideo, "v3s.mp4")), "at least 56 frames"},
		{"separate sound, short generation", req(22, Reference{Kind: RefVideoAudio, Path: p("mute.mp4"), Audio: p("a10s.wav")}), "at least 56 frames"},
		{"video too long", req(22, ref(RefSilentVideo, "v20s.mp4")), "reference videos must be 2.0 s–15.0 s long"},
		{"video with too few frames", req(22, ref(RefSilentVideo, "blip.mp4")), "needs at least 13"},
		{"ten pictures", req(22, func() []Reference {
			var rs []Reference
			for i := 0; i < 10; i++ {
				rs = append(rs, ref(RefImage, "pic.png"))
			}
			return rs
		}()...), "at most 9 picture references"},
		{"sound total", req(56, ref(RefImage, "pic.png"), ref(RefAudio, "a10s.wav"), ref(RefAudio, "a10s.wav")), "audio clips may last 15.0 s in total"},
		{"video given as a picture", req(22, ref(RefImage, "mute.mp4")), "is a video, but was given as picture reference"},
		{"label beyond the references", Request{Prompt: "<Video 2> dances", Width: 256, Height: 256, Frames: 22, References: []Reference{ref(RefSilentVideo, "mute.mp4")}}, "<Video 2>"},
		{"video-audio without its sound", req(56, Reference{Kind: RefVideoAudio, Path: p("mute.mp4")}), "needs the sound file"},
	}
	for _, c := range bad {
		_, err := Resolve(c.r, released, probe)
		if err == nil || !IsRequestError(err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want a request error containing %q", c.name, err, c.want)
		}
	}
	// Accepted, with each reference as it will be encoded.
	pl, err := Resolve(req(56, ref(RefImage, "square.png"), ref(RefVideo, "v3s.mp4"), ref(RefSilentVideo, "mute.mp4"), ref(RefAudio, "a10s.wav")), released, probe)
	if err != nil {
		t.Fatal(err)
	}
	want := []ReferencePlan{
		{Label: "Picture 1", Kind: RefImage, Width: 2048, Height: 2048},
		{Label: "Video 1", Kind: RefVideo, Width: 1344, Height: 768, QwenFrames: 56, VAEFrames: 56, Sound: true, AudioLatents: 94},
		{Label: "Video 2", Kind: RefSilentVideo, Width: 1344, Height: 768, QwenFrames: 56, VAEFrames: 56},
		{Label: "Audio 1", Kind: RefAudio, Sound: true, AudioLatents: 94},
	}
	for i := range want {
		if pl.References[i] != want[i] {
			t.Errorf("reference %d: %+v, want %+v", i+1, pl.References[i], want[i])
		}
	}
}

// TestTurboPreset: --turbo N sets N passes, the exact path and the Turbo
// shifts (12/3 below the 768p class, 6/3 at 768p); explicit controls win.
func TestTurboPreset(t *testing.T) {
	lp := filepath.Join(t.TempDir(), "turbo.safetensors")
	if err := os.WriteFile(lp, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	l := []LoRA{{Path: lp, Strength: 1}}
	for _, c := range []struct {
		r                 Request
		steps             int
		videoShift, reuse float64
		layers            int
	}{
		{Request{Turbo: 4, LoRAs: l, Width: 960, Height: 544}, 4, 12, 1, 50},
		{Request{Turbo: 8, LoRAs: l, Width: 1344, Height: 768}, 8, 6, 1, 50},
		{Request{Turbo: 6, LoRAs: l, Width: 768, Height: 1344, Steps: 7, VideoShift: 9, Layers: 45}, 7, 9, 1, 45},
		{Request{Turbo: 6, LoRAs: l, Preset: PresetPreview}, 6, 12, 1, 50},
	} {
		p, err := Resolve(c.r, released, nil)
		if err != nil {
			t.Fatal(err)
		}
		r := p.Request
		if r.Steps != c.steps || r.VideoShift != c.videoShift || r.AudioShift != 3 || float64(r.Reuse) != c.reuse || r.Layers != c.layers || r.CoreReuse != 1 {
			t.Errorf("%+v resolved to steps %d shifts %g/%g reuse %d layers %d", c.r, r.Steps, r.VideoShift, r.AudioShift, r.Reuse, r.Layers)
		}
		if p.Forwards != c.steps {
			t.Errorf("turbo %d: %d forwards, want %d", c.r.Turbo, p.Forwards, c.steps)
		}
	}
	for _, c := range []struct {
		r    Request
		want string
	}{
		{Request{Turbo: 5}, "turbo 5 is not a Turbo preset"},
		{Request{LoRAs: []LoRA{{Path: filepath.Join(t.TempDir(), "missing.safetensors"), Strength: 1}}}, "missing.safetensors"},
		{Request{LoRAs: []LoRA{{Path: t.TempDir(), Strength: 1}}}, "is not a file"},
	} {
		if _, err := Resolve(c.r, released, nil); err == nil || !IsRequestError(err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want a request error with %q", c.r, err, c.want)
		}
	}
	p, err := Resolve(Request{Turbo: 4}, released, nil)
	if err != nil || !strings.Contains(strings.Join(p.Notes, "\n"), "Turbo LoRA") {
		t.Errorf("turbo without a LoRA: %v %v", p.Notes, err)
	}
}
