// Package fakehub is a Hugging Face Hub for tests (net/http/httptest),
// faithful to the protocol huggingface_hub speaks: repo info, paged trees
// (Link rel="next"), resolve with a 302 to a second ("CDN") host for LFS
// files, Range, gated 401/403 with X-Error-Code, and injectable faults: a
// 429 with Retry-After, a 503, a connection cut or stalled mid-file, a
// corrupted byte and a CDN that ignores Range.
package fakehub

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Fault is one misbehaviour, fired once (unless Always).
type Fault struct {
	Path string
	// At is the file offset the fault hits (Cut, Stall, Corrupt).
	At     int64
	Always bool
	fired  bool
}

// Request is one logged request.
type Request struct {
	Server string // "hub" or "cdn"
	Method string
	Kind   string // "info", "tree", "resolve", "cdn"
	File   string
	Range  string
	Status int
	Start  int64 // first byte sent
	Bytes  int64 // body bytes of the file sent
	Auth   bool  // Authorization was present
	Event  string
	T0, T  time.Time
}

// Hub is a running fake Hub.
type Hub struct {
	Repo      string
	Commit    string
	PageSize  int
	Threshold int // files at least this large are LFS (served by the CDN)
	Token     string
	// Faults.
	Throttle    *Fault // 429 on the first resolve of Path, Retry-After RetrySecs
	RetrySecs   int
	FailOnce    *Fault // 503 on the first GET of Path's bytes
	Cut         *Fault // the connection ends before byte At of Path
	Stall       *Fault // the connection stays silent before byte At of Path
	Corrupt     *Fault // byte At of Path is sent inverted
	IgnoreRange bool   // the CDN answers 200 with the whole file to ranged requests

	files map[string][]byte
	mu    sync.Mutex
	log   []Request
	// Stalled is closed when a stall begins.
	Stalled chan struct{}

	API, CDN *httptest.Server
}

// New starts a hub serving files (path → bytes) at commit.
func New(repo, commit string, files map[string][]byte) *Hub {
	h := &Hub{Repo: repo, Commit: commit, PageSize: 5, Threshold: 1024, files: files, Stalled: make(chan struct{}), RetrySecs: 1}
	h.API = httptest.NewServer(http.HandlerFunc(h.serveHub))
	// The CDN listens on another address so that a client sees another host.
	cdn := httptest.NewUnstartedServer(http.HandlerFunc(h.serveCDN))
	if l, err := net.Listen("tcp", "127.0.0.2:0"); err == nil {
		cdn.Listener.Close()
		cdn.Listener = l
	}
	cdn.Start()
	h.CDN = cdn
	return h
}

// Close stops both servers.
func (h *Hub) Close() {
	h.CDN.CloseClientConnections()
	h.API.CloseClientConnections()
	h.CDN.Close()
	h.API.Close()
}

// Endpoint is the value for HF_ENDPOINT.
func (h *Hub) Endpoint() string { return h.API.URL }

// Log returns the requests so far.
func (h *Hub) Log() []Request {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Request(nil), h.log...)
}

func (h *Hub) record(r Request) {
	h.mu.Lock()
	h.log = append(h.log, r)
	h.mu.Unlock()
}

func (h *Hub) claim(f *Fault, path string, start, end int64, ranged bool) bool {
	if f == nil || f.Path != path {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if f.fired && !f.Always {
		return false
	}
	hit := true
	if ranged {
		hit = start <= f.At && f.At < end
	}
	if hit {
		f.fired = true
	}
	return hit
}

func isLFS(h *Hub, b []byte) bool { return len(b) >= h.Threshold }

// GitSHA1 is the git blob hash of b.
func GitSHA1(b []byte) string {
	s := sha1.New()
	fmt.Fprintf(s, "blob %d\x00", len(b))
	s.Write(b)
	return hex.EncodeToString(s.Sum(nil))
}

// SHA256 is the hex sha256 of b.
func SHA256(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func (h *Hub) pointerOID(b []byte) string {
	ptr := fmt.Sprintf("version https://git-lfs.github.com/spec/v1\noid sha256:%s\nsize %d\n", SHA256(b), len(b))
	return GitSHA1([]byte(ptr))
}

// Etag is the etag the hub gives path (sha256 for LFS, git sha1 otherwise).
func (h *Hub) Etag(path string) string {
	b := h.files[path]
	if isLFS(h, b) {
		return SHA256(b)
	}
	return GitSHA1(b)
}

func apiError(w http.ResponseWriter, status int, code, msg string) {
	if code != "" {
		w.Header().Set("X-Error-Code", code)
	}
	w.Header().Set("X-Error-Message", msg)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"error": msg})
}

func (h *Hub) serveHub(w http.ResponseWriter, r *http.Request) {
	rec := Request{Server: "hub", Method: r.Method, Range: r.Header.Get("Range"), Auth: r.Header.Get("Authorization") != "", T0: time.Now()}
	sw := &statusWriter{ResponseWriter: w}
	defer func() { rec.Status, rec.T = sw.status, time.Now(); h.record(rec) }()
	p := r.URL.Path
	prefix := "/api/models/" + h.Repo
	switch {
	case strings.HasPrefix(p, prefix+"/revision/"):
		rec.Kind = "info"
		rev := strings.TrimPrefix(p, prefix+"/revision/")
		if rev != "main" && rev != h.Commit {
			apiError(sw, 404, "RevisionNotFound", "Invalid rev id: "+rev)
			return
		}
		gated := any(false)
		if h.Token != "" {
			gated = "manual"
		}
		var siblings []map[string]string
		for p := range h.files {
			siblings = append(siblings, map[string]string{"rfilename": p})
		}
		sort.Slice(siblings, func(i, j int) bool { return siblings[i]["rfilename"] < siblings[j]["rfilename"] })
		sw.Header().Set("Content-Type", "application/json")
		json.NewEncoder(sw).Encode(map[string]any{"id": h.Repo, "sha": h.Commit, "gated": gated, "siblings": siblings})
	case strings.HasPrefix(p, prefix+"/tree/"):
		rec.Kind = "tree"
		h.tree(sw, r, strings.TrimPrefix(p, prefix+"/tree/"))
	case strings.HasPrefix(p, "/"+h.Repo+"/resolve/"):
		rec.Kind = "resolve"
		rest := strings.TrimPrefix(p, "/"+h.Repo+"/resolve/")
		rev, file, _ := strings.Cut(rest, "/")
		rec.File = file
		h.resolve(sw, r, rev, file, &rec)
	case strings.HasPrefix(p, "/api/models/"):
		apiError(sw, 401, "RepoNotFound", "Repository Not Found")
	default:
		apiError(sw, 404, "", "Not Found")
	}
}

func (h *Hub) tree(w http.ResponseWriter, r *http.Request, rest string) {
	rev, dir, _ := strings.Cut(rest, "/")
	if rev != "main" && rev != h.Commit {
		apiError(w, 404, "RevisionNotFound", "Invalid rev id: "+rev)
		return
	}
	recursive := r.URL.Query().Get("recursive") == "true"
	var paths []string
	dirs := map[string]bool{}
	for p := range h.files {
		if dir != "" && !strings.HasPrefix(p, dir+"/") {
			continue
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(p, dir), "/")
		parts := strings.Split(rel, "/")
		for i := 1; i < len(parts); i++ {
			d := strings.Join(parts[:i], "/")
			if dir != "" {
				d = dir + "/" + d
			}
			if recursive || i == 1 {
				dirs[d] = true
			}
		}
		if recursive || len(parts) == 1 {
			paths = append(paths, p)
		}
	}
	type lfs struct {
		OID         string `json:"oid"`
		Size        int    `json:"size"`
		PointerSize int    `json:"pointerSize"`
	}
	type entry struct {
		Type string `json:"type"`
		OID  string `json:"oid"`
		Size int    `json:"size"`
		Path string `json:"path"`
		LFS  *lfs   `json:"lfs,omitempty"`
	}
	var all []entry
	for d := range dirs {
		all = append(all, entry{Type: "directory", OID: GitSHA1([]byte(d)), Path: d})
	}
	for _, p := range paths {
		b := h.files[p]
		e := entry{Type: "file", OID: GitSHA1(b), Size: len(b), Path: p}
		if isLFS(h, b) {
			e.OID = h.pointerOID(b)
			e.LFS = &lfs{OID: SHA256(b), Size: len(b), PointerSize: 134}
		}
		all = append(all, e)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Path < all[j].Path })
	off := 0
	if c := r.URL.Query().Get("cursor"); c != "" {
		b, err := base64.RawURLEncoding.DecodeString(c)
		if err == nil {
			off, err = strconv.Atoi(string(b))
		}
		if err != nil || off < 0 || off > len(all) {
			apiError(w, 400, "", "Invalid cursor")
			return
		}
	}
	end := min(off+h.PageSize, len(all))
	if end < len(all) {
		q := r.URL.Query()
		q.Set("cursor", base64.RawURLEncoding.EncodeToString([]byte(strconv.Itoa(end))))
		next := url.URL{Scheme: "http", Host: r.Host, Path: r.URL.Path, RawQuery: q.Encode()}
		w.Header().Set("Link", fmt.Sprintf("<%s>; rel=\"next\"", next.String()))
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(all[off:end])
}

func (h *Hub) resolve(w http.ResponseWriter, r *http.Request, rev, file string, rec *Request) {
	if rev != "main" && rev != h.Commit {
		apiError(w, 404, "RevisionNotFound", "Invalid rev id: "+rev)
		return
	}
	if h.Token != "" {
		auth := r.Header.Get("Authorization")
		if auth == "" {
			apiError(w, 401, "GatedRepo", "Access to model "+h.Repo+" is restricted. You must have access to it and be authenticated to access it. Please log in.")
			return
		}
		if auth != "Bearer "+h.Token {
			apiError(w, 403, "GatedRepo", "Access to model "+h.Repo+" is restricted and you are not in the authorized list.")
			return
		}
	}
	b, ok := h.files[file]
	if !ok {
		apiError(w, 404, "EntryNotFound", file+" does not exist")
		return
	}
	if h.claim(h.Throttle, file, 0, 0, false) {
		rec.Event = "throttle"
		w.Header().Set("Retry-After", strconv.Itoa(h.RetrySecs))
		apiError(w, 429, "", "You have been rate-limited")
		return
	}
	w.Header().Set("X-Repo-Commit", h.Commit)
	if isLFS(h, b) {
		w.Header().Set("X-Linked-Etag", `"`+SHA256(b)+`"`)
		w.Header().Set("X-Linked-Size", strconv.Itoa(len(b)))
		w.Header().Set("ETag", `"`+h.pointerOID(b)+`"`)
		w.Header().Set("Location", h.CDN.URL+"/repos/"+SHA256(b)+"?path="+url.QueryEscape(file)+"&Signature=x")
		w.WriteHeader(http.StatusFound)
		return
	}
	w.Header().Set("ETag", `"`+GitSHA1(b)+`"`)
	h.sendBytes(w, r, file, b, true, rec)
}

func (h *Hub) serveCDN(w http.ResponseWriter, r *http.Request) {
	rec := Request{Server: "cdn", Kind: "cdn", Method: r.Method, Range: r.Header.Get("Range"), Auth: r.Header.Get("Authorization") != "", T0: time.Now()}
	sw := &statusWriter{ResponseWriter: w}
	defer func() { rec.Status, rec.T = sw.status, time.Now(); h.record(rec) }()
	file := r.URL.Query().Get("path")
	rec.File = file
	if rec.Auth {
		rec.Event = "violation"
		http.Error(sw, "Only one auth mechanism allowed", 400)
		return
	}
	b, ok := h.files[file]
	if !ok || !strings.HasSuffix(r.URL.Path, "/"+SHA256(b)) {
		http.Error(sw, "Access Denied", 403)
		return
	}
	h.sendBytes(sw, r, file, b, !h.IgnoreRange, &rec)
}

func (h *Hub) sendBytes(w http.ResponseWriter, r *http.Request, file string, b []byte, ranges bool, rec *Request) {
	size := int64(len(b))
	start, end := int64(0), size
	status := 200
	if rg := r.Header.Get("Range"); ranges && rg != "" {
		s, ok := strings.CutPrefix(rg, "bytes=")
		a, _, _ := strings.Cut(s, "-")
		n, err := strconv.ParseInt(a, 10, 64)
		if !ok || err != nil || n < 0 {
			w.WriteHeader(416)
			return
		}
		if n >= size {
			w.Header().Set("Content-Range", fmt.Sprintf("bytes */%d", size))
			w.WriteHeader(416)
			return
		}
		start, status = n, 206
		w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", start, size-1, size))
	}
	if r.Method == http.MethodGet && h.claim(h.FailOnce, file, 0, 0, false) {
		rec.Event = "fail"
		http.Error(w, "Service Unavailable", 503)
		return
	}
	w.Header().Set("Accept-Ranges", "bytes")
	w.Header().Set("Content-Length", strconv.FormatInt(end-start, 10))
	w.WriteHeader(status)
	rec.Start = start
	if r.Method == http.MethodHead {
		return
	}
	stop := end
	cut := h.claim(h.Cut, file, start, end, true)
	stall := h.claim(h.Stall, file, start, end, true)
	if cut {
		stop = h.Cut.At
		rec.Event = "cut"
	}
	if stall {
		stop = h.Stall.At
		rec.Event = "stall"
	}
	body := append([]byte(nil), b[start:stop]...)
	if h.claim(h.Corrupt, file, start, stop, true) {
		body[h.Corrupt.At-start] ^= 0xFF
		rec.Event = "corrupt"
	}
	n, _ := w.Write(body)
	rec.Bytes = int64(n)
	if cut || stall {
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		if stall {
			close(h.Stalled)
			<-r.Context().Done()
		}
		// End the connection before the promised length.
		panic(http.ErrAbortHandler)
	}
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = 200
	}
	return s.ResponseWriter.Write(b)
}

func (s *statusWriter) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
