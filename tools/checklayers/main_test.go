package main

import (
	"strings"
	"testing"
)

func pkg(path string, imports ...string) Package {
	return Package{ImportPath: path, Imports: imports, Module: &struct{ Path string }{"h3studio"}}
}

func TestCheckRules(t *testing.T) {
	bad := []Package{
		pkg("h3studio/engine/dit", "h3studio/engine/compute/cpu"),
		pkg("h3studio/engine/media", "fyne.io/fyne/v2"),
		pkg("h3studio/ui", "h3studio/engine/dit"),
		pkg("h3studio/engine/compute/cpu", "github.com/progrium/darwinkit/macos/metal"),
		{ImportPath: "h3studio/ui/widgets", CgoFiles: []string{"x.go"}, Module: &struct{ Path string }{"h3studio"}},
		pkg("h3studio/ui/studio", "fyne.io/fyne/v2/canvas"),
		pkg("h3studio/ui/studio/fakeengine", "h3studio/ui/widgets"),
	}
	got := Check(bad)
	if len(got) != len(bad) {
		t.Fatalf("want %d violations, got %d:\n%s", len(bad), len(got), strings.Join(got, "\n"))
	}
	good := []Package{
		pkg("h3studio/app", "h3studio/engine/compute/cpu", "fyne.io/fyne/v2"),
		pkg("h3studio/ui", "h3studio/engine", "h3studio/engine/media", "fyne.io/fyne/v2"),
		pkg("h3studio/darwin/mtl", "github.com/progrium/darwinkit/macos/metal"),
		pkg("h3studio/engine/compute/computetest", "h3studio/engine/compute/cpu"),
		pkg("h3studio/engine/dit", "h3studio/engine/compute"),
		pkg("h3studio/ui/studio", "h3studio/engine", "h3studio/engine/media", "github.com/fsnotify/fsnotify"),
	}
	if got := Check(good); len(got) != 0 {
		t.Fatalf("unexpected violations:\n%s", strings.Join(got, "\n"))
	}
}
