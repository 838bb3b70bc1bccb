package layout

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"strings"
	"testing"
)

func tags(n int, vision ...int) []int64 {
	t := make([]int64, n)
	for i := range t {
		t[i] = TagText
	}
	for _, v := range vision {
		t[v] = TagVideo
	}
	return t
}

type checksums struct {
	sum, weighted [3]float64
}

func positionChecksums(l *Layout) checksums {
	var c checksums
	for i := 0; i < l.Rows(); i++ {
		p := l.Position(i)
		for a := range 3 {
			c.sum[a] += p[a]
			c.weighted[a] += float64(i+1) * p[a]
		}
	}
	return c
}

func closeRel(got, want, rel float64) bool {
	return math.Abs(got-want) <= rel*math.Max(1, math.Abs(want))
}

type seg struct {
	kind        SegmentKind
	start, stop int
}

func checkSegments(t *testing.T, l *Layout, want []seg) {
	t.Helper()
	if len(l.Segments) != len(want) {
		t.Fatalf("%d segments %v, want %d", len(l.Segments), l.Segments, len(want))
	}
	for i, w := range want {
		s := l.Segments[i]
		if s.Kind != w.kind || s.Start != w.start || s.Stop != w.stop {
			t.Errorf("segment %d = %v [%d,%d), want %v [%d,%d)", i, s.Kind, s.Start, s.Stop, w.kind, w.start, w.stop)
		}
	}
}

// The validation vectors of spec H3-DIT.md §6.7 (h3.c's host tests,
// reproduced with the reference formulas).
func TestValidationVectors(t *testing.T) {
	cases := []struct {
		name     string
		spec     Spec
		rows     int
		segs     []seg
		sum      [3]float64
		weightT  float64
		condRows [2]int
	}{
		{
			name: "t2va",
			spec: Spec{TextTags: tags(12), Target: Grid{2, 2, 2}, AudioLatents: 8},
			rows: 30,
			segs: []seg{{SegText, 0, 12}, {SegAudio, 12, 28}, {SegVideo, 28, 30}},
			sum:  [3]float64{339.6666666666667, 0, 0}, weightT: 6498.0,
		},
		{
			name: "fl2va",
			spec: Spec{TextTags: tags(128), Target: Grid{17, 30, 54}, AudioLatents: 93, Keyframes: []Anchor{First, Last}},
			rows: 8009,
			segs: []seg{{SegText, 0, 128}, {SegKeyframe, 128, 533}, {SegKeyframe, 533, 938}, {SegAudio, 938, 1124}, {SegVideo, 1124, 8009}},
			sum:  [3]float64{1360927.0, 117002.11801356, 119830.23938465}, weightT: 5883121758.0,
			condRows: [2]int{810, 0},
		},
		{
			name: "ref2va",
			spec: Spec{TextTags: tags(192), Target: Grid{17, 30, 54}, AudioLatents: 93, References: []Reference{
				{Kind: RefImage, Latent: Grid{1, 16, 24}},
				{Kind: RefVideo, Latent: Grid{7, 16, 24}, AudioLatents: 48},
				{Kind: RefAudio, AudioLatents: 80},
			}},
			rows: 8287,
			segs: []seg{{SegText, 0, 192}, {SegRefImage, 192, 288}, {SegRefAudio, 288, 384}, {SegRefVideo, 384, 1056},
				{SegRefAudio, 1056, 1216}, {SegAudio, 1216, 1402}, {SegVideo, 1402, 8287}},
			sum: [3]float64{2818905.0, 115719.96684278, 122360.11344761}, weightT: 12788836714.0,
			condRows: [2]int{768, 256},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l, err := Build(c.spec)
			if err != nil {
				t.Fatal(err)
			}
			if l.Rows() != c.rows || len(l.Positions) != 3*c.rows {
				t.Fatalf("rows = %d (%d positions), want %d", l.Rows(), len(l.Positions), c.rows)
			}
			checkSegments(t, l, c.segs)
			cs := positionChecksums(l)
			for a := range 3 {
				if !closeRel(cs.sum[a], c.sum[a], 1e-12) {
					t.Errorf("Σ axis %d = %.10f, want %.10f", a, cs.sum[a], c.sum[a])
				}
			}
			if !closeRel(cs.weighted[0], c.weightT, 1e-13) {
				t.Errorf("weighted Σt = %.4f, want %.4f", cs.weighted[0], c.weightT)
			}
			if l.ConditionVideoRows != c.condRows[0] || l.ConditionAudioRows != c.condRows[1] {
				t.Errorf("condition rows = %d video, %d audio; want %v", l.ConditionVideoRows, l.ConditionAudioRows, c.condRows)
			}
			checkInvariants(t, c.spec, l)
		})
	}
}

// checkInvariants checks what every layout must satisfy.
func checkInvariants(t *testing.T, s Spec, l *Layout) {
	t.Helper()
	n := l.Rows()
	seen := make([]int, n)
	for _, list := range [][]int64{l.TextIndices, l.VideoIndices, l.AudioIndices} {
		for _, r := range list {
			seen[r]++
		}
	}
	for r, c := range seen {
		if c != 1 {
			t.Fatalf("row %d is listed %d times across the text/video/audio indices", r, c)
		}
	}
	for _, r := range l.VideoIndices {
		if l.Tags[r] != TagVideo {
			t.Fatalf("video row %d tagged %d", r, l.Tags[r])
		}
	}
	for _, r := range l.AudioIndices {
		if l.Tags[r] != TagAudio {
			t.Fatalf("audio row %d tagged %d", r, l.Tags[r])
		}
	}
	for i, r := range l.TextIndices {
		if r != int64(i) || l.Tags[r] != s.TextTags[i] {
			t.Fatalf("text row %d: index %d tag %d", i, r, l.Tags[r])
		}
	}
	p := s.Patch.orDefault()
	rpf := s.Target.rowsPerFrame(p)
	if got := len(l.VideoIndices) - l.ConditionVideoRows; got != s.Target.T*rpf {
		t.Fatalf("%d generated video rows, want %d", got, s.Target.T*rpf)
	}
	if got := len(l.AudioIndices) - l.ConditionAudioRows; got != 2*s.AudioLatents {
		t.Fatalf("%d generated audio rows, want %d", got, 2*s.AudioLatents)
	}
	// Generated audio and video share their origin: audio row 0 and video row 0 have the same t.
	a, _ := l.Segment(SegAudio)
	v, _ := l.Segment(SegVideo)
	if l.Position(a.Start)[0] != l.Position(v.Start)[0] {
		t.Fatalf("target audio starts at t=%v, video at t=%v", l.Position(a.Start)[0], l.Position(v.Start)[0])
	}
	if l.Segments[len(l.Segments)-1].Stop != n {
		t.Fatalf("segments end at %d of %d rows", l.Segments[len(l.Segments)-1].Stop, n)
	}
}

func TestTemporalGrid(t *testing.T) {
	// Spec §6.3: for 7 latents 0, 5/3, 25/3, 15, 65/3, 85/3, 30 (relative).
	want := []float64{0, 5.0 / 3, 25.0 / 3, 15, 65.0 / 3, 85.0 / 3, 30}
	got := temporalGrid(7, 0)
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Errorf("t_%d = %v, want %v", i, got[i], want[i])
		}
	}
	// Spec §6.5: the last keyframe of 22 frames sits at L + 35.
	l, err := Build(Spec{TextTags: tags(3), Target: Grid{7, 4, 4}, AudioLatents: 37, Keyframes: []Anchor{Last}})
	if err != nil {
		t.Fatal(err)
	}
	// REF: float(L) + spans.sum() − 5/3 = 3 + 36.66666666666667 − 1.6666666666666667, rounded per operation.
	L, span, rescale := 3.0, 36.66666666666667, 5.0/3.0
	if got, want := l.Position(3)[0], (L+span)-rescale; got != want || math.Abs(got-38) > 1e-12 {
		t.Errorf("last keyframe t = %v, want %v (≈ 38)", got, want)
	}
}

func TestSpatialGridExamples(t *testing.T) {
	// Spec §6.2: 512² → {0, 2, …, 30}; 256² → {0, 4, …, 28}.
	for _, c := range []struct{ lh, step int }{{32, 2}, {16, 4}} {
		hw, widths := frameGrid(c.lh, c.lh, 2, 2)
		for j, w := range widths {
			if w != float64(j*c.step) {
				t.Errorf("%d² width %d = %v", c.lh, j, w)
			}
		}
		if hw[len(hw)-1] != [2]float64{float64((c.lh/2 - 1) * c.step), float64((c.lh/2 - 1) * c.step)} {
			t.Errorf("%d² last = %v", c.lh, hw[len(hw)-1])
		}
	}
	// 1344×768: h = 3.905137 + 1.007905·i (i < 24), w = −5.166010 + 1.007905·j (j < 42).
	hw, widths := frameGrid(48, 84, 2, 2)
	if len(hw) != 24*42 || math.Abs(hw[0][0]-3.905137) > 1e-6 || math.Abs(widths[0]+5.166010) > 1e-6 ||
		math.Abs(widths[41]-36.158) > 1e-3 || math.Abs(hw[len(hw)-1][0]-27.087) > 1e-3 {
		t.Errorf("1344×768 grid: first %v, w0 %v, w41 %v, last %v", hw[0], widths[0], widths[41], hw[len(hw)-1])
	}
}

// TestNumpyVectors compares the float64 emulations with values numpy and
// CPython 3.12 produced (testdata/numpy_vectors.txt).
func TestNumpyVectors(t *testing.T) {
	f, err := os.Open("testdata/numpy_vectors.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	var nSpan, nPy, nGrid int
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		fs := strings.Fields(line)
		switch fs[0] {
		case "span", "pysum":
			var n int
			fmt.Sscan(fs[1], &n)
			b, _ := hex.DecodeString(fs[2])
			want := math.Float64frombits(binary.BigEndian.Uint64(b))
			got := lastAnchorSpan(n)
			if fs[0] == "pysum" {
				got = referenceVideoSpan(n)
				nPy++
			} else {
				nSpan++
			}
			if got != want {
				t.Errorf("%s %d = %v (%x), want %v", fs[0], n, got, math.Float64bits(got), want)
			}
		case "grid":
			var lh, lw, ph, pw int
			var crc uint32
			fmt.Sscan(fs[1], &lh)
			fmt.Sscan(fs[2], &lw)
			fmt.Sscan(fs[3], &ph)
			fmt.Sscan(fs[4], &pw)
			fmt.Sscanf(fs[5], "%x", &crc)
			sqrtArea := math.Sqrt(float64(lh * lw))
			var buf []byte
			for _, v := range append(axisGrid(lh, ph, sqrtArea), axisGrid(lw, pw, sqrtArea)...) {
				buf = binary.BigEndian.AppendUint64(buf, math.Float64bits(v))
			}
			if got := crc32.ChecksumIEEE(buf); got != crc {
				t.Errorf("grid %d×%d: crc %08x, want %08x", lh, lw, got, crc)
			}
			nGrid++
		}
	}
	if nSpan < 400 || nPy < 400 || nGrid < 300 {
		t.Fatalf("read %d span, %d pysum, %d grid vectors", nSpan, nPy, nGrid)
	}
	// ERRATA F11: T_lat = 17 sums to 93.33333333333334 both pairwise and with CPython 3.12's sum.
	if lastAnchorSpan(17) != 93.33333333333334 || referenceVideoSpan(17) != 93.33333333333334 {
		t.Errorf("span(17) = %v / %v", lastAnchorSpan(17), referenceVideoSpan(17))
	}
}

func TestBuildRejects(t *testing.T) {
	base := Spec{TextTags: tags(4), Target: Grid{7, 4, 6}, AudioLatents: 37}
	mod := func(f func(*Spec)) Spec { s := base; f(&s); return s }
	bad := map[string]Spec{
		"odd height": mod(func(s *Spec) { s.Target.H = 5 }),
		"no frames":  mod(func(s *Spec) { s.Target.T = 0 }),
		"no audio":   mod(func(s *Spec) { s.AudioLatents = 0 }),
		"bad tag":    mod(func(s *Spec) { s.TextTags = []int64{1, 2} }),
		"both": mod(func(s *Spec) {
			s.Keyframes = []Anchor{First}
			s.References = []Reference{{Kind: RefAudio, AudioLatents: 3}}
		}),
		"dup anchor":        mod(func(s *Spec) { s.Keyframes = []Anchor{Last, Last} }),
		"bad anchor":        mod(func(s *Spec) { s.Keyframes = []Anchor{7} }),
		"image frames":      mod(func(s *Spec) { s.References = []Reference{{Kind: RefImage, Latent: Grid{2, 4, 4}}} }),
		"image audio":       mod(func(s *Spec) { s.References = []Reference{{Kind: RefImage, Latent: Grid{1, 4, 4}, AudioLatents: 3}} }),
		"image odd":         mod(func(s *Spec) { s.References = []Reference{{Kind: RefImage, Latent: Grid{1, 3, 4}}} }),
		"audio empty":       mod(func(s *Spec) { s.References = []Reference{{Kind: RefAudio}} }),
		"audio grid":        mod(func(s *Spec) { s.References = []Reference{{Kind: RefAudio, AudioLatents: 2, Latent: Grid{1, 2, 2}}} }),
		"video negative":    mod(func(s *Spec) { s.References = []Reference{{Kind: RefVideo, Latent: Grid{2, 4, 4}, AudioLatents: -1}} }),
		"unknown ref":       mod(func(s *Spec) { s.References = []Reference{{Kind: 9}} }),
		"temporal patch":    mod(func(s *Spec) { s.Patch = Patch{2, 2, 2} }),
		"video zero frames": mod(func(s *Spec) { s.References = []Reference{{Kind: RefVideo, Latent: Grid{0, 4, 4}}} }),
	}
	for name, s := range bad {
		if _, err := Build(s); !errors.Is(err, ErrSpec) {
			t.Errorf("%s: got %v, want ErrSpec", name, err)
		}
	}
}

func TestBuildGeneral(t *testing.T) {
	// Invariants over a sweep of geometries, anchors and reference mixes.
	for _, g := range []Grid{{2, 2, 2}, {7, 4, 6}, {12, 30, 54}, {17, 48, 84}, {3, 6, 2}} {
		for _, kf := range [][]Anchor{nil, {First}, {Last}, {First, Last}} {
			s := Spec{TextTags: tags(5, 1, 2), Target: g, AudioLatents: 11, Keyframes: kf}
			l, err := Build(s)
			if err != nil {
				t.Fatal(err)
			}
			checkInvariants(t, s, l)
			if l.ConditionVideoRows != len(kf)*g.rowsPerFrame(ReleasedPatch) {
				t.Fatalf("%v %v: %d condition rows", g, kf, l.ConditionVideoRows)
			}
		}
		refs := []Reference{{Kind: RefAudio, AudioLatents: 5}, {Kind: RefVideo, Latent: Grid{2, 4, 6}}, {Kind: RefImage, Latent: Grid{1, 8, 4}},
			{Kind: RefVideo, Latent: Grid{7, 6, 4}, AudioLatents: 40}}
		s := Spec{TextTags: tags(9), Target: g, AudioLatents: 20, References: refs}
		l, err := Build(s)
		if err != nil {
			t.Fatal(err)
		}
		checkInvariants(t, s, l)
		// Clock: audio 5 → video 2 latents (span 25/3) → image 1 → video max(40, span 7 = 110/3).
		want := 9 + 5 + (5.0/3 + 20.0/3) + 1 + 40
		if a, _ := l.Segment(SegAudio); math.Abs(l.Position(a.Start)[0]-want) > 1e-12 {
			t.Errorf("%v: target origin %v, want %v", g, l.Position(a.Start)[0], want)
		}
	}
}

func TestRowTimesteps(t *testing.T) {
	l, err := Build(Spec{TextTags: tags(3), Target: Grid{2, 2, 2}, AudioLatents: 2, References: []Reference{
		{Kind: RefImage, Latent: Grid{1, 2, 2}}, {Kind: RefAudio, AudioLatents: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	// rows: text 0-2, image 3, ref audio 4-5, audio 6-9, video 10-11
	ts, idx := RowTimesteps(l, 0.04, 0.4)
	wantTS := []float32{0.04, 0.4, 0.999, 1}
	wantIdx := []int64{0, 0, 0, 2, 3, 3, 1, 1, 1, 1, 0, 0}
	if fmt.Sprint(ts) != fmt.Sprint(wantTS) || fmt.Sprint(idx) != fmt.Sprint(wantIdx) {
		t.Errorf("RowTimesteps = %v %v, want %v %v", ts, idx, wantTS, wantIdx)
	}
	// At step 0 video and audio share t = 0; a condition above 0.999 keeps its own value.
	ts, idx = RowTimesteps(l, 0, 0)
	if fmt.Sprint(ts) != fmt.Sprint([]float32{0, 0.999, 1}) || idx[3] != 1 || idx[6] != 0 {
		t.Errorf("step 0: %v %v", ts, idx)
	}
	ts, _ = RowTimesteps(l, 0.9995, 0.5)
	if fmt.Sprint(ts) != fmt.Sprint([]float32{0.5, 0.9995, 1}) {
		t.Errorf("late step: %v", ts)
	}
}

// BenchmarkBuild lays out the largest fl2va request: 1344×768, 362 frames,
// first and last keyframes, 300 text rows (111,378 rows).
func BenchmarkBuild(b *testing.B) {
	s := Spec{TextTags: tags(300), Target: Grid{107, 48, 84}, AudioLatents: 603, Keyframes: []Anchor{First, Last}}
	for b.Loop() {
		if _, err := Build(s); err != nil {
			b.Fatal(err)
		}
	}
}

// TestEnumNames: the anchors and reference kinds print and parse by name,
// an unknown name is refused listing the valid ones, and an unnamed value
// prints as its type and number.
func TestEnumNames(t *testing.T) {
	for _, a := range []Anchor{First, Last} {
		if got, err := ParseAnchor(a.String()); err != nil || got != a {
			t.Errorf("ParseAnchor(%q) = %v, %v", a.String(), got, err)
		}
	}
	for _, k := range []RefKind{RefImage, RefVideo, RefAudio} {
		if got, err := ParseRefKind(k.String()); err != nil || got != k {
			t.Errorf("ParseRefKind(%q) = %v, %v", k.String(), got, err)
		}
	}
	if _, err := ParseAnchor("middle"); err == nil || err.Error() != `layout: keyframe anchor "middle": must be "first" or "last"` {
		t.Errorf("ParseAnchor(middle): %v", err)
	}
	if _, err := ParseRefKind(""); err == nil || err.Error() != `layout: reference kind "": must be "image", "video" or "audio"` {
		t.Errorf("ParseRefKind(\"\"): %v", err)
	}
	for _, c := range []struct{ got, want string }{
		{Anchor(0).String(), "Anchor(0)"}, {RefKind(9).String(), "RefKind(9)"},
		{SegmentKind(99).String(), "SegmentKind(99)"}, {SegRefAudio.String(), "ref_audio"},
	} {
		if c.got != c.want {
			t.Errorf("String: %q, want %q", c.got, c.want)
		}
	}
}
