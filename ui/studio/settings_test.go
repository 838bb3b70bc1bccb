package studio

import (
	"testing"

	"h3studio/engine"
	"h3studio/engine/media"
)

func TestAlignFrames(t *testing.T) {
	for _, c := range []struct{ in, want int }{
		{0, 22}, {5, 22}, {22, 22}, {23, 39}, {39, 39}, {50, 56}, {56, 56}, {120, 124}, {124, 124},
		{125, 141}, {361, 362}, {362, 362}, {400, 362},
	} {
		if got := AlignFrames(c.in); got != c.want {
			t.Errorf("AlignFrames(%d) = %d, want %d", c.in, got, c.want)
		}
	}
}

func TestFramesForSeconds(t *testing.T) {
	for _, c := range []struct {
		s    float64
		want int
	}{{5, 124}, {4.45, 107}, {10, 243}, {15, 362}, {0.5, 22}, {0, 22}, {20, 362}, {124.0 / 24, 124}} {
		if got := FramesForSeconds(c.s); got != c.want {
			t.Errorf("FramesForSeconds(%v) = %d, want %d", c.s, got, c.want)
		}
	}
	if got := FormatLength(124); got != "5.17 s (124 frames)" {
		t.Errorf("FormatLength(124) = %q", got)
	}
	ls := Lengths()
	if len(ls) != 21 || ls[0] != 22 || ls[len(ls)-1] != 362 {
		t.Errorf("Lengths() = %v", ls)
	}
}

func TestCanvasesAreLegal(t *testing.T) {
	for _, c := range Canvases {
		if c.Width%32 != 0 || c.Height%32 != 0 || c.Width*c.Height > MaxCanvasPixels {
			t.Errorf("canvas %s %d×%d is not legal", c.ID, c.Width, c.Height)
		}
		if got := CanvasFor(c.Width, c.Height); got.ID != c.ID {
			t.Errorf("CanvasFor(%d, %d) = %s, want %s", c.Width, c.Height, got.ID, c.ID)
		}
	}
	if c := CanvasFor(640, 320); c.ID != "custom" || c.Aspect != "2:1" {
		t.Errorf("CanvasFor(640, 320) = %+v", c)
	}
}

func TestRenderSize(t *testing.T) {
	for _, c := range []struct {
		w, h   int
		scale  float64
		ww, wh int
	}{
		{1344, 768, 0.75, 896, 512},
		{768, 768, 0.75, 576, 576},
		{1024, 768, 0.75, 768, 576},
		{512, 512, 0.5, 256, 256},
		{1344, 768, 1, 1344, 768},
		{256, 256, 0.1, 256, 256}, // no exact smaller size: keep the output
	} {
		gw, gh := RenderSize(c.w, c.h, c.scale)
		if gw != c.ww || gh != c.wh {
			t.Errorf("RenderSize(%d, %d, %v) = %d×%d, want %d×%d", c.w, c.h, c.scale, gw, gh, c.ww, c.wh)
		}
		if gw%32 != 0 || gh%32 != 0 || gw*c.h != gh*c.w {
			t.Errorf("RenderSize(%d, %d, %v) = %d×%d is not an exact-aspect multiple of 32", c.w, c.h, c.scale, gw, gh)
		}
	}
}

func TestQualities(t *testing.T) {
	for _, q := range Qualities {
		d := NewDraft()
		d.Prompt = "x"
		d.Settings = d.Settings.WithQuality(q.Preset)
		if ps := Check(d); Blocking(ps) {
			t.Errorf("preset %s breaks a rule: %v", q.Name, ps)
		}
		if d.Settings.Custom() {
			t.Errorf("preset %s reports custom controls", q.Name)
		}
	}
	// Presets are ordered slowest first, and the notes say so.
	prev := 1e9
	for _, q := range Qualities {
		c := RelativeCost(q.Speed)
		if c >= prev {
			t.Errorf("preset %s (cost %.2f) is not faster than the one before (%.2f)", q.Name, c, prev)
		}
		prev = c
	}
	if s := QualityOf(engine.PresetPreview).Summary(); s != "about 4× faster — may change composition" {
		t.Errorf("Preview summary = %q", s)
	}
	if s := QualityOf(engine.PresetReference).Summary(); s != "about 2.5× slower — 50 steps on the exact path, for comparisons" {
		t.Errorf("Reference summary = %q", s)
	}
	for rel, want := range map[float64]string{0.5: "about 2× faster", 0.4: "about 2.5× faster", 2: "about 2× slower", 1: "the usual speed", 0.25: "about 4× faster"} {
		if got := SpeedNote(rel); got != want {
			t.Errorf("SpeedNote(%v) = %q, want %q", rel, got, want)
		}
	}
	s := DefaultSettings()
	s.Speed.Steps = 30
	if !s.Custom() {
		t.Error("changed steps not reported as custom")
	}
	if s.WithQuality(engine.PresetDefault).Custom() {
		t.Error("WithQuality did not reset the controls")
	}
}

// TestOnePresetTable: the studio's qualities are the engine's presets
// (the command line's --preset): the same steps, reuse, core reuse and
// blocks for every name.
func TestOnePresetTable(t *testing.T) {
	for _, q := range Qualities {
		ps, ok := engine.Presets[q.Preset]
		if !ok {
			t.Fatalf("%s is not an engine preset", q.Preset)
		}
		if q.Speed.Steps != ps.Steps || q.Speed.Reuse != ps.Reuse || q.Speed.CoreReuse != ps.CoreReuse ||
			q.Speed.Layers != int(float64(engine.MaxLayers)*ps.LayersFraction+0.5) || q.Speed.RenderScale != 1 {
			t.Errorf("%s: studio %+v, engine %+v", q.Name, q.Speed, ps)
		}
	}
	if len(Qualities) != len(engine.Presets) {
		t.Errorf("%d studio qualities, %d engine presets", len(Qualities), len(engine.Presets))
	}
}

// TestDemoSizesReferencesToTheCanvas: the demo settings size references to
// the tiny canvas (a reference-size picture took minutes on the demo), the
// choice reaches the engine request, and SetRefSize changes it.
func TestDemoSizesReferencesToTheCanvas(t *testing.T) {
	d := NewDraft()
	d.Settings = DemoSettings()
	if rs := RefSizeOf(d.Settings); rs.Image != media.RefImageMatch || rs.Video != media.RefVideoH3C {
		t.Errorf("demo reference size %+v", rs)
	}
	r := d.Request()
	if r.RefImageSize != media.RefImageMatch || r.RefVideoCanvas != media.RefVideoH3C {
		t.Errorf("request %q %q", r.RefImageSize, r.RefVideoCanvas)
	}
	if RefSizeOf(DefaultSettings()).Name != RefSizes[0].Name {
		t.Error("the default is not the reference size")
	}
}
