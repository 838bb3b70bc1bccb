package videoapi

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"h3studio/engine"
)

// Submission is a validated take for Jobs.Submit.
type Submission struct {
	Lowered Lowered
	Plan    engine.Plan
	// Uploads are the request's saved files; the job owns them from now
	// on (it removes them when it ends).
	Uploads []Upload
}

// Jobs is what the server needs from whatever runs takes: `h3studio
// serve` backs it with an engine session and a library folder, the app
// with the studio's queue (so API takes and window takes are one list).
type Jobs interface {
	// ModelName is the loaded model's name ("" while none is loaded).
	ModelName() string
	// Plan validates a request with the engine's planner, without a job.
	Plan(r engine.Request) (engine.Plan, error)
	// Submit queues a take.
	Submit(s Submission) (Video, error)
	// List returns every take the server knows, newest first.
	List() []Video
	// Get returns one take.
	Get(id string) (Video, bool)
	// Cancel ends a queued or running take (a finished one is left as it
	// is); ok is false for an unknown id.
	Cancel(id string) (v Video, ok bool)
	// Content is the finished take's file of a variant ("video", the
	// default, or "thumbnail") of output index (0 for the first; SGLang's
	// numeric variant): ErrNotFound for an unknown id, variant or index,
	// ErrNotReady while it is not completed.
	Content(id, variant string, index int) (path, contentType string, err error)
	// Pending counts queued and running takes (the queue bound).
	Pending() int
}

// Errors of Jobs.
var (
	ErrNotFound = errors.New("videoapi: no such video")
	ErrNotReady = errors.New("videoapi: the video is not completed")
	ErrNoModel  = errors.New("videoapi: no model is loaded")
)

// ServerOptions configure the HTTP handler.
type ServerOptions struct {
	Jobs Jobs
	// Token is the bearer token every request must carry (required).
	Token string
	// Hosts are extra host names accepted in the Host header (the server's
	// LAN name when the user opted in); loopback names are always
	// accepted. Anything else is refused, so a DNS-rebinding page cannot
	// talk to the server.
	Hosts []string
	// Origins are the browser origins allowed to call the API (CORS);
	// none by default, and a request from any other origin is refused.
	Origins []string
	// Folders are where file:// references may point.
	Folders Folders
	// UploadDir keeps uploaded files until their take ends (required for
	// multipart bodies).
	UploadDir string
	Limits    Limits
	// MaxPending bounds queued plus running takes (default 16).
	MaxPending int
	// PollAfter is the openai-poll-after-ms hint (default 1 s).
	PollAfter time.Duration
	Logger    *slog.Logger
}

// Handler serves /v1/videos.
type Handler struct {
	o   ServerOptions
	mux *http.ServeMux
}

// NewHandler returns the API's HTTP handler.
func NewHandler(o ServerOptions) (*Handler, error) {
	if o.Jobs == nil {
		return nil, errors.New("videoapi: ServerOptions.Jobs is nil")
	}
	if len(o.Token) < 16 {
		return nil, errors.New("videoapi: the API token must be at least 16 characters")
	}
	o.Limits = o.Limits.withDefaults()
	if o.MaxPending <= 0 {
		o.MaxPending = 16
	}
	if o.PollAfter <= 0 {
		o.PollAfter = time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	h := &Handler{o: o, mux: http.NewServeMux()}
	h.mux.HandleFunc("POST /v1/videos", h.create)
	h.mux.HandleFunc("GET /v1/videos", h.list)
	h.mux.HandleFunc("GET /v1/videos/{id}", h.get)
	h.mux.HandleFunc("DELETE /v1/videos/{id}", h.delete)
	h.mux.HandleFunc("GET /v1/videos/{id}/content", h.content)
	h.mux.HandleFunc("GET /v1/models", h.models)
	h.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "not_found", "no such route (the API is /v1/videos)")
	})
	return h, nil
}

// NewHTTPServer wraps a handler in a server whose timeouts keep a slow
// or stalled client from holding a connection (slow-loris).
func NewHTTPServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       10 * time.Minute, // an upload of a large reference video
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    32 << 10,
	}
}

// IsLoopback reports whether addr (host:port) listens on loopback only.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// ServeHTTP checks Host, Origin and the token before any route runs.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "no-store")
	if !h.hostAllowed(r.Host) {
		writeError(w, http.StatusMisdirectedRequest, "host_not_allowed", "this server does not answer for that Host name")
		return
	}
	if origin := r.Header.Get("Origin"); origin != "" {
		if !slices.Contains(h.o.Origins, origin) {
			writeError(w, http.StatusForbidden, "origin_not_allowed", "requests from web pages of this origin are not allowed")
			return
		}
		w.Header().Set("Access-Control-Allow-Origin", origin)
		w.Header().Set("Vary", "Origin")
		if r.Method == http.MethodOptions {
			w.Header().Set("Access-Control-Allow-Methods", "GET, POST, DELETE")
			w.Header().Set("Access-Control-Allow-Headers", "Authorization, Content-Type")
			w.WriteHeader(http.StatusNoContent)
			return
		}
	}
	if !h.authorized(r) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="h3studio"`)
		writeError(w, http.StatusUnauthorized, "invalid_api_key", "a valid bearer token is required (Authorization: Bearer …)")
		return
	}
	h.mux.ServeHTTP(w, r)
}

func (h *Handler) hostAllowed(host string) bool {
	name := host
	if hn, _, err := net.SplitHostPort(host); err == nil {
		name = hn
	}
	name = strings.TrimSuffix(strings.Trim(name, "[]"), ".")
	if strings.EqualFold(name, "localhost") {
		return true
	}
	if ip := net.ParseIP(name); ip != nil && ip.IsLoopback() {
		return true
	}
	for _, a := range h.o.Hosts {
		if strings.EqualFold(name, a) {
			return true
		}
	}
	return false
}

func (h *Handler) authorized(r *http.Request) bool {
	auth := r.Header.Get("Authorization")
	tok, ok := strings.CutPrefix(auth, "Bearer ")
	if !ok {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(strings.TrimSpace(tok)), []byte(h.o.Token)) == 1
}

func (h *Handler) create(w http.ResponseWriter, r *http.Request) {
	if h.o.Jobs.ModelName() == "" {
		writeError(w, http.StatusServiceUnavailable, "model_not_loaded", "no model is loaded yet")
		return
	}
	if h.o.Jobs.Pending() >= h.o.MaxPending {
		w.Header().Set("Retry-After", "30")
		writeError(w, http.StatusTooManyRequests, "queue_full", fmt.Sprintf("%d takes are already queued or running; try again later", h.o.MaxPending))
		return
	}
	lim := h.o.Limits
	r.Body = http.MaxBytesReader(w, r.Body, lim.MaxBody+int64(lim.MaxUploads)*lim.MaxUpload)
	var (
		c   CreateRequest
		ups []Upload
		err error
	)
	mt, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch mt {
	case "application/json", "":
		var body []byte
		body, err = readAll(r, lim.MaxBody)
		if err == nil {
			c, err = ParseJSON(body, lim)
		}
	case "multipart/form-data":
		if h.o.UploadDir == "" || params["boundary"] == "" {
			writeError(w, http.StatusBadRequest, "invalid_request", "multipart bodies need a boundary")
			return
		}
		c, ups, err = ParseMultipart(r.Body, params["boundary"], h.o.UploadDir, lim)
	default:
		writeError(w, http.StatusUnsupportedMediaType, "unsupported_media_type", "send application/json or multipart/form-data")
		return
	}
	if err != nil {
		h.refuse(w, err)
		return
	}
	low, err := Lower(c, h.o.Folders, ups, h.o.Jobs.ModelName())
	if err != nil {
		RemoveUploads(ups)
		h.refuse(w, err)
		return
	}
	plan, err := h.o.Jobs.Plan(low.Request)
	if err != nil {
		RemoveUploads(ups)
		h.refuse(w, err)
		return
	}
	v, err := h.o.Jobs.Submit(Submission{Lowered: low, Plan: plan, Uploads: ups})
	if err != nil {
		RemoveUploads(ups)
		h.refuse(w, err)
		return
	}
	h.pollHint(w)
	writeJSON(w, http.StatusOK, v)
}

func readAll(r *http.Request, max int64) ([]byte, error) {
	b := make([]byte, 0, 4096)
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Body.Read(buf)
		b = append(b, buf[:n]...)
		if int64(len(b)) > max {
			return nil, fmt.Errorf("%w: the body is over %d bytes", ErrTooLarge, max)
		}
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				return nil, fmt.Errorf("%w: the body is too large", ErrTooLarge)
			}
			if err.Error() == "EOF" {
				return b, nil
			}
			return nil, &FieldError{Rule: "the body could not be read"}
		}
	}
}

// refuse answers a rejected request: the rule for bad input (400), the
// size for oversize (413); anything else is logged and answered without
// its details (they may hold paths).
func (h *Handler) refuse(w http.ResponseWriter, err error) {
	var fe *FieldError
	var re *engine.RequestError
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &fe):
		writeError(w, http.StatusBadRequest, "invalid_request", fe.Error())
	case errors.As(err, &re):
		writeError(w, http.StatusBadRequest, "invalid_request", "invalid request: "+re.Field+" "+scrubPaths(re.Rule))
	case errors.Is(err, ErrTooLarge), errors.As(err, &mbe):
		writeError(w, http.StatusRequestEntityTooLarge, "request_too_large", fmt.Sprintf("the request is larger than this server accepts (%d bytes of fields, %d bytes per file)", h.o.Limits.MaxBody, h.o.Limits.MaxUpload))
	case errors.Is(err, ErrNoModel):
		writeError(w, http.StatusServiceUnavailable, "model_not_loaded", "no model is loaded yet")
	default:
		h.o.Logger.Warn("api: request failed", "err", err)
		writeError(w, http.StatusInternalServerError, "server_error", "the take could not be queued (see the server's log)")
	}
}

// scrubPaths drops absolute paths from an engine rule (the engine names
// files; a network peer must not learn the server's folders).
func scrubPaths(s string) string {
	f := strings.Fields(s)
	for i, w := range f {
		t := strings.Trim(w, `"'(),:;`)
		if strings.HasPrefix(t, "/") || strings.HasPrefix(t, "~") || (len(t) > 2 && t[1] == ':' && (t[2] == '\\' || t[2] == '/')) {
			f[i] = strings.Replace(w, t, "(a file)", 1)
		}
	}
	return strings.Join(f, " ")
}

func (h *Handler) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit := 20
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 100 {
			writeError(w, http.StatusBadRequest, "invalid_request", "invalid request: limit must be 1..100")
			return
		}
		limit = n
	}
	order := q.Get("order")
	if order != "" && order != "asc" && order != "desc" {
		writeError(w, http.StatusBadRequest, "invalid_request", "invalid request: order must be asc or desc")
		return
	}
	all := h.o.Jobs.List()
	if order == "asc" {
		slices.Reverse(all)
	}
	if after := q.Get("after"); after != "" {
		i := slices.IndexFunc(all, func(v Video) bool { return v.ID == after })
		if i < 0 {
			writeError(w, http.StatusBadRequest, "invalid_request", "invalid request: after names no video of this server")
			return
		}
		all = all[i+1:]
	}
	out := VideoList{Object: "list", Data: all}
	if len(all) > limit {
		out.Data, out.HasMore = all[:limit], true
	}
	if out.Data == nil {
		out.Data = []Video{}
	}
	if len(out.Data) > 0 {
		out.FirstID, out.LastID = out.Data[0].ID, out.Data[len(out.Data)-1].ID
	}
	writeJSON(w, http.StatusOK, out)
}

// videoByID applies find (a lookup or a cancel) to the path's video id,
// answering 404 when no video has it.
func videoByID(w http.ResponseWriter, r *http.Request, find func(id string) (Video, bool)) (Video, bool) {
	v, ok := find(r.PathValue("id"))
	if !ok {
		writeVideoNotFound(w)
	}
	return v, ok
}

func writeVideoNotFound(w http.ResponseWriter) {
	writeError(w, http.StatusNotFound, "not_found", "Video not found")
}

func (h *Handler) get(w http.ResponseWriter, r *http.Request) {
	v, ok := videoByID(w, r, h.o.Jobs.Get)
	if !ok {
		return
	}
	if v.Status == StatusQueued || v.Status == StatusInProgress {
		h.pollHint(w)
	}
	writeJSON(w, http.StatusOK, v)
}

func (h *Handler) delete(w http.ResponseWriter, r *http.Request) {
	v, ok := videoByID(w, r, h.o.Jobs.Cancel)
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"id": v.ID, "object": "video.deleted", "deleted": true, "status": v.Status})
}

func (h *Handler) content(w http.ResponseWriter, r *http.Request) {
	variant, index := r.URL.Query().Get("variant"), 0
	switch variant {
	case "", "video":
		variant = "video"
	case "thumbnail", "spritesheet":
	default:
		n, err := strconv.Atoi(variant)
		if err != nil || n < 0 || n >= MaxOutputs {
			writeError(w, http.StatusBadRequest, "invalid_request", fmt.Sprintf("invalid request: variant must be video, thumbnail, spritesheet or an output index 0..%d", MaxOutputs-1))
			return
		}
		variant, index = "video", n
	}
	path, typ, err := h.o.Jobs.Content(r.PathValue("id"), variant, index)
	switch {
	case errors.Is(err, ErrNotReady):
		writeError(w, http.StatusNotFound, "not_ready", "Generation is still in-progress")
		return
	case err != nil:
		writeVideoNotFound(w)
		return
	}
	f, err := os.Open(path)
	if err != nil {
		writeError(w, http.StatusNotFound, "not_found", "the video's file is gone")
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		writeError(w, http.StatusNotFound, "not_found", "the video's file is gone")
		return
	}
	w.Header().Set("Content-Type", typ)
	http.ServeContent(w, r, "", st.ModTime(), f)
}

func (h *Handler) models(w http.ResponseWriter, r *http.Request) {
	name := h.o.Jobs.ModelName()
	data := []map[string]any{}
	if name != "" {
		data = append(data, map[string]any{"id": "MiniMaxAI/MiniMax-H3", "object": "model", "owned_by": "h3studio", "description": name})
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data})
}

func (h *Handler) pollHint(w http.ResponseWriter) {
	w.Header().Set("openai-poll-after-ms", strconv.FormatInt(h.o.PollAfter.Milliseconds(), 10))
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	typ := "invalid_request_error"
	if status >= 500 {
		typ = "server_error"
	}
	writeJSON(w, status, ErrorBody{Detail: msg, Error: ErrorDetail{Message: msg, Type: typ, Code: code}})
}
