package studio_test

import (
	"context"
	"image"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"h3studio/engine/media"
	"h3studio/engine/testkit"
	"h3studio/ui/internal/uitest"
	"h3studio/ui/studio"
	"h3studio/ui/studio/fakeengine"
	"h3studio/ui/studio/sequence"
)

// newMP4Env is newEnv with the build's MP4 writer and decoder, so takes
// have a video.mp4 the sequence export reads (Linux: Debian's ffmpeg).
func newMP4Env(t *testing.T) *env {
	t.Helper()
	uitest.NeedTools(t, "ffmpeg")
	return startEnv(t, fakeengine.Options{}, func(opts *studio.Options) {
		opts.Opener = media.Open
		opts.VideoSink = func(p string) (media.Sink, error) { return media.NewMP4Sink(p, media.MP4Options{}) }
	})
}

// waitView drains and waits until the timeline's view satisfies cond.
func (e *env) waitView(tl *studio.Timeline, what string, cond func(studio.TimelineView) bool) studio.TimelineView {
	e.t.Helper()
	var v studio.TimelineView
	if !testkit.Until(e.wake, func() bool { e.x.Drain(); v = tl.View(); return cond(v) }) {
		e.t.Fatalf("timeline never reached: %s; view %+v", what, v)
	}
	return v
}

func TestTakeFilesMatchSequence(t *testing.T) {
	if studio.VideoFile != sequence.TakeVideoFile || studio.AudioFile != sequence.TakeSoundFile {
		t.Fatal("the sequence package names a take's files differently from the library")
	}
}

// TestTimelineChainedTakes is the "done when" without the window:
// three chained takes (the third made with Extend →, landing after the clip
// it extends), trimmed and crossfaded, played as one (frames and sound),
// exported from the studio; a take moved away becomes a named gap.
func TestTimelineChainedTakes(t *testing.T) {
	e := newMP4Env(t)
	e.tiny()
	e.settle(func(sn studio.Snapshot) bool { return sn.CanGenerate })
	e.s.Queue().Generate()
	sn := e.settle(func(sn studio.Snapshot) bool { return len(sn.Takes) == 1 })
	e.s.Takes().Chain(sn.Takes[0].ID)
	e.settle(func(sn studio.Snapshot) bool { return sn.Draft.First.State == studio.MediaReady && sn.CanGenerate })
	e.s.Queue().Generate()
	sn = e.settle(func(sn studio.Snapshot) bool { return len(sn.Takes) == 2 })
	first, second := sn.Takes[1], sn.Takes[0]

	tl := studio.NewTimeline(e.s)
	t.Cleanup(tl.Close)
	tl.AddTake(second.ID, -1)
	tl.AddTake(first.ID, 0) // before it
	v := e.waitView(tl, "two clips loaded", func(v studio.TimelineView) bool {
		return len(v.Items) == 2 && v.Items[0].Clip != nil && v.Items[1].Clip != nil
	})
	if v.Items[0].Title != first.Meta.Title || v.Total != 44 || v.Seq.Clips[0].Source != "../../"+first.ID {
		t.Fatalf("view %+v", v)
	}
	if _, err := os.Stat(filepath.Join(e.lib, studio.SequencesDir, "Sequence 1", sequence.File)); err != nil {
		t.Fatalf("the sequence is not saved in the library: %v", err)
	}
	if ts, _ := e.s.Library().List(); len(ts) != 2 {
		t.Errorf("the Sequences folder is listed as a take: %d takes", len(ts))
	}

	// Extend → from clip 0's out point: its last frame is Compose's first
	// frame, and the new take goes after clip 0.
	tl.Extend(0, -1, false)
	sn = e.settle(func(sn studio.Snapshot) bool { return sn.Draft.First.State == studio.MediaReady && sn.CanGenerate })
	if !strings.Contains(sn.Draft.First.Path, filepath.Join("Sequence 1", "frames")) || sn.Draft.Prompt != first.Meta.Prompt {
		t.Fatalf("extend draft: first %q prompt %q", sn.Draft.First.Path, sn.Draft.Prompt)
	}
	e.s.Queue().Generate()
	v = e.waitView(tl, "the extension placed", func(v studio.TimelineView) bool { return len(v.Items) == 3 && v.Items[1].Clip != nil })
	sn = e.s.Snapshot()
	third := sn.Takes[0]
	if v.Seq.Clips[1].Source != "../../"+third.ID || v.Seq.Clips[2].Source != "../../"+second.ID {
		t.Fatalf("extension not after its clip: %+v", v.Seq.Clips)
	}

	// trim and crossfade: 22 frames each → [2, 20) + [0, 22) + [4, 22), fade 6 then cut
	tl.Trim(0, 2.0/24, 20.0/24)
	tl.SetTransition(0, sequence.Crossfade, 0.25)
	tl.Trim(2, 4.0/24, 1)
	tl.SetMute(2, true)
	v = tl.View()
	if v.Total != 18+22+18-6 {
		t.Fatalf("total %d after edits, spans %v", v.Total, v.Spans)
	}
	tl.Undo()
	if tl.View().Seq.Clips[2].Mute {
		t.Error("undo did not unmute")
	}
	tl.Redo()

	// Playback: the player's frames and the mixed sound, as long as the film
	p := tl.View().Playback(tl.ExtraSound())
	if p.Len() != v.Total || p.Audio.Frames() != media.AudioSamplesFor(v.Total, media.SampleRate) {
		t.Errorf("playback %d frames, %d samples; want %d frames", p.Len(), p.Audio.Frames(), v.Total)
	}
	if f := p.Frame(15); f == nil || f.Bounds().Dx() == 0 { // inside the crossfade
		t.Error("no crossfade frame")
	}
	// the muted last clip is silent
	if s := p.Audio.Samples[len(p.Audio.Samples)-1]; s != 0 {
		t.Errorf("muted clip sounds: %v", s)
	}

	// export from the studio, the CLI's code
	dst := filepath.Join(e.in, "film.mp4")
	tl.Export(dst)
	e.settle(func(sn studio.Snapshot) bool {
		for _, n := range sn.Notices {
			if strings.Contains(n.Text, "Exported the sequence") {
				return true
			}
			if n.Level == studio.Fail {
				t.Fatalf("export failed: %s", n.Text)
			}
		}
		return false
	})
	src, err := media.Open(dst)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	src.Frames(context.Background(), 0, func(int, *image.RGBA) error { n++; return nil })
	src.Close()
	if n != v.Total {
		t.Errorf("exported %d frames, want %d", n, v.Total)
	}

	// a take moved away (the Trash) becomes a named gap, found by fsnotify
	if err := os.Rename(third.Dir, filepath.Join(e.in, "moved")); err != nil {
		t.Fatal(err)
	}
	v = e.waitView(tl, "a gap for the moved take", func(v studio.TimelineView) bool { return v.Items[1].Missing != "" })
	if v.Items[1].Clip != nil || v.Total != 18+22+18-6 {
		t.Errorf("gap %+v, total %d", v.Items[1], v.Total)
	}
	if p := v.Playback(media.Audio{}); p.Frame(25) == nil {
		t.Error("a gap does not play (black)")
	}
	tl.Export(filepath.Join(e.in, "film2.mp4"))
	e.settle(func(sn studio.Snapshot) bool {
		for _, n := range sn.Notices {
			if n.Level == studio.Fail && strings.Contains(n.Text, third.ID) && strings.Contains(n.Text, "missing") {
				return true
			}
		}
		return false
	})
	if _, err := os.Stat(filepath.Join(e.in, "film2.mp4")); err == nil {
		t.Error("an export with a missing clip left a file")
	}
}

func TestGenerateSeeds(t *testing.T) {
	e := newEnv(t, fakeengine.Options{}, false)
	e.tiny()
	e.s.Compose().SetSeed(100)
	e.settle(func(sn studio.Snapshot) bool { return sn.CanGenerate })
	if _, err := e.s.Queue().GenerateSeeds(1); err == nil {
		t.Error("1 seed accepted")
	}
	if _, err := e.s.Queue().GenerateSeeds(10); err == nil {
		t.Error("10 seeds accepted")
	}
	ids, err := e.s.Queue().GenerateSeeds(3)
	if err != nil || len(ids) != 3 {
		t.Fatal(ids, err)
	}
	sn := e.settle(func(sn studio.Snapshot) bool { return len(sn.Takes) == 3 })
	for k, id := range ids {
		take, ended := sn.JobTake(id)
		if !ended || take == "" {
			t.Fatalf("job %d: take %q ended %v", id, take, ended)
		}
		tk, _ := e.s.Library().Load(take)
		if tk.Meta.Seed != uint64(100+k) {
			t.Errorf("cell %d has seed %d, want %d", k, tk.Meta.Seed, 100+k)
		}
	}
	if sn.Draft.Settings.Seed != 100 {
		t.Errorf("the draft's seed moved to %d", sn.Draft.Settings.Seed)
	}
}

// TestTimelineSequences: several sequences per library, each its own
// sequence.json; a new timeline opens the one changed last; a damaged file
// is named and kept.
func TestTimelineSequences(t *testing.T) {
	e := newEnv(t, fakeengine.Options{}, false)
	e.tiny()
	e.settle(func(sn studio.Snapshot) bool { return sn.CanGenerate })
	e.s.Queue().Generate()
	sn := e.settle(func(sn studio.Snapshot) bool { return len(sn.Takes) == 1 })
	tl := studio.NewTimeline(e.s)
	defer tl.Close()
	tl.AddTake(sn.Takes[0].ID, -1)
	if n := tl.New(); n != "Sequence 2" {
		t.Fatalf("new sequence %q", n)
	}
	tl.AddTake(sn.Takes[0].ID, -1)
	tl.AddTake(sn.Takes[0].ID, -1)
	v := tl.Snapshot()
	if v.Name != "Sequence 2" || len(v.Items) != 2 || strings.Join(v.Names, ",") != "Sequence 1,Sequence 2" {
		t.Fatalf("view %s %d clips, names %v", v.Name, len(v.Items), v.Names)
	}
	tl.Open("Sequence 1")
	if v := tl.View(); len(v.Items) != 1 {
		t.Errorf("Sequence 1 has %d clips", len(v.Items))
	}
	// Sequence 2 was changed last
	tl2 := studio.NewTimeline(e.s)
	defer tl2.Close()
	if v := tl2.View(); v.Name != "Sequence 2" || len(v.Items) != 2 {
		t.Errorf("a new timeline opened %s (%d clips)", v.Name, len(v.Items))
	}
	damaged := tl.SequencePath("Sequence 1")
	os.WriteFile(damaged, []byte(`{"version": 1, "clips": [{"source": "x", "in": -3}]}`), 0o644)
	tl.Open("Sequence 1")
	sn = e.settle(func(sn studio.Snapshot) bool { return len(sn.Notices) > 0 })
	if n := sn.Notices[len(sn.Notices)-1]; !strings.Contains(n.Text, "clips[0].in") {
		t.Errorf("damaged sequence notice %q", n.Text)
	}
	if b, _ := os.ReadFile(damaged); !strings.Contains(string(b), `"in": -3`) {
		t.Error("the damaged file was overwritten")
	}
}
