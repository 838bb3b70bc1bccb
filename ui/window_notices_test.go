package ui

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2"

	"h3studio/ui/studio"
	"h3studio/ui/studio/fakeengine"
)

// TestWindowNoticesKeepLayout: notices appearing and going move none of the
// window's controls (they float over the viewer's top), and they are shown.
func TestWindowNoticesKeepLayout(t *testing.T) {
	h := newHarness(t, fakeengine.Options{}, false)
	// Dismiss the start's notices, so the first layout has none.
	for _, n := range h.s.Snapshot().Notices {
		h.s.Dismiss(n.ID)
	}
	h.settle(func(sn studio.Snapshot) bool { return len(sn.Notices) == 0 })
	controls := map[string]fyne.CanvasObject{
		"prompt": h.w.compose.prompt, "generate": h.w.compose.generate, "first slot": h.w.compose.first,
		"player": h.w.viewer.player, "progress": h.w.progress.content, "timeline": h.w.timeline.content,
		"library list": h.w.library.list, "status bar": h.w.status.content,
	}
	type place struct{ pos, size fyne.Position }
	layout := func() map[string]place {
		d := fyne.CurrentApp().Driver()
		m := map[string]place{}
		for name, o := range controls {
			m[name] = place{d.AbsolutePositionForObject(o), fyne.NewPos(o.Size().Width, o.Size().Height)}
		}
		return m
	}
	same := func(when string, want, got map[string]place) {
		t.Helper()
		for name, w := range want {
			if got[name] != w {
				t.Errorf("%s: %s moved from %v to %v", when, name, w, got[name])
			}
		}
	}
	h.w.win.Content().Refresh()
	before := layout()
	long := strings.Repeat("A notice long enough to wrap over several lines of the notice area. ", 6)
	h.s.Notify(studio.Warn, long)
	h.s.Notify(studio.Fail, "A second notice.")
	sn := h.settle(func(sn studio.Snapshot) bool { return len(sn.Notices) == 2 })
	h.w.win.Content().Refresh()
	same("with two notices", before, layout())
	// The notices are on screen, over the viewer, with their full text.
	nc := h.w.notices.content
	if len(nc.Objects) != 2 || nc.Size().Height < 60 || !strings.Contains(strings.Join(allText(nc), "\n"), "A second notice.") {
		t.Errorf("notices not shown: %d rows, %v tall, text %q", len(nc.Objects), nc.Size(), allText(nc))
	}
	vp := fyne.CurrentApp().Driver().AbsolutePositionForObject(h.w.viewer.content)
	if np := fyne.CurrentApp().Driver().AbsolutePositionForObject(nc); np != vp {
		t.Errorf("notices at %v, the viewer at %v", np, vp)
	}
	for _, n := range sn.Notices {
		h.s.Dismiss(n.ID)
	}
	h.settle(func(sn studio.Snapshot) bool { return len(sn.Notices) == 0 })
	h.w.win.Content().Refresh()
	same("after the notices went", before, layout())
}
