package ui

import (
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"h3studio/ui/studio/fakeengine"
)

type fakeLocalAPI struct{ on bool }

func (f *fakeLocalAPI) Enabled() bool            { return f.on }
func (f *fakeLocalAPI) SetEnabled(on bool) error { f.on = on; return nil }
func (f *fakeLocalAPI) Address() string          { return "http://127.0.0.1:8420/v1" }
func (f *fakeLocalAPI) Token() string            { return "h3s-token-shown" }

type fakeServer struct {
	url, token, kind, shared string
	on                       bool
}

func (f *fakeServer) Current() (string, string, string, bool) { return f.url, f.kind, f.shared, f.on }
func (f *fakeServer) Apply(url, token, kind, shared string, on bool) error {
	f.url, f.token, f.kind, f.shared, f.on = url, token, kind, shared, on
	return nil
}

// TestLocalAPIAndServerSettings: the Local API switch is off until
// ticked, then shows the address and the token; Run on server hands the
// typed server, token, kind and shared folder over when ticked.
func TestLocalAPIAndServerSettings(t *testing.T) {
	h := newHarness(t, fakeengine.Options{}, false)
	api := &fakeLocalAPI{}
	box := h.w.localAPISetting(api).(*fyne.Container)
	check := box.Objects[0].(*widget.Check)
	info := box.Objects[1].(*fyne.Container)
	if check.Checked || info.Visible() {
		t.Fatal("the local API shows as on before it was switched on")
	}
	test.Tap(check)
	token := info.Objects[1].(*widget.Entry)
	if !api.on || !info.Visible() || token.Text != "h3s-token-shown" {
		t.Errorf("after ticking: on %v, shown %v, token %q", api.on, info.Visible(), token.Text)
	}

	srv := &fakeServer{kind: "sglang"}
	sb := h.w.serverSetting(srv).(*fyne.Container)
	grid := sb.Objects[0].(*fyne.Container)
	test.Type(grid.Objects[0].(*widget.Entry), "http://gpu-box:30010")
	grid.Objects[1].(*widget.Select).SetSelected("H3 Studio")
	test.Type(sb.Objects[1].(*widget.Entry), "server-token")
	test.Type(sb.Objects[2].(*widget.Entry), "/Volumes/media=/data/minimax-h3")
	test.Tap(sb.Objects[3].(*widget.Check))
	if !srv.on || srv.url != "http://gpu-box:30010" || srv.token != "server-token" || srv.kind != "h3studio" || srv.shared != "/Volumes/media=/data/minimax-h3" {
		t.Errorf("Run on server applied %+v", srv)
	}
	if sb.Objects[1].(*widget.Entry).Text != "" {
		t.Error("the token stays in the entry after it was stored")
	}
}
