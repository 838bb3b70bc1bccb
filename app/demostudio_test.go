package main

import (
	"testing"
	"time"

	"h3studio/ui/studio"
)

// demoStudio is a studio over the real engine with the demo checkpoint
// loaded (written into a temporary cache), and until, which waits change
// by change for cond to hold on its snapshot (at most 2 minutes).
func demoStudio(t *testing.T) (s *studio.Studio, until func(what string, cond func(studio.Snapshot) bool) studio.Snapshot) {
	t.Helper()
	lib, err := studio.OpenLibrary(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err = studio.New(studio.Options{Engine: realEngine{cacheDir: t.TempDir()}, Library: lib})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	changed := make(chan struct{}, 1)
	t.Cleanup(s.Subscribe(func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	}))
	until = func(what string, cond func(studio.Snapshot) bool) studio.Snapshot {
		t.Helper()
		deadline := time.NewTimer(2 * time.Minute)
		defer deadline.Stop()
		for {
			if sn := s.Snapshot(); cond(sn) {
				return sn
			}
			select {
			case <-changed:
			case <-deadline.C:
				t.Fatalf("%s: not within 2 minutes", what)
			}
		}
	}
	s.Model().UseDemo()
	if sn := until("the demo model", func(sn studio.Snapshot) bool { return sn.Model.Ready || sn.Model.Err != "" }); sn.Model.Err != "" {
		t.Fatalf("the demo model: %s", sn.Model.Err)
	}
	return s, until
}
