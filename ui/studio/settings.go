package studio

import (
	"fmt"
	"math"
	"strings"

	"h3studio/engine"
	"h3studio/engine/media"
)

// Legal clip lengths: the model works on 17n+5 frames at 24 fps, from 22
// (0.92 s) to 362 (15.08 s). Shorter requests are refused, longer ones too.
const (
	MinFrames = 22
	MaxFrames = 362
)

// AlignFrames rounds a frame count up to the next legal length and clamps it
// into [MinFrames, MaxFrames].
func AlignFrames(n int) int {
	if n <= MinFrames {
		return MinFrames
	}
	if n >= MaxFrames {
		return MaxFrames
	}
	k := (n - 5 + 16) / 17
	return 17*k + 5
}

// FramesForSeconds is the legal length for a duration: seconds at 24 fps,
// rounded up to 17n+5 (5 s → 124 frames, 5.17 s).
func FramesForSeconds(s float64) int {
	if s <= 0 || math.IsNaN(s) {
		return MinFrames
	}
	return AlignFrames(int(math.Ceil(s*media.FPS - 1e-9)))
}

// Seconds is a frame count's duration at 24 fps.
func Seconds(frames int) float64 { return float64(frames) / media.FPS }

// Lengths lists every legal frame count, shortest first.
func Lengths() []int {
	var l []int
	for n := MinFrames; n <= MaxFrames; n += 17 {
		l = append(l, n)
	}
	return l
}

// FormatLength writes a length as the length control shows it: "5.17 s (124 frames)".
func FormatLength(frames int) string {
	return fmt.Sprintf("%.2f s (%d frames)", Seconds(frames), frames)
}

// Canvas is an output size preset.
type Canvas struct {
	ID            string // stable key stored in settings and sidecars
	Aspect        string // "16:9"
	Label         string // what the menu shows
	Width, Height int
	Note          string // "development size", "demo checkpoint"
}

// Canvases are the output sizes offered, the released model's 768p class
// first (its shorter side is 768 and the area stays within 768·1344 pixels),
// then smaller sizes for quick work.
var Canvases = []Canvas{
	{ID: "16x9-768", Aspect: "16:9", Width: 1344, Height: 768},
	{ID: "9x16-768", Aspect: "9:16", Width: 768, Height: 1344},
	{ID: "4x3-768", Aspect: "4:3", Width: 1024, Height: 768},
	{ID: "3x4-768", Aspect: "3:4", Width: 768, Height: 1024},
	{ID: "1x1-768", Aspect: "1:1", Width: 768, Height: 768},
	{ID: "21x9-672", Aspect: "21:9", Width: 1536, Height: 672},
	{ID: "16x9-480", Aspect: "16:9", Width: 864, Height: 480, Note: "quick"},
	{ID: "1x1-512", Aspect: "1:1", Width: 512, Height: 512, Note: "development size"},
	{ID: "1x1-256", Aspect: "1:1", Width: 256, Height: 256, Note: "demo checkpoint"},
}

func init() {
	for i := range Canvases {
		c := &Canvases[i]
		c.Label = fmt.Sprintf("%s · %d×%d", c.Aspect, c.Width, c.Height)
		if c.Note != "" {
			c.Label += " (" + c.Note + ")"
		}
	}
}

// CanvasByID finds a canvas preset.
func CanvasByID(id string) (Canvas, bool) {
	for _, c := range Canvases {
		if c.ID == id {
			return c, true
		}
	}
	return Canvas{}, false
}

// CanvasFor finds the preset of a size, or describes a custom one.
func CanvasFor(w, h int) Canvas {
	for _, c := range Canvases {
		if c.Width == w && c.Height == h {
			return c
		}
	}
	return Canvas{ID: "custom", Aspect: aspectOf(w, h), Label: fmt.Sprintf("%d×%d (custom)", w, h), Width: w, Height: h}
}

func aspectOf(w, h int) string {
	if w <= 0 || h <= 0 {
		return "?"
	}
	g := gcd(w, h)
	return fmt.Sprintf("%d:%d", w/g, h/g)
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// Speed is the set of speed controls a quality preset fills. Every field
// has the range h3.c allows (see Ranges).
type Speed struct {
	Steps          int  `json:"steps"`           // denoising passes, 2..1000
	Reuse          int  `json:"reuse"`           // velocity reuse, 1..3
	Layers         int  `json:"layers"`          // active DiT blocks, 35..50
	CoreReuse      int  `json:"core_reuse"`      // block residual reuse, 1..6 (not with Reuse > 1)
	TokenReduction bool `json:"token_reduction"` // h3.c --token-reduction
	// RenderScale shrinks the internal canvas (same aspect, multiples of
	// 32); 1 renders at the output size.
	RenderScale float64 `json:"render_scale"`
}

// Range is a control's allowed interval.
type Range struct{ Min, Max int }

// Ranges of the speed controls (engine Plan rules).
var (
	StepsRange     = Range{2, 1000}
	ReuseRange     = Range{1, 3}
	LayersRange    = Range{35, 50}
	CoreReuseRange = Range{1, 6}
)

// Quality is a quality preset and the speed controls it stands for.
type Quality struct {
	Preset engine.Preset
	Name   string // "Preview"
	Note   string // what it changes besides time
	Speed  Speed
}

// Summary says what a preset costs relative to Default ("about 5× faster —
// may change composition"), from RelativeCost.
func (q Quality) Summary() string {
	s := SpeedNote(RelativeCost(q.Speed))
	if q.Note != "" {
		s += " — " + q.Note
	}
	return s
}

// SpeedNote describes a relative cost: "about 3× faster", "about 2.5×
// slower", "the reference point".
func SpeedNote(rel float64) string {
	switch {
	case rel <= 0:
		return ""
	case rel > 0.85 && rel < 1.18:
		return "the usual speed"
	case rel < 1 && 1/rel < 1.5:
		return "a little faster"
	case rel < 1:
		return "about " + roughFactor(1/rel) + "× faster"
	case rel < 1.5:
		return "a little slower"
	default:
		return "about " + roughFactor(rel) + "× slower"
	}
}

func roughFactor(f float64) string {
	if f < 3 {
		return strings.TrimSuffix(fmt.Sprintf("%.1f", math.Round(f*2)/2), ".0") // "2", "2.5"
	}
	return fmt.Sprintf("%.0f", math.Round(f))
}

// Qualities are the presets, slowest first, with the names and notes the
// studio shows. Their controls are the engine's one table of presets
// (engine.Presets), the same the command line's --preset uses, so a take
// made with "Preview" here is the take `h3studio generate --preset
// preview` makes; a take records the preset's name and its values.
var Qualities = []Quality{
	{Preset: engine.PresetReference, Name: "Reference", Note: "50 steps on the exact path, for comparisons", Speed: presetSpeed(engine.PresetReference)},
	{Preset: engine.PresetDefault, Name: "Default", Note: "20 steps on the exact path", Speed: presetSpeed(engine.PresetDefault)},
	{Preset: engine.PresetFast, Name: "Fast", Note: "small changes in detail", Speed: presetSpeed(engine.PresetFast)},
	{Preset: engine.PresetPreview, Name: "Preview", Note: "may change composition", Speed: presetSpeed(engine.PresetPreview)},
}

// presetSpeed is a preset's controls from engine.Presets; Layers counts
// the released model's 50 blocks (scaled for another depth by the engine).
func presetSpeed(p engine.Preset) Speed {
	ps := engine.Presets[p]
	return Speed{Steps: ps.Steps, Reuse: ps.Reuse, CoreReuse: ps.CoreReuse,
		Layers: int(math.Round(float64(engine.MaxLayers) * ps.LayersFraction)), RenderScale: 1}
}

// QualityOf returns a preset's description (Default when unknown).
func QualityOf(p engine.Preset) Quality {
	for _, q := range Qualities {
		if q.Preset == p {
			return q
		}
	}
	return Qualities[1]
}

// RelativeCost is a rough model of a request's denoising cost relative to
// Default at the same canvas and length: forwards × active layers × render
// pixels (attention makes it a little superlinear). The UI prefers the
// engine's own estimates (Plan.Estimate) when it has them.
func RelativeCost(s Speed) float64 {
	fwd := float64(s.Steps)
	if s.Reuse > 1 {
		fwd = math.Ceil(float64(s.Steps) / float64(s.Reuse))
	}
	core := 1.0
	if s.CoreReuse > 1 {
		core = 0.35 + 0.65/float64(s.CoreReuse)
	}
	layers := float64(s.Layers) / 50
	px := 1.0
	if s.RenderScale > 0 && s.RenderScale < 1 {
		px = math.Pow(s.RenderScale*s.RenderScale, 1.15)
	}
	tok := 1.0
	if s.TokenReduction {
		tok = 0.75
	}
	return fwd / 20 * core * layers * px * tok
}

// RenderSize is the internal canvas for an output canvas and a scale: the
// largest size with exactly the output's aspect, both sides multiples of 32,
// no larger than scale × output. It returns the output size when no smaller
// exact size exists (or scale ≥ 1).
func RenderSize(w, h int, scale float64) (int, int) {
	if scale >= 1 || scale <= 0 || w <= 0 || h <= 0 {
		return w, h
	}
	g := gcd(w, h)
	aw, ah := w/g, h/g // smallest exact aspect step
	// Sizes k·aw × k·ah must be multiples of 32 on both sides.
	step := lcm(32/gcd(32, aw), 32/gcd(32, ah))
	best := 0
	for k := step; k*aw <= w && k*ah <= h; k += step {
		if float64(k*aw) <= scale*float64(w)+0.5 {
			best = k
		}
	}
	if best == 0 {
		return w, h
	}
	return best * aw, best * ah
}

func lcm(a, b int) int { return a / gcd(a, b) * b }

// Settings are a draft's generation settings.
type Settings struct {
	Canvas        string `json:"canvas"` // Canvas ID, or "custom"
	Width, Height int
	Frames        int           `json:"frames"`
	Quality       engine.Preset `json:"quality"`
	// Speed holds the controls; equal to the preset's unless the user
	// changed them under Advanced (then Custom reports true).
	Speed Speed `json:"speed"`
	// RenderWidth/Height: explicit internal canvas (0: from Speed.RenderScale).
	RenderWidth, RenderHeight int
	Seed                      uint64            `json:"seed"`
	Memory                    engine.MemoryMode `json:"memory"`
	// MemoryQuality is the automatic memory mode's quality floor
	// (MemoryQualities; "": balanced).
	MemoryQuality engine.QualityFloor `json:"memory_quality,omitempty"`
	Preview       bool                `json:"preview"` // per-step preview frames
	// LoRAs is the LoRA library (lora.go), Turbo the Turbo preset's passes
	// (0: off).
	LoRAs []LoRAChoice `json:"loras,omitempty"`
	Turbo int          `json:"turbo,omitempty"`
	// RefImageSize and RefVideoCanvas size Ref2VA picture and video
	// references (RefSizes lists them with their cost).
	RefImageSize   media.RefImagePolicy `json:"ref_image_size,omitempty"`
	RefVideoCanvas media.RefVideoPolicy `json:"ref_video_canvas,omitempty"`
}

// DefaultSettings: 16:9 at 768p, 5.17 s, Default quality, seed 42, memory
// mode chosen by the engine, previews on.
func DefaultSettings() Settings {
	c := Canvases[0]
	return Settings{
		Canvas: c.ID, Width: c.Width, Height: c.Height,
		Frames:  FramesForSeconds(5),
		Quality: engine.PresetDefault, Speed: QualityOf(engine.PresetDefault).Speed,
		Seed: 42, Memory: engine.MemoryAuto, Preview: true,
	}
}

// DemoSettings suit the demo checkpoint: a tiny canvas and the shortest
// length, so a take is done in seconds on the CPU.
func DemoSettings() Settings {
	s := DefaultSettings()
	c, _ := CanvasByID("1x1-256")
	s.Canvas, s.Width, s.Height = c.ID, c.Width, c.Height
	s.Frames = MinFrames
	s = s.WithQuality(engine.PresetPreview)
	s.Speed.RenderScale = 1
	// References sized to the tiny canvas: the reference sizes (a 2048-px
	// picture, a 768-class video canvas) took minutes on the demo.
	s.RefImageSize, s.RefVideoCanvas = media.RefImageMatch, media.RefVideoH3C
	return s
}

// WithQuality selects a preset and resets the speed controls to it.
func (s Settings) WithQuality(p engine.Preset) Settings {
	s.Quality = QualityOf(p).Preset
	s.Speed = QualityOf(p).Speed
	s.RenderWidth, s.RenderHeight = 0, 0
	return s
}

// WithCanvas selects an output canvas preset (or a custom size when id is
// unknown and w, h are given).
func (s Settings) WithCanvas(id string, w, h int) Settings {
	if c, ok := CanvasByID(id); ok {
		s.Canvas, s.Width, s.Height = c.ID, c.Width, c.Height
	} else {
		c := CanvasFor(w, h)
		s.Canvas, s.Width, s.Height = c.ID, w, h
	}
	s.RenderWidth, s.RenderHeight = 0, 0
	return s
}

// Custom reports whether the speed controls differ from the preset's.
func (s Settings) Custom() bool {
	return s.Speed != QualityOf(s.Quality).Speed || s.RenderWidth != 0 || s.RenderHeight != 0
}

// Render is the internal canvas the request will use.
func (s Settings) Render() (int, int) {
	if s.RenderWidth > 0 && s.RenderHeight > 0 {
		return s.RenderWidth, s.RenderHeight
	}
	return RenderSize(s.Width, s.Height, s.Speed.RenderScale)
}
