package hfhub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Client speaks the Hub's HTTP protocol. The zero value is not usable; use NewClient.
type Client struct {
	Endpoint string // e.g. https://huggingface.co (HF_ENDPOINT)
	// Token is sent as `Authorization: Bearer` to the endpoint's host only,
	// never to a host a redirect leads to (the CDN's URLs are signed).
	Token string
	HTTP  *http.Client
	// Attempts is how often a request that failed transiently (a dropped
	// connection, 5xx, 429) is tried before giving up; a download that made
	// progress starts counting again.
	Attempts int
	// Backoff is the first wait between attempts; it doubles up to MaxBackoff.
	// A Retry-After from the Hub replaces it.
	Backoff, MaxBackoff time.Duration
	// IdleTimeout abandons a response body that delivers nothing for this long.
	IdleTimeout time.Duration
	UserAgent   string
}

// NewClient returns a client for endpoint with the usual timeouts and retries.
func NewClient(endpoint, token string) *Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.ResponseHeaderTimeout = 60 * time.Second
	tr.MaxIdleConnsPerHost = 8
	// No transparent gzip: the byte counts and ranges are of the file itself.
	tr.DisableCompression = true
	return &Client{
		Endpoint: strings.TrimRight(endpoint, "/"),
		Token:    token,
		HTTP: &http.Client{
			Transport: tr,
			// Redirects are followed by hand so that the headers of the Hub's
			// answer are seen and Authorization never reaches another host.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		Attempts:    8,
		Backoff:     time.Second,
		MaxBackoff:  30 * time.Second,
		IdleTimeout: 60 * time.Second,
		UserAgent:   "h3studio (huggingface_hub protocol)",
	}
}

// RepoInfo is the part of GET /api/models/{repo}/revision/{rev} H3 Studio uses.
type RepoInfo struct {
	ID  string `json:"id"`
	SHA string `json:"sha"` // the commit the revision names
	// Gated is false, "auto" or "manual".
	Gated any `json:"gated"`
}

// IsGated reports whether the repo asks users to accept a licence.
func (r *RepoInfo) IsGated() bool {
	switch g := r.Gated.(type) {
	case bool:
		return g
	case string:
		return g != "" && g != "false"
	}
	return false
}

func (c *Client) sameHost(u *url.URL) bool {
	e, err := url.Parse(c.Endpoint)
	return err == nil && strings.EqualFold(e.Host, u.Host) && e.Scheme == u.Scheme
}

func (c *Client) newRequest(ctx context.Context, method, raw string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, raw, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", c.UserAgent)
	req.Header.Set("Accept-Encoding", "identity")
	if c.Token != "" && c.sameHost(req.URL) {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	return req, nil
}

// hubError turns a non-success answer into an *Error.
func hubError(op, repo string, resp *http.Response) *Error {
	e := &Error{Op: op, Status: resp.StatusCode, Code: resp.Header.Get("X-Error-Code"),
		Message: resp.Header.Get("X-Error-Message"), Repo: repo}
	if e.Message == "" {
		var body struct {
			Error string `json:"error"`
		}
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		if json.Unmarshal(b, &body) == nil {
			e.Message = body.Error
		}
	}
	e.RetryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
	return e
}

// parseRetryAfter reads Retry-After as seconds or an HTTP date; 0 when absent or unreadable.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(v); err == nil && n >= 0 {
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// transient reports whether err is a failure that another attempt may not meet.
func transient(err error) bool {
	if err == nil {
		return false
	}
	var he *Error
	if errors.As(err, &he) {
		return he.retryable()
	}
	if errors.Is(err, context.Canceled) {
		return false
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, errIdle) ||
		errors.Is(err, errShort) || strings.Contains(err.Error(), "connection reset") ||
		strings.Contains(err.Error(), "broken pipe") || strings.Contains(err.Error(), "connection refused")
}

// wait sleeps before attempt n (1-based) of a failed request: Retry-After
// when the Hub gave one, else Backoff doubling up to MaxBackoff.
func (c *Client) wait(ctx context.Context, n int, err error) error {
	d := c.Backoff << (n - 1)
	if d > c.MaxBackoff || d <= 0 {
		d = c.MaxBackoff
	}
	var he *Error
	if errors.As(err, &he) && he.RetryAfter > 0 {
		d = he.RetryAfter
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// getJSON GETs an API URL with retries and returns its body and headers.
func (c *Client) getJSON(ctx context.Context, op, repo, raw string) ([]byte, http.Header, error) {
	var last error
	for n := 1; n <= c.Attempts; n++ {
		b, h, err := c.getOnce(ctx, op, repo, raw)
		if err == nil {
			return b, h, nil
		}
		last = err
		if !transient(err) || n == c.Attempts {
			break
		}
		if werr := c.wait(ctx, n, err); werr != nil {
			return nil, nil, werr
		}
	}
	return nil, nil, last
}

func (c *Client) getOnce(ctx context.Context, op, repo, raw string) ([]byte, http.Header, error) {
	req, err := c.newRequest(ctx, http.MethodGet, raw)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", op, err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", op, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, nil, hubError(op, repo, resp)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", op, err)
	}
	return b, resp.Header, nil
}

func escapePath(p string) string {
	parts := strings.Split(p, "/")
	for i, s := range parts {
		parts[i] = url.PathEscape(s)
	}
	return strings.Join(parts, "/")
}

// Revision returns the repo's info at rev (a branch, tag or commit).
func (c *Client) Revision(ctx context.Context, repo, rev string) (*RepoInfo, error) {
	raw := fmt.Sprintf("%s/api/models/%s/revision/%s", c.Endpoint, repo, url.PathEscape(rev))
	b, _, err := c.getJSON(ctx, "revision "+rev, repo, raw)
	if err != nil {
		return nil, err
	}
	var info RepoInfo
	if err := json.Unmarshal(b, &info); err != nil {
		return nil, fmt.Errorf("revision %s of %s: the Hub's answer is not repo info JSON: %w", rev, repo, err)
	}
	if !isHex(info.SHA, 40) {
		return nil, fmt.Errorf("revision %s of %s: the Hub's answer has no commit sha (got %q)", rev, repo, trunc(info.SHA, 60))
	}
	return &info, nil
}

// Tree lists the repo's files under dir at rev (recursively when asked),
// following the Link rel="next" pages.
func (c *Client) Tree(ctx context.Context, repo, rev, dir string, recursive bool) ([]Entry, error) {
	raw := fmt.Sprintf("%s/api/models/%s/tree/%s", c.Endpoint, repo, url.PathEscape(rev))
	if dir != "" {
		raw += "/" + escapePath(dir)
	}
	if recursive {
		raw += "?recursive=true"
	}
	var all []Entry
	seen := map[string]bool{}
	for page := 1; raw != ""; page++ {
		if seen[raw] {
			return nil, fmt.Errorf("tree of %s: page %d links back to an earlier page", repo, page)
		}
		seen[raw] = true
		b, h, err := c.getJSON(ctx, "tree of "+repo, repo, raw)
		if err != nil {
			return nil, err
		}
		entries, err := ParseTreePage(b)
		if err != nil {
			return nil, fmt.Errorf("tree of %s, page %d: %w", repo, page, err)
		}
		all = append(all, entries...)
		next := NextLink(h.Values("Link"))
		if next == "" {
			break
		}
		base, _ := url.Parse(raw)
		u, err := base.Parse(next)
		if err != nil {
			return nil, fmt.Errorf("tree of %s, page %d: bad Link %q: %w", repo, page, trunc(next, 100), err)
		}
		raw = u.String()
	}
	return all, nil
}

// NextLink returns the URL of rel="next" in Link header values, or "".
func NextLink(values []string) string {
	for _, v := range values {
		for _, part := range splitLinks(v) {
			part = strings.TrimSpace(part)
			if !strings.HasPrefix(part, "<") {
				continue
			}
			end := strings.Index(part, ">")
			if end < 0 {
				continue
			}
			target, params := part[1:end], part[end+1:]
			for _, p := range strings.Split(params, ";") {
				k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
				if !ok || !strings.EqualFold(strings.TrimSpace(k), "rel") {
					continue
				}
				for _, rel := range strings.Fields(strings.Trim(strings.TrimSpace(v), `"`)) {
					if strings.EqualFold(rel, "next") {
						return target
					}
				}
			}
		}
	}
	return ""
}

// splitLinks splits a Link header at the commas between links (not those inside <…>).
func splitLinks(v string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case '<':
			depth++
		case '>':
			if depth > 0 {
				depth--
			}
		case ',':
			if depth == 0 {
				out = append(out, v[start:i])
				start = i + 1
			}
		}
	}
	return append(out, v[start:])
}

// Stream is the body of a file download.
type Stream struct {
	io.ReadCloser
	Start  int64  // the file offset of the first byte (0 when the server ignored Range)
	Size   int64  // the file's size when known, else -1
	Commit string // X-Repo-Commit of the Hub's answer
	Etag   string // X-Linked-Etag or ETag, normalised
}

// Open starts the download of path at commit from offset. It follows the
// Hub's redirect to the CDN by hand, sending Authorization only to the Hub.
// A server that ignores Range answers from byte 0: Stream.Start says so.
func (c *Client) Open(ctx context.Context, repo, commit, path string, offset int64) (*Stream, error) {
	op := "download " + path
	raw := fmt.Sprintf("%s/%s/resolve/%s/%s", c.Endpoint, repo, url.PathEscape(commit), escapePath(path))
	var commitHdr, etag string
	for hop := 0; hop < 6; hop++ {
		req, err := c.newRequest(ctx, http.MethodGet, raw)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
		if offset > 0 {
			req.Header.Set("Range", fmt.Sprintf("bytes=%d-", offset))
		}
		resp, err := c.HTTP.Do(req)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
		if v := resp.Header.Get("X-Repo-Commit"); v != "" {
			commitHdr = v
		}
		if v := normEtag(resp.Header.Get("X-Linked-Etag")); v != "" {
			etag = v
		} else if v := normEtag(resp.Header.Get("ETag")); v != "" && etag == "" {
			etag = v
		}
		switch {
		case resp.StatusCode >= 300 && resp.StatusCode < 400 && resp.StatusCode != http.StatusNotModified:
			loc := resp.Header.Get("Location")
			resp.Body.Close()
			if loc == "" {
				return nil, fmt.Errorf("%s: redirect %d without Location", op, resp.StatusCode)
			}
			base, _ := url.Parse(raw)
			u, err := base.Parse(loc)
			if err != nil {
				return nil, fmt.Errorf("%s: bad redirect: %w", op, err)
			}
			raw = u.String()
			continue
		case resp.StatusCode == http.StatusOK:
			return &Stream{ReadCloser: resp.Body, Start: 0, Size: resp.ContentLength, Commit: commitHdr, Etag: etag}, nil
		case resp.StatusCode == http.StatusPartialContent:
			start, total, ok := parseContentRange(resp.Header.Get("Content-Range"))
			if !ok || start != offset {
				resp.Body.Close()
				return nil, fmt.Errorf("%s: asked for bytes from %d, the server sent Content-Range %q", op, offset, resp.Header.Get("Content-Range"))
			}
			return &Stream{ReadCloser: resp.Body, Start: start, Size: total, Commit: commitHdr, Etag: etag}, nil
		default:
			e := hubError(op, repo, resp)
			resp.Body.Close()
			return nil, e
		}
	}
	return nil, fmt.Errorf("%s: too many redirects", op)
}

// parseContentRange reads "bytes START-END/TOTAL" (TOTAL may be "*": -1).
func parseContentRange(v string) (start, total int64, ok bool) {
	v = strings.TrimSpace(v)
	rest, found := strings.CutPrefix(v, "bytes ")
	if !found {
		return 0, 0, false
	}
	rng, tot, found := strings.Cut(rest, "/")
	if !found {
		return 0, 0, false
	}
	a, _, found := strings.Cut(rng, "-")
	if !found {
		return 0, 0, false
	}
	s, err := strconv.ParseInt(a, 10, 64)
	if err != nil || s < 0 {
		return 0, 0, false
	}
	total = -1
	if tot != "*" {
		t, err := strconv.ParseInt(tot, 10, 64)
		if err != nil {
			return 0, 0, false
		}
		total = t
	}
	return s, total, true
}

func normEtag(v string) string {
	v = strings.TrimSpace(v)
	v = strings.TrimPrefix(v, "W/")
	return strings.Trim(v, `"`)
}

func isHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

func trunc(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
