package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"fyne.io/fyne/v2"

	"h3studio/engine"
	"h3studio/ui/studio"
)

// selftestStatus is runGUI's exit status after a -selftest run.
var selftestStatus int

// runSelftest drives a first start the way a person would: it waits for the
// studio to show a clip (the sample take on a first start), optionally
// types a prompt and generates a take, prints "selftest: ready", and quits
// when its standard input closes (the Xvfb test takes its screenshot in
// between). It runs on its own goroutine and touches the window only through
// the studio, whose changes reach Fyne through the window's one boundary.
func runSelftest(a fyne.App, s *studio.Studio, generate, running bool, stdout, stderr io.Writer) {
	fail := func(format string, args ...any) {
		fmt.Fprintf(stderr, "selftest: "+format+"\n", args...)
		selftestStatus = 1
		fyne.Do(a.Quit)
	}
	wait := func(what string, limit time.Duration, cond func(studio.Snapshot) bool) bool {
		deadline := time.Now().Add(limit)
		for time.Now().Before(deadline) {
			if cond(s.Snapshot()) {
				return true
			}
			time.Sleep(50 * time.Millisecond)
		}
		fail("%s did not happen within %v", what, limit)
		return false
	}
	start := time.Now()
	if !wait("the first clip", 20*time.Second, func(sn studio.Snapshot) bool { return sn.Viewer.Clip != nil && sn.LibraryLoaded }) {
		return
	}
	fmt.Fprintf(stdout, "selftest: the studio shows %q after %v\n", s.Snapshot().Viewer.Title, time.Since(start).Round(time.Millisecond))
	// The window is up once the UI loop runs our functions; then give it
	// time to paint (software GL under Xvfb is slow to start).
	painted := func() {
		fyne.DoAndWait(func() {})
		time.Sleep(2 * time.Second)
		fyne.DoAndWait(func() {})
	}
	painted()
	if generate {
		if !wait("the model check", 60*time.Second, func(sn studio.Snapshot) bool {
			return !sn.Model.Loading && sn.Model.Info.Dir != "" || sn.Model.Info.Problem != ""
		}) {
			return
		}
		s.Compose().SetSettings(studio.DemoSettings())
		s.Compose().SetPrompt("A red fox walks through fresh snow at dawn; soft wind in the pines.")
		if !wait("a plan", 30*time.Second, func(sn studio.Snapshot) bool {
			return sn.CanGenerate || (sn.Why != "" && sn.Plan == nil && !sn.Model.Ready)
		}) {
			return
		}
		if _, err := s.Queue().Generate(); err != nil {
			fail("generate: %v", err)
			return
		}
		if running {
			if !wait("denoising", 5*time.Minute, func(sn studio.Snapshot) bool {
				if r := sn.Running; r != nil && r.Current == engine.PhaseDenoise {
					for _, p := range r.Phases {
						if p.Phase == engine.PhaseDenoise && p.Done >= 4 {
							return true
						}
					}
				}
				return false
			}) {
				return
			}
			time.Sleep(300 * time.Millisecond)
			fyne.DoAndWait(func() {})
			fmt.Fprintln(stdout, "selftest: ready (denoising)")
			io.Copy(io.Discard, os.Stdin)
			s.Queue().CancelAll()
			fyne.Do(a.Quit)
			return
		}
		if !wait("the take", 10*time.Minute, func(sn studio.Snapshot) bool {
			return len(sn.Jobs) > 0 && sn.Jobs[0].State != studio.JobQueued && sn.Jobs[0].State != studio.JobRunning
		}) {
			return
		}
		j := s.Snapshot().Jobs[0]
		if j.State != studio.JobDone {
			fail("the take ended %s: %s", j.State, j.Message)
			return
		}
		fmt.Fprintf(stdout, "selftest: generated %s in %v\n", j.TakeID, j.Elapsed.Round(time.Millisecond))
	}
	if generate {
		time.Sleep(time.Second) // the finished take reaches the viewer
		fyne.DoAndWait(func() {})
	}
	fmt.Fprintf(stdout, "selftest: ready after %v\n", time.Since(start).Round(time.Millisecond))
	if f, ok := stdout.(*os.File); ok {
		f.Sync()
	}
	io.Copy(io.Discard, os.Stdin)
	fyne.Do(a.Quit)
}
