package resources

import (
	"bytes"
	"image/png"
	"strings"
	"testing"
)

func TestEmbedded(t *testing.T) {
	img, err := png.Decode(bytes.NewReader(Icon()))
	if err != nil || img.Bounds().Dx() != 1024 || img.Bounds().Dy() != 1024 {
		t.Fatalf("icon: %v %v", err, img.Bounds())
	}
	ts, err := Templates()
	if err != nil || len(ts) != 2 || ts[0].Name != "base" || ts[1].Name != "ref2va" {
		t.Fatalf("templates: %v %+v", err, ts)
	}
	if len(ts[0].Fields) != 3 || len(ts[1].Fields) != 6 {
		t.Errorf("template sections: base %d, ref2va %d", len(ts[0].Fields), len(ts[1].Fields))
	}
	for _, l := range []string{ts[0].FirstOnly, ts[0].LastOnly, ts[0].FirstLast} {
		if !strings.HasPrefix(l, "For the target video") && !strings.HasPrefix(l, "How the reference pictures align") {
			t.Errorf("alignment line %q", l)
		}
	}
	ex, err := Examples()
	if err != nil || len(ex) < 3 {
		t.Fatalf("examples: %v %d", err, len(ex))
	}
	for _, e := range ex {
		if e.Title == "" || e.Prompt == "" || (e.Task != "t2va" && e.Task != "fl2va" && e.Task != "ref2va") {
			t.Errorf("example %+v", e)
		}
	}
}
