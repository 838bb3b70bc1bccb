package studio

import (
	"strings"
	"testing"
	"time"

	"h3studio/engine/media"
)

func img(name string) Media {
	return Media{Path: "/in/" + name, Kind: media.KindImage, State: MediaReady}
}

func clip(name string, k media.Kind, secs float64) Media {
	return Media{Path: "/in/" + name, Kind: k, State: MediaReady, Info: media.Info{Kind: k, HasAudio: true, Duration: time.Duration(secs * float64(time.Second))}}
}

func refs(ms ...Media) []Reference {
	var r []Reference
	for i, m := range ms {
		r = append(r, Reference{ID: i + 1, Media: m})
	}
	return r
}

func TestCheck(t *testing.T) {
	base := func() Draft { d := NewDraft(); d.Prompt = "A fox."; return d }
	many := func(n int, k media.Kind) []Media {
		var ms []Media
		for i := 0; i < n; i++ {
			if k == media.KindImage {
				ms = append(ms, img("p.png"))
			} else {
				ms = append(ms, clip("c", k, 3))
			}
		}
		return ms
	}
	for _, c := range []struct {
		name  string
		edit  func(*Draft)
		where Where
		want  string // substring of an error message; "" = no error
	}{
		{"ok t2va", func(d *Draft) {}, 0, ""},
		{"empty prompt", func(d *Draft) { d.Prompt = "  " }, AtPrompt, "prompt is empty"},
		{"refs with frames", func(d *Draft) { d.First = img("a.png"); d.References = refs(img("b.png")) }, AtFirst, "can't be combined"},
		{"refs with frames (list)", func(d *Draft) { d.Last = img("a.png"); d.References = refs(img("b.png")) }, AtReferences, "cannot be combined with a first or last frame"},
		{"silent video as soundtrack", func(d *Draft) {
			v := clip("v.mp4", media.KindVideo, 3)
			v.Info.HasAudio = false
			d.References = refs(img("p.png"), v)
		}, AtReferences, "has no sound track"},
		{"panorama picture", func(d *Draft) {
			p := img("wide.png")
			p.Info = media.Info{Kind: media.KindImage, Width: 5000, Height: 1000}
			d.References = refs(p)
		}, AtReferences, "between 1:4 and 4:1"},
		{"video as first frame", func(d *Draft) { d.First = clip("v.mp4", media.KindVideo, 3) }, AtFirst, "not a picture"},
		{"broken first", func(d *Draft) { d.First = img("a.png"); d.First.State = MediaBroken; d.First.Note = "truncated PNG" }, AtFirst, "truncated PNG"},
		{"missing ref", func(d *Draft) { d.References = refs(img("a.png")); d.References[0].Media.State = MediaMissing }, AtReferences, "moved or deleted"},
		{"10 pictures", func(d *Draft) { d.References = refs(many(10, media.KindImage)...) }, AtReferences, "At most 9 picture references, got 10"},
		{"4 videos", func(d *Draft) { d.References = refs(many(4, media.KindVideo)...) }, AtReferences, "At most 3 video references, got 4"},
		{"4 audio", func(d *Draft) { d.References = refs(append(many(4, media.KindAudio), img("p"))...) }, AtReferences, "At most 3 audio clips, got 4"},
		{"13 files", func(d *Draft) {
			d.References = refs(append(append(many(9, media.KindImage), many(2, media.KindVideo)...), many(2, media.KindAudio)...)...)
		}, AtReferences, "At most 12 reference files in all, got 13"},
		{"audio alone", func(d *Draft) { d.References = refs(clip("a.wav", media.KindAudio, 3)) }, AtReferences, "needs at least one picture or video"},
		{"short clip", func(d *Draft) { d.References = refs(clip("v.mp4", media.KindVideo, 1.5)) }, AtReferences, "this one is 1.5 s"},
		{"long total", func(d *Draft) {
			d.References = refs(clip("a.mp4", media.KindVideo, 8), clip("b.mp4", media.KindVideo, 8))
		}, AtReferences, "these last 16.0 s"},
		{"bad canvas", func(d *Draft) { d.Settings.Width = 100 }, AtSettings, "multiples of 32"},
		{"huge canvas", func(d *Draft) { d.Settings.Width, d.Settings.Height = 2048, 2048 }, AtSettings, "larger than the model allows"},
		{"bad length", func(d *Draft) { d.Settings.Frames = 50 }, AtSettings, "not a legal length"},
		{"steps", func(d *Draft) { d.Settings.Speed.Steps = 1 }, AtSettings, "Steps 1 is out of range (2 to 1000)"},
		{"layers", func(d *Draft) { d.Settings.Speed.Layers = 30 }, AtSettings, "Layers 30"},
		{"reuse+core", func(d *Draft) { d.Settings.Speed.Reuse = 2; d.Settings.Speed.CoreReuse = 2 }, AtSettings, "can't both be above 1"},
		{"render aspect", func(d *Draft) { d.Settings.RenderWidth, d.Settings.RenderHeight = 512, 512 }, AtSettings, "another aspect"},
		{"render larger", func(d *Draft) {
			d.Settings.Width, d.Settings.Height = 512, 512
			d.Settings.RenderWidth, d.Settings.RenderHeight = 768, 768
		}, AtSettings, "larger than the canvas"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := base()
			c.edit(&d)
			ps := Check(d)
			if c.want == "" {
				if Blocking(ps) {
					t.Fatalf("unexpected errors: %v", ps)
				}
				return
			}
			for _, p := range ps {
				if p.Severity == Error && p.Where == c.where && strings.Contains(p.Message, c.want) {
					if p.Fix == "" {
						t.Errorf("problem %q has no fix", p.Message)
					}
					return
				}
			}
			t.Fatalf("no error at %d containing %q; got %v", c.where, c.want, ps)
		})
	}
}

func TestCheckPromptLabels(t *testing.T) {
	d := NewDraft()
	d.References = refs(img("a.png"), img("b.png"))
	d.Prompt = "<Picture 1> and <Picture 2> meet <Picture 3>; <Audio 1> plays."
	ps := Check(d)
	var msgs []string
	for _, p := range ps {
		if p.Where == AtPrompt {
			if p.Severity != Warning {
				t.Errorf("label problem is not a warning: %v", p)
			}
			msgs = append(msgs, p.Message)
		}
	}
	want := []string{
		"The prompt mentions <Picture 3>, but there are only 2 pictures.",
		"The prompt mentions <Audio 1>, but there is no sound clip.",
	}
	if strings.Join(msgs, "|") != strings.Join(want, "|") {
		t.Errorf("label warnings = %q, want %q", msgs, want)
	}
}

func TestLabelsAndTask(t *testing.T) {
	d := NewDraft()
	if d.Task() != "t2va" {
		t.Errorf("empty draft task %s", d.Task())
	}
	d.Last = img("z.png")
	if d.Task() != "fl2va" {
		t.Errorf("last-frame task %s", d.Task())
	}
	d.Last = Media{}
	d.References = refs(img("a"), clip("v", media.KindVideo, 3), img("b"), clip("s", media.KindAudio, 3), clip("w", media.KindVideo, 3))
	if d.Task() != "ref2va" {
		t.Errorf("reference task %s", d.Task())
	}
	got := strings.Join(Labels(d.References), ",")
	if got != "Picture 1,Video 1,Picture 2,Audio 1,Video 2" {
		t.Errorf("Labels = %s", got)
	}
	d.References[1].Silent = true
	d.References[4].Sound = clip("x.wav", media.KindAudio, 3)
	r := d.Request()
	var kinds []string
	for _, ref := range r.References {
		kinds = append(kinds, string(ref.Kind))
	}
	if strings.Join(kinds, ",") != "image,silent-video,image,audio,video-audio" || r.References[4].Audio != "/in/x.wav" {
		t.Errorf("request kinds = %v (%+v)", kinds, r.References[4])
	}
	if !r.SeedSet || r.Steps != 20 || r.Frames != 124 || r.Width != 1344 {
		t.Errorf("request settings = %+v", r)
	}
}

func TestTitle(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"A red fox walks through fresh snow. It stops.", "A red fox walks through fresh snow"},
		{"integrated_multimodal_description: [Shot 1] Photorealistic footage. A fox.", "Photorealistic footage"},
		{"", "Untitled"},
		{strings.Repeat("word ", 30), "word word word word word word word word word word word…"},
	} {
		if got := Title(c.in); got != c.want {
			t.Errorf("Title(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
