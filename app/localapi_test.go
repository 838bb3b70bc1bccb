package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"h3studio/engine/testkit"
	"h3studio/engine/videoapi"
	"h3studio/ui/studio"
	"h3studio/ui/studio/fakeengine"
)

// fakeStudio is a studio over the fake engine's demo model, in a library of
// its own, ready to generate; o's Engine and Library are set here. It is
// closed when the test ends.
func fakeStudio(t *testing.T, o studio.Options) *studio.Studio {
	t.Helper()
	lib, err := studio.OpenLibrary(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	eng := fakeengine.New(fakeengine.Options{})
	eng.DemoDir = filepath.Join(t.TempDir(), "fake-model")
	o.Engine, o.Library = eng, lib
	s, err := studio.New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	s.Model().UseDemo()
	if err := waitForModel(s, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestLocalAPIOverTheStudio: the app's server shares the window's queue
// and library both ways (fake engine: seconds, not a real take).
func TestLocalAPIOverTheStudio(t *testing.T) {
	t.Setenv("H3_API_TOKEN", "test-token-0123456789abcdef")
	s := fakeStudio(t, studio.Options{})
	api := newLocalAPI(s, nil)
	api.addr = "127.0.0.1:0"
	if api.Enabled() {
		t.Fatal("the local API is on before it was switched on")
	}
	if err := api.SetEnabled(true); err != nil {
		t.Fatal(err)
	}
	defer api.SetEnabled(false)
	if api.Token() != "test-token-0123456789abcdef" || !strings.HasPrefix(api.Address(), "http://127.0.0.1:") {
		t.Fatalf("address %q token %q", api.Address(), api.Token())
	}

	// A take from the window is listed by the API once saved.
	s.Compose().SetSettings(studio.DemoSettings()) // a small canvas: the fake draws every frame
	s.Compose().SetPrompt("A take made in the window.")
	if _, err := s.Queue().Generate(); err != nil {
		t.Fatal(err)
	}
	c := &videoapi.Client{BaseURL: api.Address(), Token: api.Token()}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	list := func() videoapi.VideoList {
		req, _ := http.NewRequestWithContext(ctx, "GET", api.Address()+"/videos", nil)
		req.Header.Set("Authorization", "Bearer "+api.Token())
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var l videoapi.VideoList
		json.Unmarshal(b, &l)
		return l
	}
	var l videoapi.VideoList
	if !testkit.Within(60*time.Second, nil, func() bool {
		l = list()
		return len(l.Data) == 1 && l.Data[0].Status == videoapi.StatusCompleted
	}) {
		t.Fatalf("the window's take is not listed: %+v", l)
	}
	if l.Data[0].Prompt != "A take made in the window." {
		t.Errorf("the window's take is listed as %+v", l.Data[0])
	}

	// A take from the API lands in the window's library.
	b, err := videoapi.Build(s.Snapshot().Draft.Request(), "t2va", videoapi.DialectH3Studio, nil)
	if err != nil {
		t.Fatal(err)
	}
	b.Request.Prompt = "A take made through the API."
	v, err := c.Create(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Wait(ctx, v.ID, nil); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, tk := range s.Snapshot().Takes {
		found = found || tk.Meta.Prompt == "A take made through the API."
	}
	if !found {
		t.Error("the API's take is not in the window's library")
	}
	// Two outputs (SGLang's num_outputs_per_prompt): one video, seed+1 for
	// the second, each output its own library take.
	two := 2
	b.Request.NumOutputsPerPrompt = &two
	b.Request.Prompt = "Two outputs."
	v, err = c.Create(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	if v, err = c.Wait(ctx, v.ID, nil); err != nil || v.NumOutputs != 2 {
		t.Fatalf("two outputs: %+v %v", v, err)
	}
	get := func(path string) int {
		req, _ := http.NewRequestWithContext(ctx, "GET", api.Address()+path, nil)
		req.Header.Set("Authorization", "Bearer "+api.Token())
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	// The fake studio writes no MP4, so variants 0 and 1 are 404 as
	// "no video" — but variant 2 is out of range and the thumbnail exists.
	for q, want := range map[string]int{"?variant=thumbnail": 200, "?variant=2": 404} {
		if st := get("/videos/" + v.ID + "/content" + q); st != want {
			t.Errorf("content%s: %d, want %d", q, st, want)
		}
	}
	seeds := map[uint64]bool{}
	for _, tk := range s.Snapshot().Takes {
		if tk.Meta.Prompt == "Two outputs." {
			seeds[tk.Meta.Seed] = true
		}
	}
	if len(seeds) != 2 {
		t.Errorf("two outputs made takes with seeds %v", seeds)
	}
	if n := len(list().Data); n != 3 {
		t.Errorf("the list has %d videos, want 3 (the two outputs are one)", n)
	}
	if err := api.SetEnabled(false); err != nil || api.Enabled() {
		t.Fatal("the local API did not stop")
	}
	if _, err := c.Create(ctx, b); err == nil {
		t.Error("the API still answers after it was switched off")
	}
}
