package hfhub

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"h3studio/engine/hfhub/fakehub"
)

// TestHelperDownloadProcess is the child of TestKillAndResumeAcrossProcesses:
// a download into $H3_TEST_CACHE from $H3_TEST_ENDPOINT, killed mid-file.
func TestHelperDownloadProcess(t *testing.T) {
	if os.Getenv("H3_TEST_HELPER") != "download" {
		t.Skip("run by TestKillAndResumeAcrossProcesses")
	}
	c := NewClient(os.Getenv("H3_TEST_ENDPOINT"), "")
	_, err := Download(context.Background(), c, &Request{Tasks: fl2va, HubCache: os.Getenv("H3_TEST_CACHE"), Parallel: 1})
	fmt.Println("child download ended:", err)
}

func TestKillAndResumeAcrossProcesses(t *testing.T) {
	files := testRepo(t)
	h := newHub(t, files)
	big := biggestLFS(files, "FL2VA/")
	stallAt := int64(len(files[big]) * 2 / 3)
	h.Stall = &fakehub.Fault{Path: big, At: stallAt}
	cache := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperDownloadProcess$", "-test.v")
	cmd.Env = append(os.Environ(), "H3_TEST_HELPER=download", "H3_TEST_ENDPOINT="+h.Endpoint(), "H3_TEST_CACHE="+cache)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-h.Stalled:
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the child never reached byte %d of %s: %s", stallAt, big, out.String())
	}
	time.Sleep(200 * time.Millisecond) // let the child write what it received
	cmd.Process.Kill()
	cmd.Wait()
	partial := filepath.Join(cache, RepoFolderName(Repo), ".h3studio-partial", h.Etag(big)+".part")
	st, err := os.Stat(partial)
	if err != nil || st.Size() == 0 || st.Size() > stallAt {
		t.Fatalf("after the kill the partial %s: %v, %v (want 1..%d bytes)", partial, st, err, stallAt)
	}
	if m, _ := filepath.Glob(filepath.Join(cache, "*", "blobs", "*.incomplete")); len(m) > 0 {
		t.Fatalf("left huggingface_hub's .incomplete names: %v", m)
	}
	before := len(h.Log())
	res, err := Download(ctxT(t), testClient(h, ""), &Request{Tasks: fl2va, HubCache: cache})
	if err != nil {
		t.Fatal(err)
	}
	checkFiles(t, res.Root, files, "fl2va")
	ok := false
	for _, r := range h.Log()[before:] {
		if r.File == big && r.Bytes > 0 {
			if r.Status != 206 || r.Start != st.Size() {
				t.Fatalf("the new process fetched %s from byte %d (status %d), want a resume from %d", big, r.Start, r.Status, st.Size())
			}
			ok = true
		}
	}
	if !ok {
		t.Fatalf("%s was not fetched after the kill", big)
	}
}
