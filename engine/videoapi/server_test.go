package videoapi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"h3studio/engine"
)

// fakeJobs runs nothing: a take completes when the test says so.
type fakeJobs struct {
	mu      sync.Mutex
	videos  []Video
	reqs    []engine.Request
	file    string
	planErr error
}

func (f *fakeJobs) ModelName() string { return "demo" }
func (f *fakeJobs) Plan(r engine.Request) (engine.Plan, error) {
	if f.planErr != nil {
		return engine.Plan{}, f.planErr
	}
	if r.Width%32 != 0 {
		return engine.Plan{}, &engine.RequestError{Field: "width", Rule: fmt.Sprintf("%d must be a multiple of 32", r.Width)}
	}
	return engine.Plan{Request: r}, nil
}
func (f *fakeJobs) Submit(s Submission) (Video, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	v := Video{ID: fmt.Sprintf("video_%d", len(f.videos)+1), Object: "video", Status: StatusQueued, CreatedAt: int64(len(f.videos))}
	f.videos = append([]Video{v}, f.videos...)
	f.reqs = append(f.reqs, s.Lowered.Request)
	RemoveUploads(s.Uploads)
	return v, nil
}
func (f *fakeJobs) List() []Video {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Video(nil), f.videos...)
}
func (f *fakeJobs) find(id string) *Video {
	for i := range f.videos {
		if f.videos[i].ID == id {
			return &f.videos[i]
		}
	}
	return nil
}
func (f *fakeJobs) Get(id string) (Video, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if v := f.find(id); v != nil {
		return *v, true
	}
	return Video{}, false
}
func (f *fakeJobs) Cancel(id string) (Video, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	v := f.find(id)
	if v == nil {
		return Video{}, false
	}
	if v.Status == StatusQueued || v.Status == StatusInProgress {
		v.Status, v.Error = StatusFailed, &VideoError{Code: "cancelled"}
	}
	return *v, true
}
func (f *fakeJobs) complete(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.find(id).Status = StatusCompleted
}
func (f *fakeJobs) Content(id, variant string, index int) (string, string, error) {
	v, ok := f.Get(id)
	switch {
	case !ok || variant != "video" || index != 0:
		return "", "", ErrNotFound
	case v.Status != StatusCompleted:
		return "", "", ErrNotReady
	}
	return f.file, "video/mp4", nil
}
func (f *fakeJobs) Pending() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, v := range f.videos {
		if v.Status == StatusQueued || v.Status == StatusInProgress {
			n++
		}
	}
	return n
}

const testToken = "test-token-0123456789abcdef"

func newTestServer(t *testing.T, mod func(*ServerOptions)) (*fakeJobs, *httptest.Server) {
	t.Helper()
	dir := t.TempDir()
	f := &fakeJobs{file: filepath.Join(dir, "v.mp4")}
	os.WriteFile(f.file, []byte("\x00\x00\x00\x18ftypmp42 fake mp4 bytes"), 0o644)
	o := ServerOptions{Jobs: f, Token: testToken, UploadDir: t.TempDir(), PollAfter: 10 * time.Millisecond,
		Folders: Folders{Allowed: []string{dir}}}
	if mod != nil {
		mod(&o)
	}
	h, err := NewHandler(o)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return f, srv
}

func do(t *testing.T, srv *httptest.Server, method, path, body string, hdr map[string]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+testToken)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		if v == "" {
			req.Header.Del(k)
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestServerGuards(t *testing.T) {
	f, srv := newTestServer(t, func(o *ServerOptions) { o.MaxPending = 3 })
	ok := `{"prompt":"x","size":"256x256","seconds":"1"}`
	for _, c := range []struct {
		name   string
		method string
		body   string
		hdr    map[string]string
		want   int
	}{
		{"no token", "GET", "", map[string]string{"Authorization": ""}, 401},
		{"wrong token", "GET", "", map[string]string{"Authorization": "Bearer wrong-" + testToken}, 401},
		{"not bearer", "GET", "", map[string]string{"Authorization": "Basic " + testToken}, 401},
		{"rebinding Host", "GET", "", map[string]string{"Host": "evil.example:8420"}, 421},
		{"foreign Origin", "POST", ok, map[string]string{"Origin": "http://evil.example"}, 403},
		{"unknown field", "POST", `{"prompt":"x","evil":1}`, nil, 400},
		{"plan rule", "POST", `{"prompt":"x","size":"100x100"}`, nil, 400},
		{"passwd", "POST", `{"prompt":"x","conditions":[{"type":"image","uri":"file:///etc/passwd","role":"keyframe"}]}`, nil, 400},
		{"oversize", "POST", `{"prompt":"` + strings.Repeat("a", 2<<20) + `"}`, nil, 413},
		{"text/plain", "POST", ok, map[string]string{"Content-Type": "text/plain"}, 415},
	} {
		path := "/v1/videos"
		st, body := do(t, srv, c.method, path, c.body, c.hdr)
		if st != c.want {
			t.Errorf("%s: %d %s, want %d", c.name, st, body, c.want)
		}
		if strings.Contains(body, testToken) || strings.Contains(body, "/etc/passwd") {
			t.Errorf("%s: the answer leaks the token or a path: %s", c.name, body)
		}
		if st >= 400 {
			var e ErrorBody
			if json.Unmarshal([]byte(body), &e) != nil || e.Detail == "" || e.Error.Message != e.Detail {
				t.Errorf("%s: not an SGLang/OpenAI error body: %s", c.name, body)
			}
		}
	}
	if _, body := do(t, srv, "POST", "/v1/videos", `{"prompt":"x","size":"100x100"}`, nil); !strings.Contains(body, "multiple of 32") {
		t.Errorf("the plan's rule is not named: %s", body)
	}
	if len(f.List()) != 0 {
		t.Fatalf("refused requests made %d jobs", len(f.List()))
	}
	// IPv6 loopback and localhost are fine; the queue is bounded.
	for _, h := range []string{"localhost:1", "[::1]:8420", "127.0.0.1"} {
		if st, body := do(t, srv, "POST", "/v1/videos", ok, map[string]string{"Host": h}); st != 200 {
			t.Errorf("Host %s: %d %s", h, st, body)
		}
	}
	if st, _ := do(t, srv, "POST", "/v1/videos", ok, nil); st != 429 {
		t.Errorf("a fourth pending take: %d, want 429", st)
	}
}

func TestServerCORSOptIn(t *testing.T) {
	_, srv := newTestServer(t, func(o *ServerOptions) { o.Origins = []string{"http://localhost:3000"} })
	req, _ := http.NewRequest("OPTIONS", srv.URL+"/v1/videos", nil)
	req.Header.Set("Origin", "http://localhost:3000")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 204 || resp.Header.Get("Access-Control-Allow-Origin") != "http://localhost:3000" {
		t.Errorf("preflight: %d %q", resp.StatusCode, resp.Header.Get("Access-Control-Allow-Origin"))
	}
	if st, _ := do(t, srv, "GET", "/v1/videos", "", map[string]string{"Origin": "http://localhost:3001"}); st != 403 {
		t.Errorf("another origin: %d", st)
	}
}

func TestServerRoutes(t *testing.T) {
	f, srv := newTestServer(t, nil)
	st, body := do(t, srv, "POST", "/v1/videos", `{"prompt":"x","size":"256x256","seconds":"1","model":"minimax-h3"}`, nil)
	var v Video
	if st != 200 || json.Unmarshal([]byte(body), &v) != nil || v.Object != "video" || v.Status != StatusQueued {
		t.Fatalf("create: %d %s", st, body)
	}
	if st, _ := do(t, srv, "GET", "/v1/videos/"+v.ID+"/content", "", nil); st != 404 {
		t.Errorf("content of a queued take: %d", st)
	}
	f.complete(v.ID)
	for _, q := range []string{"", "?variant=video", "?variant=0"} {
		if st, body := do(t, srv, "GET", "/v1/videos/"+v.ID+"/content"+q, "", nil); st != 200 || !strings.Contains(body, "ftyp") {
			t.Errorf("content%s: %d", q, st)
		}
	}
	if st, _ := do(t, srv, "GET", "/v1/videos/"+v.ID+"/content?variant=1", "", nil); st != 404 {
		t.Errorf("variant 1: %d", st)
	}
	do(t, srv, "POST", "/v1/videos", `{"prompt":"y"}`, nil)
	do(t, srv, "POST", "/v1/videos", `{"prompt":"z"}`, nil)
	st, body = do(t, srv, "GET", "/v1/videos?limit=2", "", nil)
	var l VideoList
	if st != 200 || json.Unmarshal([]byte(body), &l) != nil || len(l.Data) != 2 || !l.HasMore || l.Object != "list" {
		t.Fatalf("list: %d %s", st, body)
	}
	st, body = do(t, srv, "GET", "/v1/videos?limit=2&after="+l.LastID, "", nil)
	json.Unmarshal([]byte(body), &l)
	if st != 200 || len(l.Data) != 1 || l.HasMore || l.Data[0].ID != v.ID {
		t.Errorf("second page: %d %s", st, body)
	}
	if st, _ := do(t, srv, "DELETE", "/v1/videos/video_3", "", nil); st != 200 {
		t.Errorf("delete: %d", st)
	}
	if g, _ := f.Get("video_3"); g.Status != StatusFailed {
		t.Errorf("deleted take is %s", g.Status)
	}
	if st, _ := do(t, srv, "GET", "/v1/videos/nope", "", nil); st != 404 {
		t.Errorf("unknown id: %d", st)
	}
}

// TestClientAgainstServer drives the handler with the package's own
// client: a built request goes through Create, Wait and Download.
func TestClientAgainstServer(t *testing.T) {
	f, srv := newTestServer(t, nil)
	dir := t.TempDir()
	img := filepath.Join(dir, "first.png")
	os.WriteFile(img, []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), 0o644)
	r := engine.Request{Prompt: "a lighthouse", Width: 256, Height: 256, Frames: 39, Steps: 3, Seed: 5, SeedSet: true, First: img, Reuse: 2}
	b, err := Build(r, engine.TaskFL2VA, DialectH3Studio, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Files) != 1 {
		t.Fatalf("the keyframe is not uploaded: %v", b.Files)
	}
	c := &Client{BaseURL: srv.URL + "/v1", Token: testToken, HTTP: srv.Client()}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	v, err := c.Create(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	got := f.reqs[0]
	if got.Prompt != r.Prompt || got.Width != 256 || got.Frames != 39 || got.Steps != 3 || got.Seed != 5 || got.Reuse != 2 || got.First == "" {
		t.Errorf("the server read %+v", got)
	}
	go func() { time.Sleep(50 * time.Millisecond); f.complete(v.ID) }()
	if _, err := c.Wait(ctx, v.ID, nil); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := c.Download(ctx, v.ID, &buf); err != nil || !bytes.Contains(buf.Bytes(), []byte("ftyp")) {
		t.Fatalf("download: %v", err)
	}
	bad := &Client{BaseURL: srv.URL, Token: "wrong-token-0000000000", HTTP: srv.Client()}
	if _, err := bad.Create(ctx, b); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("a wrong token: %v", err)
	}
}

// TestSlowClient: a client that never finishes its headers is cut off by
// the server's header timeout instead of holding the connection.
func TestSlowClient(t *testing.T) {
	_, plain := newTestServer(t, nil)
	srv := NewHTTPServer(plain.Config.Handler)
	if srv.ReadHeaderTimeout <= 0 || srv.ReadTimeout <= 0 || srv.MaxHeaderBytes <= 0 {
		t.Fatalf("NewHTTPServer sets no limits: %+v", srv)
	}
	srv.ReadHeaderTimeout = 200 * time.Millisecond
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	defer srv.Close()
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /v1/videos HTTP/1.1\r\nHost: 127.0.0.1\r\n")
	// Our own deadline is far past the server's: the read ends because the
	// server closed the connection, not because we stopped waiting.
	conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	_, err = bufio.NewReader(conn).ReadString('\n')
	if err == nil {
		// Go answers 408 before closing; either way the connection ends.
		_, err = io.ReadAll(conn)
	}
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Errorf("the stalled connection stayed open: %v", err)
	}
}
