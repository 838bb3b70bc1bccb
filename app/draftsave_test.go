package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"h3studio/engine/testkit"
	"h3studio/ui/studio"
	"h3studio/ui/studio/fakeengine"
)

func draftWith(prompt string) studio.Draft {
	d := studio.NewDraft()
	d.Prompt = prompt
	return d
}

// TestDraftIsSavedContinuously: changes are written once they settle (not
// only at quit), the last one wins, and close writes the final draft.
func TestDraftIsSavedContinuously(t *testing.T) {
	p := &prefs{path: filepath.Join(t.TempDir(), "settings.json")}
	d := newDraftSaver(p, 20*time.Millisecond)
	saved := make(chan string, 8)
	d.written = func(sd studio.SavedDraft) { saved <- sd.Prompt }
	for i := range 5 {
		d.changed(draftWith(fmt.Sprint("edit ", i)))
	}
	read := func() string {
		var q prefs
		b, _ := os.ReadFile(p.path)
		json.Unmarshal(b, &q)
		if q.Draft == nil {
			return ""
		}
		return q.Draft.Prompt
	}
	for p := range saved { // written once the edits settle, without a quit
		if p == "edit 4" {
			break
		}
	}
	if got := read(); got != "edit 4" {
		t.Fatalf("saved %q, want the last edit", got)
	}
	d.close(draftWith("final"))
	d.changed(draftWith("after quit"))
	if !testkit.Holds(60*time.Millisecond, nil, func() bool { return read() == "final" }) {
		t.Errorf("saved %q after close, want the final draft", read())
	}
}

// TestDraftSurvivesKill9: a process saving its draft as fast as it can is
// killed with SIGKILL at random moments; settings.json is always a whole
// file holding one of the drafts it saved, never damaged or lost.
func TestDraftSurvivesKill9(t *testing.T) {
	if os.Getenv("H3_DRAFT_WRITER") != "" {
		draftWriter(os.Getenv("H3_DRAFT_WRITER"))
		return
	}
	path := filepath.Join(t.TempDir(), "settings.json")
	for round := range 6 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestDraftSurvivesKill9$")
		cmd.Env = append(os.Environ(), "H3_DRAFT_WRITER="+path)
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 6)
		out.Read(buf) // "ready\n": it has saved at least once
		time.Sleep(time.Duration(rand.IntN(40)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("round %d: settings.json lost: %v", round, err)
		}
		var q prefs
		if err := json.Unmarshal(b, &q); err != nil || q.Draft == nil || !strings.HasPrefix(q.Draft.Prompt, "edit ") {
			t.Fatalf("round %d: settings.json damaged (%v): %.80q", round, err, b)
		}
	}
}

// draftWriter is the process TestDraftSurvivesKill9 kills.
func draftWriter(path string) {
	p := &prefs{path: path}
	d := newDraftSaver(p, time.Millisecond)
	long := strings.Repeat("a fox in the snow, ", 2000)
	for i := 0; ; i++ {
		d.changed(draftWith(fmt.Sprintf("edit %d %s", i, long)))
		if i == 0 {
			d.flush()
			fmt.Println("ready")
		}
		if i%7 == 0 {
			d.flush()
		}
	}
}

// TestStudioDraftSurvivesKill9: the app's own wiring (keepDraft) over a
// studio. A process editing its draft (seed, a reference, then the
// prompt; one edit after another, each saved when it settles) is killed
// with SIGKILL at a random moment after its k-th edit was saved; the next
// start, through the same keepDraft, restores a draft at least as new as
// the k-th, whole and from one moment, and says nothing was damaged.
func TestStudioDraftSurvivesKill9(t *testing.T) {
	if home := os.Getenv("H3_STUDIO_EDITOR"); home != "" {
		studioEditor(home)
		return
	}
	home := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", home) // loadPrefs reads settings.json under it
	pic := filepath.Join(home, "ref.png")
	writeRGB(t, pic, 64, 48)
	for round := range 3 {
		k := 1 + rand.IntN(4)
		cmd := exec.Command(os.Args[0], "-test.run=^TestStudioDraftSurvivesKill9$")
		cmd.Env = append(os.Environ(), "H3_STUDIO_EDITOR="+home)
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		reached := make(chan bool, 1)
		go func() {
			lines := bufio.NewScanner(out)
			for lines.Scan() {
				if lines.Text() == fmt.Sprint("saved ", k) {
					reached <- true
					return
				}
			}
			reached <- false
		}()
		select {
		case ok := <-reached:
			if !ok {
				t.Fatalf("round %d: the editing process ended before edit %d was saved", round, k)
			}
		case <-time.After(time.Minute): // a bound on a hang, not a speed target
			cmd.Process.Kill()
			t.Fatalf("round %d: edit %d was not saved within a minute of the edits", round, k)
		}
		time.Sleep(time.Duration(rand.IntN(500)) * time.Millisecond) // a random moment: typing, waiting or writing
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()

		p := loadPrefs()
		if p.problem != "" || !p.existed {
			t.Fatalf("round %d: the next start finds settings.json damaged or gone: %q", round, p.problem)
		}
		s := newDraftStudio(t, home)
		stop := keepDraft(s, p, false, nil)
		d := s.Snapshot().Draft
		stop()
		s.Close()
		var n int
		if _, err := fmt.Sscanf(d.Prompt, "edit %d", &n); err != nil || n < k {
			t.Fatalf("round %d: killed after edit %d was saved, the next start has %q", round, k, d.Prompt)
		}
		// the seed and references are set before the prompt: a save between
		// them holds the next edit's seed and references
		seed, refs := d.Settings.Seed, len(d.References)
		if !(seed == uint64(n) && refs == n%2) && !(seed == uint64(n+1) && refs == (n+1)%2) {
			t.Errorf("round %d: restored prompt of edit %d with seed %d and %d references: not from one moment", round, n, seed, refs)
		}
		if refs == 1 && d.References[0].Media.Path != pic {
			t.Errorf("round %d: restored reference %s, want %s", round, d.References[0].Media.Path, pic)
		}
	}
}

// studioEditor is the process TestStudioDraftSurvivesKill9 kills: the app's
// start-up and saving (keepDraft) over a studio, then edits without end,
// printing "saved N" once settings.json holds edit N.
func studioEditor(home string) {
	s := newDraftStudio(nil, home)
	saved := make(chan string, 64)
	keepDraft(s, loadPrefs(), false, func(d studio.SavedDraft) { saved <- d.Prompt })
	pic := filepath.Join(home, "ref.png")
	// The draft restored from the previous round may hold a reference;
	// edit 1 must start from none, or it would add a second one.
	s.Compose().ClearReferences()
	for n := 1; ; n++ {
		c := s.Compose()
		c.SetSeed(uint64(n))
		if n%2 == 1 {
			c.AddReferences([]string{pic})
		} else {
			c.ClearReferences()
		}
		want := fmt.Sprint("edit ", n)
		c.SetPrompt(want)
		for p := range saved {
			if p == want {
				break
			}
		}
		fmt.Println("saved", n)
	}
}

// newDraftStudio is a studio on the fake engine with its library under home
// (t nil: in the child process, where a failure exits).
func newDraftStudio(t *testing.T, home string) *studio.Studio {
	lib, err := studio.OpenLibrary(filepath.Join(home, "Library"), nil)
	if err == nil {
		var s *studio.Studio
		if s, err = studio.New(studio.Options{Engine: fakeengine.New(fakeengine.Options{}), Library: lib, Opener: mediaOpener}); err == nil {
			return s
		}
	}
	if t == nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	t.Fatal(err)
	return nil
}
