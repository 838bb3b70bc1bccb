package videoapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Client talks to a /v1/videos server: H3 Studio's own or SGLang
// Diffusion's.
type Client struct {
	// BaseURL is the server's root ("http://gpu-box:30010"); a trailing
	// /v1 is accepted too.
	BaseURL string
	// Token is sent as a bearer token (SGLang ignores it today).
	Token string
	HTTP  *http.Client // nil: a client with a 5-minute timeout per call
}

// APIError is a refusal from the server.
type APIError struct {
	Status  int
	Message string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("the server answered %d: %s", e.Status, e.Message)
}

func (c *Client) http() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return &http.Client{Timeout: 5 * time.Minute}
}

func (c *Client) url(path string) string {
	base := strings.TrimRight(c.BaseURL, "/")
	base = strings.TrimSuffix(base, "/v1")
	return base + path
}

func (c *Client) do(ctx context.Context, method, path string, body io.Reader, ctype string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.url(path), body)
	if err != nil {
		return nil, err
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := c.http().Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode >= 300 {
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		return nil, &APIError{Status: resp.StatusCode, Message: errorMessage(b)}
	}
	return resp, nil
}

// errorMessage reads SGLang's {"detail": …} (a string, or FastAPI's list
// of validation errors) or OpenAI's {"error": {"message": …}}.
func errorMessage(b []byte) string {
	var e struct {
		Detail json.RawMessage `json:"detail"`
		Error  *ErrorDetail    `json:"error"`
	}
	if json.Unmarshal(b, &e) == nil {
		var s string
		if len(e.Detail) > 0 && json.Unmarshal(e.Detail, &s) == nil && s != "" {
			return s
		}
		if e.Error != nil && e.Error.Message != "" {
			return e.Error.Message
		}
		if len(e.Detail) > 0 {
			return string(e.Detail)
		}
	}
	s := strings.TrimSpace(string(b))
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

func decode[T any](resp *http.Response) (T, error) {
	defer resp.Body.Close()
	var v T
	if err := json.NewDecoder(io.LimitReader(resp.Body, 16<<20)).Decode(&v); err != nil {
		return v, fmt.Errorf("videoapi: the server's answer is not a video object: %w", err)
	}
	return v, nil
}

// Create submits a built request: JSON, or multipart (each field as JSON
// text, as SGLang reads forms) when it has files to upload.
func (c *Client) Create(ctx context.Context, b Built) (Video, error) {
	if len(b.Files) == 0 {
		body, err := json.Marshal(b.Request)
		if err != nil {
			return Video{}, err
		}
		resp, err := c.do(ctx, http.MethodPost, "/v1/videos", bytes.NewReader(body), "application/json")
		if err != nil {
			return Video{}, err
		}
		return decode[Video](resp)
	}
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() { pw.CloseWithError(writeForm(mw, b)) }()
	resp, err := c.do(ctx, http.MethodPost, "/v1/videos", pr, mw.FormDataContentType())
	pr.Close()
	if err != nil {
		return Video{}, err
	}
	return decode[Video](resp)
}

// writeForm writes the request's fields as form values and its files.
func writeForm(mw *multipart.Writer, b Built) error {
	body, err := json.Marshal(b.Request)
	if err != nil {
		return err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		return err
	}
	for k, v := range fields {
		val := string(v)
		var s string
		if json.Unmarshal(v, &s) == nil {
			val = s
		}
		if err := mw.WriteField(k, val); err != nil {
			return err
		}
	}
	for field, path := range b.Files {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		w, err := mw.CreateFormFile(field, filepath.Base(path))
		if err == nil {
			_, err = io.Copy(w, f)
		}
		f.Close()
		if err != nil {
			return err
		}
	}
	return mw.Close()
}

// Get fetches a video object.
func (c *Client) Get(ctx context.Context, id string) (Video, time.Duration, error) {
	resp, err := c.do(ctx, http.MethodGet, "/v1/videos/"+url.PathEscape(id), nil, "")
	if err != nil {
		return Video{}, 0, err
	}
	after := time.Second
	if ms, err := strconv.Atoi(resp.Header.Get("openai-poll-after-ms")); err == nil && ms > 0 {
		after = time.Duration(min(ms, 60000)) * time.Millisecond
	}
	v, err := decode[Video](resp)
	return v, after, err
}

// Wait polls until the video is no longer queued or in progress, calling
// progress after every poll; a failed video is an error carrying its
// reason.
func (c *Client) Wait(ctx context.Context, id string, progress func(Video)) (Video, error) {
	for {
		v, after, err := c.Get(ctx, id)
		if err != nil {
			return v, err
		}
		if progress != nil {
			progress(v)
		}
		switch v.Status {
		case StatusQueued, StatusInProgress:
		case StatusCompleted:
			return v, nil
		default:
			msg := v.Status
			if v.Error != nil && v.Error.Message != "" {
				msg = v.Error.Message
			}
			return v, fmt.Errorf("the server's take %s: %s", v.Status, msg)
		}
		select {
		case <-ctx.Done():
			return v, ctx.Err()
		case <-time.After(after):
		}
	}
}

// Download writes a completed video's MP4 to w.
func (c *Client) Download(ctx context.Context, id string, w io.Writer) error {
	resp, err := c.do(ctx, http.MethodGet, "/v1/videos/"+url.PathEscape(id)+"/content", nil, "")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, err = io.Copy(w, resp.Body)
	return err
}

// Delete asks the server to end (H3 Studio) or forget (SGLang) a video.
func (c *Client) Delete(ctx context.Context, id string) error {
	resp, err := c.do(ctx, http.MethodDelete, "/v1/videos/"+url.PathEscape(id), nil, "")
	if err != nil {
		var ae *APIError
		if errors.As(err, &ae) && ae.Status == http.StatusNotFound {
			return nil
		}
		return err
	}
	resp.Body.Close()
	return nil
}
