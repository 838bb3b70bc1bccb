package studio

import (
	"strings"
	"testing"
)

func builder(t *testing.T) *Builder {
	t.Helper()
	b, err := NewBuilder()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestStructureBase(t *testing.T) {
	b := builder(t)
	got := Structure("A red fox walks through fresh snow.", b.Base)
	want := "integrated_multimodal_description: [Shot 1] A red fox walks through fresh snow.\n\n" +
		"overall_soundscape:\n\nnon_diegetic_music: N/A"
	if got != want {
		t.Errorf("Structure =\n%q\nwant\n%q", got, want)
	}
	// Idempotent, and nothing the user wrote is lost.
	if again := Structure(got, b.Base); again != got {
		t.Errorf("Structure is not idempotent:\n%q", again)
	}
	if b.Template(got) != &b.Base {
		t.Error("structured prompt not recognised as base format")
	}
}

func TestStructureRef(t *testing.T) {
	b := builder(t)
	got := Structure("The woman walks on the beach.", b.Ref)
	for _, s := range []string{"subject_definitions:\n\nsummary:", "detailed_description:\nThe woman walks on the beach.", "non_diegetic_music:\nN/A"} {
		if !strings.Contains(got, s) {
			t.Errorf("Structure(ref) lacks %q:\n%s", s, got)
		}
	}
	if b.Template(got) != &b.Ref {
		t.Error("structured prompt not recognised as Ref2VA format")
	}
}

func TestSplitJoinRoundTrip(t *testing.T) {
	b := builder(t)
	for _, e := range b.Examples {
		tpl := b.Template(e.Prompt)
		if tpl == nil {
			t.Errorf("example %q is in no known format", e.Title)
			continue
		}
		s := Split(e.Prompt, *tpl)
		for _, f := range tpl.Fields {
			if s.Fields[f.Name] == "" {
				t.Errorf("example %q: section %s is empty", e.Title, f.Name)
			}
		}
		if got := Join(s, *tpl); got != strings.TrimSpace(e.Prompt) {
			t.Errorf("example %q does not round-trip:\n%q\n%q", e.Title, got, e.Prompt)
		}
	}
}

func TestSyncAlignment(t *testing.T) {
	b := builder(t)
	p := Structure("[Shot 1] A door opens. [Shot 2] At 00:02.000, the camera cuts to a hall.", b.Base)
	first := b.SyncAlignment(p, true, false, 124)
	if !strings.HasPrefix(first, "For the target video, at 0.00 seconds into the target video, <Picture 1> (from [Shot 1]) is fully referenced.\n\nintegrated_multimodal_description:") {
		t.Errorf("first-frame line:\n%s", first)
	}
	both := b.SyncAlignment(first, true, true, 124)
	wantBoth := "How the reference pictures align with the target video — Picture 1 (from Shot 1) aligns with the 0.00-second mark of the target video; Picture 2 (from Shot 2) aligns with the 5.17-second mark of the target video.\n\n"
	if !strings.HasPrefix(both, wantBoth) || strings.Count(both, "align") != 3 {
		t.Errorf("first+last line:\n%s", both)
	}
	last := b.SyncAlignment(both, false, true, 56)
	if !strings.HasPrefix(last, "How the reference pictures align with the target video — <Picture 1> (from [Shot 2]) aligns with the 2.33-second mark of the target video.\n\n") {
		t.Errorf("last-frame line:\n%s", last)
	}
	if none := b.SyncAlignment(last, false, false, 56); none != p {
		t.Errorf("removing the frames did not remove the line:\n%q\n%q", none, p)
	}
	free := "just some words"
	if b.SyncAlignment(free, true, false, 56) != free {
		t.Error("free text changed")
	}
}

func TestRelabelSwaps(t *testing.T) {
	got := Relabel("<Picture 1> hands <Picture 2> the <Video 1>; <Picture 1> smiles.", map[string]string{"Picture 1": "Picture 2", "Picture 2": "Picture 1"})
	if got != "<Picture 2> hands <Picture 1> the <Video 1>; <Picture 2> smiles." {
		t.Errorf("Relabel = %q", got)
	}
}

func TestSyncLabels(t *testing.T) {
	b := builder(t)
	p := "subject_definitions:\n<Subject 1> is the woman in <Picture 1>.\n<Picture 1> is her portrait.\n<Picture 2> is the beach.\n\n" +
		"summary:\n[reference generation] She walks.\n\nretention_analysis:\n<Picture 1>: fully_preserved - face.\n<Picture 2>: weak_reference - place.\n\n" +
		"detailed_description:\n[Shot 1] <Subject 1> walks on the beach of <Picture 2>.\n\noverall_soundscape:\nWaves.\n\nnon_diegetic_music:\nN/A"
	// The user swaps the two pictures and adds a sound clip.
	p2 := Relabel(p, map[string]string{"Picture 1": "Picture 2", "Picture 2": "Picture 1"})
	got := b.SyncLabels(p2, []string{"Picture 1", "Picture 2", "Audio 1"})
	want := "subject_definitions:\n<Subject 1> is the woman in <Picture 2>.\n<Picture 1> is the beach.\n<Picture 2> is her portrait.\n<Audio 1> is\n\n" +
		"summary:\n[reference generation] She walks.\n\nretention_analysis:\n<Picture 1>: weak_reference - place.\n<Picture 2>: fully_preserved - face.\n<Audio 1>: reference -\n\n" +
		"detailed_description:\n[Shot 1] <Subject 1> walks on the beach of <Picture 1>.\n\noverall_soundscape:\nWaves.\n\nnon_diegetic_music:\nN/A"
	if got != want {
		t.Errorf("SyncLabels =\n%s\n---- want\n%s", got, want)
	}
	// Removing the audio removes its lines; in-step prompts do not change.
	removed := b.SyncLabels(got, []string{"Picture 1", "Picture 2"})
	if strings.Contains(removed, "<Audio 1>") {
		t.Errorf("removed label still there:\n%s", removed)
	}
	if b.SyncLabels(removed, []string{"Picture 1", "Picture 2"}) != removed {
		t.Error("SyncLabels changed an in-step prompt")
	}
	// An empty Ref2VA skeleton gets starter lines.
	sk := b.SyncLabels(Structure("", b.Ref), []string{"Picture 1"})
	if !strings.Contains(sk, "subject_definitions:\n<Picture 1> is") || !strings.Contains(sk, "retention_analysis:\n<Picture 1>: fully_preserved -") {
		t.Errorf("skeleton:\n%s", sk)
	}
}
