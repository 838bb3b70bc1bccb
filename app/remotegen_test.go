package main

import (
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"h3studio/engine/testkit"
	"h3studio/engine/videoapi"
	"h3studio/ui/studio"
	"h3studio/ui/studio/fakeengine"
)

// TestRunOnServer: with Run on server, the window's take is planned here,
// made by another H3 Studio's API (both on the fake engine) and saved in
// this library from the server's MP4 with the server's timings.
func TestRunOnServer(t *testing.T) {
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		t.Skip("needs ffmpeg (the Linux MP4 writer and reader)")
	}
	t.Setenv("H3_API_TOKEN", "test-token-0123456789abcdef")
	newStudio := func(withVideo bool) *studio.Studio {
		lib, err := studio.OpenLibrary(t.TempDir(), nil)
		if err != nil {
			t.Fatal(err)
		}
		eng := fakeengine.New(fakeengine.Options{})
		eng.DemoDir = filepath.Join(t.TempDir(), "fake-model")
		o := studio.Options{Engine: eng, Library: lib, Opener: mediaOpener}
		if withVideo {
			o.VideoSink = newVideoSink
		}
		s, err := studio.New(o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		s.Model().UseDemo()
		if err := waitForModel(s, 20*time.Second); err != nil {
			t.Fatal(err)
		}
		return s
	}
	server, here := newStudio(true), newStudio(true)
	api := newLocalAPI(server, nil)
	api.addr = "127.0.0.1:0"
	if err := api.SetEnabled(true); err != nil {
		t.Fatal(err)
	}
	defer api.SetEnabled(false)

	g, err := newRemoteGenerator(here.Queue().Plan, api.Address(), api.Token(), videoapi.DialectH3Studio, nil)
	if err != nil {
		t.Fatal(err)
	}
	here.Queue().SetRemote(g)
	here.Compose().SetSettings(studio.DemoSettings())
	here.Compose().SetPrompt("A take made on the server.")
	if _, err := here.Queue().Generate(); err != nil {
		t.Fatal(err)
	}
	wake := testkit.NewWake()
	defer here.Subscribe(wake.Signal)()
	var sn studio.Snapshot
	failed := func() bool { return len(sn.Jobs) == 1 && sn.Jobs[0].State == studio.JobFailed }
	if !testkit.Within(90*time.Second, wake, func() bool {
		sn = here.Snapshot()
		return failed() || len(sn.Takes) == 1
	}) {
		t.Fatalf("no take after 90 s: %+v", sn.Jobs)
	}
	if failed() {
		t.Fatalf("the remote take failed: %s", sn.Jobs[0].Message)
	}
	if m := sn.Takes[0].Meta; m.Prompt != "A take made on the server." || m.Files.Video == "" || m.Frames == 0 || len(m.Timings) == 0 {
		t.Errorf("the take's record: %+v", m)
	}
	// The server made it (and keeps it in its own library).
	if n := len(server.Snapshot().Takes); n != 1 {
		t.Errorf("the server's library holds %d takes", n)
	}
}
