package main

import (
	"errors"
	"strings"

	"h3studio/engine/credstore"
	"h3studio/engine/videoapi"
	"h3studio/ui/studio"
)

// remoteSetting is Settings ▸ Run on server (ui.RemoteServer): the
// server's URL, kind and shared-folder map are kept in settings.json, its
// token in the credential store.
type remoteSetting struct {
	s     *studio.Studio
	prefs *prefs
}

// serverTokenService names server tokens in the credential store (one
// per server URL).
const serverTokenService = "h3studio.server"

func (r remoteSetting) Current() (url, kind, shared string, on bool) {
	r.prefs.mu.Lock()
	defer r.prefs.mu.Unlock()
	return r.prefs.ServerURL, r.prefs.ServerKind, r.prefs.ServerMap, r.prefs.ServerOn
}

// Apply switches Run on server; an empty token keeps the stored one.
func (r remoteSetting) Apply(url, token, kind, shared string, on bool) error {
	url = strings.TrimSpace(url)
	if on {
		if url == "" {
			return errors.New("enter the server's URL first")
		}
		if token != "" {
			if err := credstore.Default.Set(serverTokenService, url, token); err != nil {
				return err
			}
		}
		if err := r.connect(url, kind, shared); err != nil {
			return err
		}
	} else {
		r.s.Queue().SetRemote(nil)
	}
	r.prefs.mu.Lock()
	r.prefs.ServerURL, r.prefs.ServerKind, r.prefs.ServerMap, r.prefs.ServerOn = url, kind, shared, on
	r.prefs.mu.Unlock()
	r.prefs.save()
	return nil
}

// connect points the studio's new takes at the server.
func (r remoteSetting) connect(url, kind, shared string) error {
	token, err := credstore.Default.Get(serverTokenService, url)
	if err != nil && !errors.Is(err, credstore.ErrNotFound) {
		return err
	}
	dialect := videoapi.DialectSGLang
	if kind == string(videoapi.DialectH3Studio) {
		dialect = videoapi.DialectH3Studio
	}
	var maps []videoapi.PathMap
	if shared = strings.TrimSpace(shared); shared != "" {
		m, err := videoapi.ParsePathMap(shared)
		if err != nil {
			return err
		}
		maps = append(maps, m)
	}
	g, err := newRemoteGenerator(r.s.Queue().Plan, url, token, dialect, maps)
	if err != nil {
		return err
	}
	r.s.Queue().SetRemote(g)
	return nil
}
