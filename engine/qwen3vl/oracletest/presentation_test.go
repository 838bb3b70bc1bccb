package oracletest

import (
	"fmt"
	"testing"

	"h3studio/engine/media"
	"h3studio/engine/prompt"
	"h3studio/engine/qwen3vl"
)

type presCase struct {
	Name string `json:"name"`
	Case struct {
		Task       string   `json:"task"`
		Prompt     string   `json:"prompt"`
		Keyframes  [][2]int `json:"keyframes"`
		References []struct {
			Kind       string `json:"kind"`
			Grid       [2]int `json:"grid"`
			Frames     int    `json:"frames"`
			Soundtrack bool   `json:"soundtrack"`
		} `json:"references"`
	} `json:"case"`
	IDs      []int `json:"ids"`
	Tags     []int `json:"tags"`
	Segments []struct {
		Text   *string `json:"text"`
		IDs    []int   `json:"ids"`
		Vision string  `json:"vision"`
	} `json:"segments"`
	ImageGrids [][3]int `json:"image_grid_thw"`
	VideoGrids [][3]int `json:"video_grid_thw"`
	Positions  [3][]int `json:"position_ids"`
}

type presDoc struct {
	SpecialIDs map[string]int `json:"special_ids"`
	Cases      []presCase     `json:"cases"`
}

// fixtureTokens is an Encoder that answers each text segment with the ids
// Hugging Face's tokenizer gave it in the fixture.
type fixtureTokens struct {
	seg     map[string][]int
	special map[string]int
}

func (f *fixtureTokens) Encode(s string) ([]int, error) {
	ids, ok := f.seg[s]
	if !ok {
		return nil, fmt.Errorf("segment %q is not in the fixture", s)
	}
	return ids, nil
}

func (f *fixtureTokens) TokenID(content string) (int, bool) {
	id, ok := f.special[content]
	return id, ok
}

func request(t *testing.T, c presCase) prompt.Request {
	t.Helper()
	var r prompt.Request
	r.Prompt = c.Case.Prompt
	switch c.Case.Task {
	case "t2va":
		r.Task = prompt.T2VA
	case "fl2va":
		r.Task = prompt.FL2VA
		for _, g := range c.Case.Keyframes {
			r.Keyframes = append(r.Keyframes, prompt.Grid{H: g[0], W: g[1]})
		}
	case "ref2va":
		r.Task = prompt.Ref2VA
		for _, ref := range c.Case.References {
			switch ref.Kind {
			case "image":
				r.References = append(r.References, prompt.Reference{Kind: prompt.Image, Grid: prompt.Grid{H: ref.Grid[0], W: ref.Grid[1]}})
			case "audio":
				r.References = append(r.References, prompt.Reference{Kind: prompt.Audio})
			case "video":
				blocks, err := prompt.SampleVideo(ref.Frames)
				if err != nil {
					t.Fatal(err)
				}
				r.References = append(r.References, prompt.Reference{Kind: prompt.Video, Grid: prompt.Grid{H: ref.Grid[0], W: ref.Grid[1]},
					Blocks: blocks, Soundtrack: ref.Soundtrack})
			}
		}
	}
	return r
}

// TestPresentation: engine/prompt lays out every case exactly as the
// generator did from the spec (ids, tags), and both engine/prompt and
// engine/qwen3vl give the M-RoPE positions transformers' get_rope_index
// computed for the real-token sequences.
func TestPresentation(t *testing.T) {
	var doc presDoc
	readJSON(t, "presentation.json", &doc)
	if len(doc.Cases) < 9 {
		t.Fatalf("%d cases", len(doc.Cases))
	}
	special := map[string]int{prompt.VisionStart: doc.SpecialIDs["vision_start"], prompt.VisionEnd: doc.SpecialIDs["vision_end"],
		prompt.ImagePad: doc.SpecialIDs["image_pad"], prompt.VideoPad: doc.SpecialIDs["video_pad"], prompt.EndOfText: 151643}
	cfg := qwen3vl.ReleasedConfig()
	for _, c := range doc.Cases {
		t.Run(c.Name, func(t *testing.T) {
			if c.Positions[0] == nil {
				t.Fatal("fixture has no positions")
			}
			tok := &fixtureTokens{seg: map[string][]int{}, special: special}
			for _, s := range c.Segments {
				if s.Text != nil {
					tok.seg[*s.Text] = s.IDs
				}
			}
			p, err := prompt.Present(tok, request(t, c), prompt.Options{})
			if err != nil {
				t.Fatal(err)
			}
			eq := func(what string, got, want []int) {
				t.Helper()
				if len(got) != len(want) {
					t.Fatalf("%s: %d rows, want %d", what, len(got), len(want))
				}
				for i := range want {
					if got[i] != want[i] {
						t.Fatalf("%s differs at row %d: %d, want %d", what, i, got[i], want[i])
					}
				}
			}
			eq("ids", p.IDs, c.IDs)
			eq("tags", p.Tags, c.Tags)
			for a := 0; a < 3; a++ {
				eq(fmt.Sprintf("prompt positions axis %d", a), p.Positions[a], c.Positions[a])
			}
			// The encoder's own path from ids and processor grids.
			ids := make([]int64, len(c.IDs))
			for i, v := range c.IDs {
				ids[i] = int64(v)
			}
			var images, videos []qwen3vl.Grid
			for _, g := range c.ImageGrids {
				images = append(images, qwen3vl.Grid{T: g[0], H: g[1], W: g[2]})
			}
			for _, g := range c.VideoGrids {
				videos = append(videos, qwen3vl.Grid{T: g[0], H: g[1], W: g[2]})
			}
			runs, err := cfg.VisionRuns(ids, images, videos)
			if err != nil {
				t.Fatal(err)
			}
			pos := cfg.PositionIDs(ids, runs)
			tags := cfg.Tags(ids)
			for i := range ids {
				if int(tags[i]) != c.Tags[i] {
					t.Fatalf("qwen3vl tag of row %d = %d, want %d", i, tags[i], c.Tags[i])
				}
				for a := 0; a < 3; a++ {
					if int(pos[a][i]) != c.Positions[a][i] {
						t.Fatalf("qwen3vl position (axis %d, row %d) = %d, want %d", a, i, pos[a][i], c.Positions[a][i])
					}
				}
			}
		})
	}
}

// TestPresentationRealTokens: the real Qwen3 tokenizer in Go gives every
// text segment (labels, timestamps, prompts) the ids Hugging Face gave it.
func TestPresentationRealTokens(t *testing.T) {
	tok := realTokenizer(t)
	var doc presDoc
	readJSON(t, "presentation.json", &doc)
	n := 0
	for _, c := range doc.Cases {
		for _, s := range c.Segments {
			if s.Text == nil {
				continue
			}
			got, err := tok.Encode(*s.Text)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(s.IDs) {
				t.Errorf("%s: %q → %v, want %v", c.Name, *s.Text, got, s.IDs)
			}
			n++
		}
	}
	t.Logf("%d segments", n)
}

type samplingDoc struct {
	Videos []struct {
		Frames int `json:"frames"`
		Blocks []struct {
			First, Second int
			Seconds       float64
			Label         string
			LabelIDs      []int `json:"label_ids"`
		} `json:"blocks"`
	} `json:"videos"`
	ErrataF1 []struct {
		Ref        int `json:"reference_frames"`
		Target     int `json:"target_frames"`
		QwenFrames int `json:"qwen_frames"`
		QwenBlocks int `json:"qwen_blocks"`
		VAEFrames  int `json:"vae_frames"`
	} `json:"errata_f1"`
}

// TestSampling: engine/prompt's 24 → 2 fps sampling, block timestamps and
// labels equal the generator's (Python's :.1f formatting), for 60 frame
// counts; the ERRATA F1 split (Qwen sees the target-truncated frames, the VAE
// their 17m+5 prefix) holds with engine/media's VAEFrames.
func TestSampling(t *testing.T) {
	var doc samplingDoc
	readJSON(t, "sampling.json", &doc)
	for _, v := range doc.Videos {
		blocks, err := prompt.SampleVideo(v.Frames)
		if err != nil {
			t.Fatalf("%d frames: %v", v.Frames, err)
		}
		if len(blocks) != len(v.Blocks) {
			t.Fatalf("%d frames: %d blocks, want %d", v.Frames, len(blocks), len(v.Blocks))
		}
		for i, b := range v.Blocks {
			g := blocks[i]
			if g.First != b.First || g.Second != b.Second || g.Seconds != b.Seconds || prompt.TimestampLabel(g.Seconds) != b.Label {
				t.Fatalf("%d frames, block %d: %+v %q, want %+v", v.Frames, i, g, prompt.TimestampLabel(g.Seconds), b)
			}
		}
	}
	if _, err := prompt.SampleVideo(12); err == nil {
		t.Fatal("12 frames (one 2 fps sample) accepted")
	}
	for _, f := range doc.ErrataF1 {
		qf := min(f.Ref, f.Target)
		blocks, err := prompt.SampleVideo(qf)
		if err != nil || qf != f.QwenFrames || len(blocks) != f.QwenBlocks {
			t.Fatalf("F1 %+v: %d frames, %d blocks, %v", f, qf, len(blocks), err)
		}
		if got := media.VAEFrames(qf); got != f.VAEFrames {
			t.Fatalf("F1 %+v: VAE frames %d", f, got)
		}
	}
}

// TestSamplingLabelTokens: the timestamp labels tokenize as in Hugging Face.
func TestSamplingLabelTokens(t *testing.T) {
	tok := realTokenizer(t)
	var doc samplingDoc
	readJSON(t, "sampling.json", &doc)
	seen := map[string]bool{}
	for _, v := range doc.Videos {
		for _, b := range v.Blocks {
			if seen[b.Label] {
				continue
			}
			seen[b.Label] = true
			got, err := tok.Encode(b.Label)
			if err != nil || fmt.Sprint(got) != fmt.Sprint(b.LabelIDs) {
				t.Errorf("%q → %v %v, want %v", b.Label, got, err, b.LabelIDs)
			}
		}
	}
	t.Logf("%d distinct labels", len(seen))
}
