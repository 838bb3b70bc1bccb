package main

import (
	"os/exec"
	"testing"
	"time"

	"h3studio/engine/testkit"
	"h3studio/engine/videoapi"
	"h3studio/ui/studio"
)

// TestRunOnServer: with Run on server, the window's take is planned here,
// made by another H3 Studio's API (both on the fake engine) and saved in
// this library from the server's MP4 with the server's timings.
func TestRunOnServer(t *testing.T) {
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		t.Skip("needs ffmpeg (the Linux MP4 writer and reader)")
	}
	t.Setenv("H3_API_TOKEN", "test-token-0123456789abcdef")
	withVideo := studio.Options{Opener: mediaOpener, VideoSink: newVideoSink}
	server, here := fakeStudio(t, withVideo), fakeStudio(t, withVideo)
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
