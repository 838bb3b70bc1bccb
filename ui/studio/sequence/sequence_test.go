package sequence

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func clip(src string, in, out float64) Clip {
	return Clip{Source: src, In: in, Out: out, Transition: Transition{Kind: Cut}}
}

func sources(s Sequence) []string {
	var out []string
	for _, c := range s.Clips {
		out = append(out, c.Source)
	}
	return out
}

func TestOrdering(t *testing.T) {
	e := NewEditor("", Sequence{})
	for _, s := range []string{"a", "b", "c"} {
		if err := e.Append(clip(s, 0, 1)); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Insert(1, clip("x", 0, 1)); err != nil {
		t.Fatal(err)
	}
	if got := sources(e.Sequence()); !reflect.DeepEqual(got, []string{"a", "x", "b", "c"}) {
		t.Fatalf("after insert: %v", got)
	}
	steps := []struct {
		from, to int
		want     []string
	}{
		{0, 3, []string{"x", "b", "c", "a"}},
		{3, 0, []string{"a", "x", "b", "c"}},
		{1, 2, []string{"a", "b", "x", "c"}},
		{2, 99, []string{"a", "b", "c", "x"}}, // clamped to the end
	}
	for _, st := range steps {
		if err := e.Move(st.from, st.to); err != nil {
			t.Fatal(err)
		}
		if got := sources(e.Sequence()); !reflect.DeepEqual(got, st.want) {
			t.Fatalf("move %d→%d: %v, want %v", st.from, st.to, got, st.want)
		}
	}
	if err := e.Remove(3); err != nil {
		t.Fatal(err)
	}
	if err := e.Move(7, 0); err == nil {
		t.Error("moving a clip that does not exist succeeded")
	}
	if got := sources(e.Sequence()); !reflect.DeepEqual(got, []string{"a", "b", "c"}) {
		t.Fatalf("after remove: %v", got)
	}
}

func TestTrimSnapsToFrames(t *testing.T) {
	e := NewEditor("", Sequence{})
	e.SetLength("a", 48) // 2 s
	if err := e.Append(Clip{Source: "a"}); err != nil {
		t.Fatal(err)
	}
	if c := e.Sequence().Clips[0]; c.Out != 2 || c.Frames() != 48 {
		t.Fatalf("a clip without out point gets its source's length: %+v", c)
	}
	cases := []struct {
		in, out         float64
		wantIn, wantOut int
	}{
		{0.25, 1.5, 6, 36},
		{0.26, 1.51, 6, 36},   // nearest frame
		{0.2292, 1.52, 6, 36}, // 5.5 → 6, 36.48 → 36
		{-1, 5, 0, 48},        // bounded by the source
		{1, 1, 24, 25},        // at least one frame
		{3, 3, 47, 48},        // …within the source
	}
	for _, c := range cases {
		if err := e.Trim(0, c.in, c.out); err != nil {
			t.Fatal(err)
		}
		cl := e.Sequence().Clips[0]
		if cl.InFrame() != c.wantIn || cl.OutFrame() != c.wantOut {
			t.Errorf("trim %v…%v: frames %d…%d, want %d…%d", c.in, c.out, cl.InFrame(), cl.OutFrame(), c.wantIn, c.wantOut)
		}
		if cl.In*24 != float64(cl.InFrame()) || cl.Out*24 != float64(cl.OutFrame()) {
			t.Errorf("trim %v…%v: stored %v…%v is off the frame grid", c.in, c.out, cl.In, cl.Out)
		}
	}
}

func TestCrossfadeLengths(t *testing.T) {
	s := Sequence{Version: 1, Clips: []Clip{
		{Source: "a", In: 0.25, Out: 1.5, Transition: Transition{Kind: Crossfade, Seconds: 0.5}}, // 30 frames, fade 12
		{Source: "b", In: 0, Out: 1.25, Transition: Transition{Kind: Crossfade, Seconds: 5}},     // 30 frames, fade clamped
		{Source: "c", In: 0, Out: 0.5, Transition: Transition{Kind: Crossfade, Seconds: 1}},      // 12 frames; last: no fade
	}}
	s.Normalize()
	spans, total := Layout(s, nil)
	want := []Span{{0, 30, 12}, {18, 30, 12}, {36, 12, 0}}
	// b's fade is at most what is left after a's fade (30−12 = 18) and at
	// most c's length (12).
	if !reflect.DeepEqual(spans, want) || total != 48 {
		t.Fatalf("layout %v total %d, want %v total 48", spans, total, want)
	}
	// a cut carries no seconds
	s.Clips[0].Transition = Transition{Kind: Cut, Seconds: 0.5}
	s.Normalize()
	if s.Clips[0].FadeFrames() != 0 || s.Clips[0].Transition.Seconds != 0 {
		t.Errorf("a cut has a fade: %+v", s.Clips[0].Transition)
	}
	spans, total = Layout(s, nil)
	if spans[1].Start != 30 || total != 30+30+12-12 {
		t.Errorf("after a cut: %v total %d", spans, total)
	}
	// what the timeline shows at a frame: the later clip inside a fade
	if c, f, ok := At(spans, s, 31); !ok || c != 1 || f != 1 {
		t.Errorf("At(31) = clip %d frame %d ok %v", c, f, ok)
	}
	if c, f, ok := At(spans, s, 29); !ok || c != 0 || f != 6+29 {
		t.Errorf("At(29) = clip %d frame %d ok %v", c, f, ok)
	}
	if _, _, ok := At(spans, s, total); ok {
		t.Error("At(total) is inside the sequence")
	}
}

func TestUndoRedo(t *testing.T) {
	path := filepath.Join(t.TempDir(), "Sequences", "Film", File)
	e := NewEditor(path, Sequence{})
	e.Append(clip("a", 0, 1))
	e.Append(clip("b", 0, 2))
	e.Trim(1, 0.5, 1.5)
	e.SetTransition(0, Crossfade, 0.25)
	e.SetMute(1, true)
	states := []Sequence{}
	// walk back through every edit and forward again
	for e.CanUndo() {
		states = append(states, e.Sequence())
		if err := e.Undo(); err != nil {
			t.Fatal(err)
		}
	}
	if len(states) != 5 || len(e.Sequence().Clips) != 0 {
		t.Fatalf("undo: %d states, %d clips left", len(states), len(e.Sequence().Clips))
	}
	for i := len(states) - 1; i >= 0; i-- {
		if err := e.Redo(); err != nil {
			t.Fatal(err)
		}
		if got := e.Sequence(); !reflect.DeepEqual(got, states[i]) {
			t.Fatalf("redo %d: %+v, want %+v", i, got, states[i])
		}
	}
	if e.CanRedo() {
		t.Error("redo left after redoing everything")
	}
	// the file follows every step
	onDisk, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(onDisk, e.Sequence()) {
		t.Errorf("file %+v, editor %+v", onDisk, e.Sequence())
	}
	e.Undo()
	e.Append(clip("c", 0, 1)) // a new edit drops the redo history
	if e.CanRedo() {
		t.Error("redo survives a new edit")
	}
	// a refused edit changes nothing and adds no undo step
	before := e.Sequence()
	if err := e.SetTransition(0, "wipe", 1); err == nil {
		t.Error("an unknown transition was accepted")
	}
	if e.Undo(); !reflect.DeepEqual(e.Sequence().Clips[:1], before.Clips[:1]) || len(e.Sequence().Clips) != len(before.Clips)-1 {
		t.Error("a refused edit left an undo step")
	}
}

func TestJSONRoundTrip(t *testing.T) {
	in := `{"version": 1, "name": "Beach", "clips": [
	  {"source": "take1/out.mp4", "in": 0.25, "out": 1.5, "mute": false, "transition": {"kind": "crossfade", "seconds": 0.5}},
	  {"source": "/abs/take2", "in": 0.01, "out": 1.26, "mute": true, "transition": {"kind": "cut", "seconds": 0}, "title": "Waves"}
	], "audio": {"source": "music.mp3", "gain_db": -6}}`
	s, err := Parse([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if s.Clips[1].In != 0 || s.Clips[1].Out != 1.25 {
		t.Errorf("trims not snapped on reading: %+v", s.Clips[1])
	}
	b, err := s.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	s2, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(s, s2) {
		t.Fatalf("round trip:\n%+v\n%+v", s, s2)
	}
	if g := s.Audio.Gain(); g < 0.501 || g > 0.502 {
		t.Errorf("−6 dB gain = %v", g)
	}
	bad := map[string]string{
		`{"version": 2, "clips": []}`:                                                                              "version",
		`{"version": 1, "clips": [{"source": "", "in": 0, "out": 1}]}`:                                             "clips[0].source",
		`{"version": 1, "clips": [{"source": "a", "in": 1, "out": 0.5}]}`:                                          "clips[0].out",
		`{"version": 1, "clips": [{"source": "a", "in": -1, "out": 1}]}`:                                           "clips[0].in",
		`{"version": 1, "clips": [{"source": "a", "out": 1, "transition": {"kind": "wipe"}}]}`:                     "clips[0].transition.kind",
		`{"version": 1, "clips": [{"source": "a", "out": 1, "transition": {"kind": "crossfade", "seconds": -1}}]}`: "clips[0].transition.seconds",
		`{"version": 1, "clips": [], "audio": {"source": "m.wav", "gain_db": 100}}`:                                "audio.gain_db",
		`{"version": 1, "clips": [{"source": "a", "out": 1, "speed": 2}]}`:                                         "speed",
		`{"version": 1, "clips": [] } {}`:                                                                          "after",
	}
	for text, field := range bad {
		if _, err := Parse([]byte(text)); err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("%s: error %v does not name %s", text, err, field)
		}
	}
}

func TestMissingTakes(t *testing.T) {
	dir := t.TempDir()
	seq := filepath.Join(dir, "Sequences", "Film", File)
	take := filepath.Join(dir, "take-1")
	os.MkdirAll(take, 0o755)
	os.WriteFile(filepath.Join(take, TakeVideoFile), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(take, TakeSoundFile), []byte("x"), 0o644)
	os.MkdirAll(filepath.Join(dir, "empty-take"), 0o755)
	rel := RelSource(seq, take)
	if rel != "../../take-1" {
		t.Fatalf("RelSource = %q", rel)
	}
	f, err := Locate(seq, 0, rel)
	if err != nil || f.Video != filepath.Join(take, TakeVideoFile) || f.Sound != filepath.Join(take, TakeSoundFile) {
		t.Fatalf("Locate: %+v %v", f, err)
	}
	s := Sequence{Version: 1, Clips: []Clip{
		clip(rel, 0, 1), clip("../../gone", 0, 1), clip(RelSource(seq, filepath.Join(dir, "empty-take")), 0, 1),
	}, Audio: &Track{Source: "/nowhere/music.wav"}}
	m := Missing(seq, s)
	if len(m) != 2 || m[0].Clip != 1 || m[1].Clip != -1 {
		t.Fatalf("missing: %v", m)
	}
	for _, e := range m {
		if !errors.Is(e, ErrMissing) || !strings.Contains(e.Error(), e.Source) {
			t.Errorf("%v does not name its source", e)
		}
	}
	// a take folder without an MP4 is there (it plays) but can't be exported
	if _, err := Locate(seq, 2, s.Clips[2].Source); err == nil || errors.Is(err, ErrMissing) || !strings.Contains(err.Error(), "has no video.mp4") {
		t.Errorf("an empty take folder: %v", err)
	}
	// the export refuses, naming all of them, before opening anything
	_, err = Compose(seq, s, nil)
	if !errors.Is(err, ErrMissing) || !strings.Contains(err.Error(), "gone") || !strings.Contains(err.Error(), "music.wav") {
		t.Errorf("Compose: %v", err)
	}
	// a missing take keeps its place and length in the layout (a gap)
	spans, total := Layout(s, nil)
	if spans[1].Start != 24 || spans[1].Frames != 24 || total != 72 {
		t.Errorf("gap layout %v %d", spans, total)
	}
}

// TestEditsCountsChanges: every change, undo and redo counts once; a
// refused edit and an undo with nothing to undo do not.
func TestEditsCountsChanges(t *testing.T) {
	e := NewEditor("", Sequence{})
	if e.Edits() != 0 {
		t.Fatalf("a new editor counts %d edits", e.Edits())
	}
	e.Undo()
	if err := e.Append(clip("a", 0, 1)); err != nil {
		t.Fatal(err)
	}
	if err := e.Remove(5); err == nil {
		t.Fatal("removing clip 6 of 1 succeeded")
	}
	e.Undo()
	e.Redo()
	if got := e.Edits(); got != 3 {
		t.Errorf("an append, an undo and a redo counted %d edits", got)
	}
}
