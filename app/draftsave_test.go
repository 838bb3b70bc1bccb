package main

import (
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
	if !testkit.Until(nil, func() bool { return read() == "edit 4" }) {
		t.Fatalf("saved %q, want the last edit", read())
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
