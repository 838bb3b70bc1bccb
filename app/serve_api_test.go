package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"h3studio/engine/request/requesttest"
	"h3studio/engine/testkit"
	"h3studio/engine/testmodel"
	"h3studio/engine/videoapi"
)

// apiE2E skips the API's end-to-end tests (demo takes through a real
// server, a minute or two on two cores) unless H3_API_E2E=1 (make
// test-api, part of make test).
func apiE2E(t *testing.T) {
	t.Helper()
	if os.Getenv("H3_API_E2E") == "" {
		t.Skip("set H3_API_E2E=1 (make test-api) for the API's end-to-end tests")
	}
}

// startServe runs `h3studio serve` in-process on the demo checkpoint,
// with its home, cache and library in temporary folders.
func startServe(t *testing.T, o serveOptions) (url, lib string) {
	t.Helper()
	root := t.TempDir()
	t.Setenv("HOME", root)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(root, "config"))
	t.Setenv("XDG_CACHE_HOME", filepath.Join(root, "cache"))
	t.Setenv("H3_API_TOKEN", "test-token-0123456789abcdef")
	model, err := testmodel.Ensure(filepath.Join(root, "models"))
	if err != nil {
		t.Fatal(err)
	}
	o.modelDir, o.addr, o.libDir = model, "127.0.0.1:0", filepath.Join(root, "library")
	if o.pollAfter == 0 {
		o.pollAfter = 200 * time.Millisecond
	}
	ctx, cancel := context.WithCancel(context.Background())
	addr := make(chan net.Addr, 1)
	done := make(chan int, 1)
	var log bytes.Buffer
	var mu sync.Mutex
	go func() { done <- serve(ctx, o, func(a net.Addr) { addr <- a }, lockedWriter{&mu, &log}) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("serve did not stop")
		}
	})
	select {
	case a := <-addr:
		return "http://" + a.String(), o.libDir
	case st := <-done:
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("serve exited %d: %s", st, log.String())
	case <-time.After(2 * time.Minute):
		t.Fatal("serve did not start")
	}
	return "", ""
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// TestServeOpenAISDK: the stock OpenAI Python SDK makes takes through
// `h3studio serve` (JSON and multipart), polls, downloads H.264+AAC MP4s,
// lists, deletes a take mid-run, and reads the refusals.
func TestServeOpenAISDK(t *testing.T) {
	apiE2E(t)
	py := testkit.PythonPeer(t, "openai")
	if _, err := exec.LookPath("ffprobe"); err != nil {
		t.Skip("needs ffprobe")
	}
	url, lib := startServe(t, serveOptions{maxPending: 8})
	out := t.TempDir()
	first := filepath.Join(out, "first.png")
	requesttest.WritePNG(t, first, requesttest.Picture(256, 256))
	cmd := exec.Command(py, "testdata/openai_sdk_videos.py", url, "test-token-0123456789abcdef", out, first)
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the OpenAI SDK script failed: %v\n%s", err, b)
	}
	if !strings.Contains(string(b), "openai sdk: ok") {
		t.Fatalf("the script did not finish: %s", b)
	}
	// The API's takes are library takes with their take.json.
	metas, _ := filepath.Glob(filepath.Join(lib, "*", "take.json"))
	if len(metas) != 2 {
		t.Errorf("the library holds %d takes, want the 2 completed ones", len(metas))
	}
}

// TestGenerateServer: `h3studio generate --server` sends a take to
// `h3studio serve` with the client this package shares with the server's
// parser, and writes the downloaded MP4 and a sidecar with its timings.
func TestGenerateServer(t *testing.T) {
	apiE2E(t)
	if _, err := exec.LookPath("ffprobe"); err != nil {
		t.Skip("needs ffprobe")
	}
	url, _ := startServe(t, serveOptions{maxPending: 4})
	out := filepath.Join(t.TempDir(), "remote.mp4")
	var stdout, stderr bytes.Buffer
	st := run([]string{"generate", "--server", url, "--server-token", "test-token-0123456789abcdef", "--server-kind", "h3studio",
		"-p", "A lighthouse", "--width", "256", "--height", "256", "--frames", "22", "--steps", "2", "--seed", "4", "-o", out}, &stdout, &stderr)
	if st != 0 {
		t.Fatalf("generate --server exited %d: %s", st, stderr.String())
	}
	probe := exec.Command("ffprobe", "-v", "error", "-show_entries", "stream=codec_name,width", "-of", "csv=p=0", out)
	b, err := probe.Output()
	if err != nil || !strings.Contains(string(b), "h264,256") || !strings.Contains(string(b), "aac") {
		t.Errorf("ffprobe: %v %s", err, b)
	}
	side, err := os.ReadFile(strings.TrimSuffix(out, ".mp4") + ".json")
	if err != nil || !strings.Contains(string(side), `"denoise"`) || !strings.Contains(string(side), "server 127.0.0.1") {
		t.Errorf("the sidecar lacks the server's timings: %v %s", err, side)
	}
	// A wrong token is refused as a failure, not as an invalid request.
	st = run([]string{"generate", "--server", url, "--server-token", "wrong-token-000000000", "-p", "x", "-o", out}, &stdout, &stderr)
	if st != 1 {
		t.Errorf("a wrong token: exit %d", st)
	}
	// What SGLang's schema cannot carry is refused before anything is sent.
	stderr.Reset()
	st = run([]string{"generate", "--server", url, "-p", "x", "--reuse", "2", "-o", out}, &stdout, &stderr)
	if st != 2 || !strings.Contains(stderr.String(), "--reuse has no SGLang field") {
		t.Errorf("--reuse to an SGLang server: exit %d %s", st, stderr.String())
	}
	_ = videoapi.DialectSGLang
}
