package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"h3studio/engine/credstore"
	"h3studio/engine/videoapi"
	"h3studio/ui/studio"
)

// localAPIAddr is where the app serves /v1/videos when Settings ▸ Local
// API is on (loopback only; `h3studio serve --lan` is the way to open it
// to other machines).
const localAPIAddr = "127.0.0.1:8420"

// localAPI is the app's /v1/videos server over the studio's own queue and
// library: API takes appear in the window's library, the window's takes
// are listed by the API. It implements ui.LocalAPI.
type localAPI struct {
	s     *studio.Studio
	prefs *prefs
	addr  string // where to listen (localAPIAddr)

	mu      sync.Mutex
	srv     *http.Server
	uploads string
	token   string
}

func newLocalAPI(s *studio.Studio, p *prefs) *localAPI {
	return &localAPI{s: s, prefs: p, addr: localAPIAddr}
}

// Enabled reports whether the server runs.
func (l *localAPI) Enabled() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.srv != nil
}

// Address is the API's base URL.
func (l *localAPI) Address() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return "http://" + l.addr + "/v1"
}

// Token is the bearer token (empty until the server first started).
func (l *localAPI) Token() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.token
}

// SetEnabled starts or stops the server and remembers the choice.
func (l *localAPI) SetEnabled(on bool) error {
	var err error
	if on {
		err = l.start()
	} else {
		l.stop()
	}
	if err == nil && l.prefs != nil {
		l.prefs.mu.Lock()
		l.prefs.LocalAPI = on
		l.prefs.mu.Unlock()
		l.prefs.save()
	}
	return err
}

func (l *localAPI) start() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.srv != nil {
		return nil
	}
	token, _, err := apiToken(credstore.Default)
	if err != nil {
		return err
	}
	uploads, err := os.MkdirTemp("", "h3studio-uploads-")
	if err != nil {
		return err
	}
	h, err := videoapi.NewHandler(videoapi.ServerOptions{Jobs: newStudioJobs(l.s), Token: token, UploadDir: uploads})
	if err != nil {
		os.RemoveAll(uploads)
		return err
	}
	ln, err := net.Listen("tcp", l.addr)
	if err != nil {
		os.RemoveAll(uploads)
		var op *net.OpError
		if errors.As(err, &op) {
			return fmt.Errorf("%s is in use by another program", l.addr)
		}
		return err
	}
	srv := videoapi.NewHTTPServer(h)
	go srv.Serve(ln)
	l.srv, l.uploads, l.token, l.addr = srv, uploads, token, ln.Addr().String()
	return nil
}

func (l *localAPI) stop() {
	l.mu.Lock()
	srv, uploads := l.srv, l.uploads
	l.srv, l.uploads = nil, ""
	l.mu.Unlock()
	if srv == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	srv.Shutdown(ctx)
	os.RemoveAll(uploads)
}
